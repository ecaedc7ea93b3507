"""Preparing a whole batch at once (`preparation.prepare_columns`) against preparing page by page
(`dataset.prepare_page`, the reference): the same tasks, warnings and outcomes, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tore_engine.core.layout import LayoutSet, Page, PageColumns
from tore_engine.core.taxonomy import resolve_taxonomy
from tore_engine.engine.preparation import prepare_columns
from tore_engine.run.runner import (
    PageBatch,
    evaluate_batch,
    evaluate_task,
    prepare_page,
)

coordinate = st.floats(-30, 130, allow_nan=False)
box = st.tuples(st.sampled_from("abc"), coordinate, coordinate, st.floats(0, 60), st.floats(0, 60), st.none() | st.floats(0, 1))
page = st.tuples(st.sampled_from([(100, 80), (100.5, 79.2), (50, 40)]), st.lists(box, max_size=6))


def make_page(page_id: str, frame, boxes) -> Page:
    labels = [label for label, *_ in boxes]
    bboxes = np.array([[x, y, x + w, y + h] for _, x, y, w, h, _ in boxes], dtype=float).reshape(-1, 4)
    scores = [score for *_, score in boxes]
    has_scores = any(score is not None for score in scores)
    return Page(page_id, *frame, labels, bboxes, np.array([np.nan if s is None else s for s in scores]) if has_scores else None)


@settings(max_examples=200, deadline=None)
@given(st.lists(page, min_size=1, max_size=6), st.lists(st.booleans(), min_size=6, max_size=6), st.lists(page, min_size=6, max_size=6),
       st.sampled_from(["single", "dual"]), st.none() | st.floats(0, 1))
def test_batch_preparation_equals_page_by_page(references, predicted, predictions, mode, min_score):
    reference_pages = [make_page(f"p{k}", frame, boxes) for k, (frame, boxes) in enumerate(references)]
    prediction_pages = [make_page(f"p{k}", frame, boxes) for k, ((frame, boxes), present) in enumerate(zip(predictions, predicted)) if present and k < len(references)]
    taxonomy = resolve_taxonomy(LayoutSet("gt", reference_pages), LayoutSet("m", prediction_pages), mode)
    reference_columns, prediction_columns = PageColumns.from_pages(reference_pages), PageColumns.from_pages(prediction_pages)
    position = {p.id: k for k, p in enumerate(prediction_pages)}
    matched = np.array([position.get(p.id, -1) for p in reference_pages], dtype=np.int64)

    if min_score is None:
        prepared = prepare_columns(reference_columns, prediction_columns, matched, taxonomy)
        one_by_one = [prepare_page(r, prediction_pages[j] if j >= 0 else None, taxonomy) for r, j in zip(reference_pages, matched.tolist())]
        assert prepared.warnings == [w for _, warnings in one_by_one for w in warnings]
        for batch_task, (page_task, _) in zip(prepared.tasks(), one_by_one):
            assert (batch_task.page_id, batch_task.width, batch_task.height) == (page_task.page_id, page_task.width, page_task.height)
            for a, b in ((batch_task.reference_classes, page_task.reference_classes), (batch_task.prediction_classes, page_task.prediction_classes)):
                assert a.tolist() == b.tolist()
            for side in ("reference_extents", "prediction_extents"):
                for field in ("col0", "col1", "row0", "row1", "paints", "clipped"):
                    assert getattr(getattr(batch_task, side), field).tolist() == getattr(getattr(page_task, side), field).tolist()

    outcome = evaluate_task(PageBatch(reference_columns, prediction_columns, matched, min_score), taxonomy)
    reference_outcome = _page_by_page(reference_pages, prediction_pages, matched, taxonomy, min_score)
    assert outcome.warnings == reference_outcome.warnings
    for field in ("denominator", "row", "column", "numerator"):
        assert getattr(outcome.counts, field).tolist() == getattr(reference_outcome.counts, field).tolist()
    for field in ("pixels", "bounds", "cells", "values", "reduced"):
        assert getattr(outcome, field).tolist() == getattr(reference_outcome, field).tolist()


def _page_by_page(reference_pages, prediction_pages, matched, taxonomy, min_score):
    """The old per-page way: drop low scores page by page (`Page.above_score`), then `evaluate_batch`."""
    from dataclasses import replace

    from tore_engine.core.errors import InputWarning

    pairs, score_warnings, kept = [], [], []
    for reference, j in zip(reference_pages, matched.tolist()):
        prediction = prediction_pages[j] if j >= 0 else None
        indices = {}
        if min_score is not None:
            for side, current in (("reference", reference), ("prediction", prediction)):
                if current is None:
                    continue
                filtered, kept_indices = current.above_score(min_score)
                if kept_indices is not None:
                    score_warnings.append(InputWarning(reference.id, None, side, f"{current.box_count - filtered.box_count} boxes scored below {min_score} dropped (minimum score)"))
                    indices[side] = kept_indices
                reference, prediction = (filtered, prediction) if side == "reference" else (reference, filtered)
        pairs.append((reference, prediction))
        kept.append(indices)
    outcome = evaluate_batch(pairs, taxonomy)
    by_page = {page.id: k for k, page in enumerate(reference_pages)}
    warnings = [
        replace(w, box=int(kept[by_page[w.page]][w.side][w.box])) if w.box is not None and w.side in kept[by_page[w.page]] else w
        for w in outcome.warnings
    ]
    return replace(outcome, warnings=score_warnings + warnings)


def test_a_frame_of_5e_324_scales_to_infinity_without_a_numpy_warning():
    """10 / 5e-324 is past float64's range: the scaled coordinate is infinity (docs/algorithm.md#pages
    float64 arithmetic), clipped at the page's edge and warned about as a clipped box; NumPy's own
    RuntimeWarning on stderr is no part of it (a warning is an error here)."""
    reference = Page("p", 10, 10, ["a"], np.array([[0.0, 0.0, 1.0, 1.0]]))
    prediction = Page("p", 5e-324, 10, ["a"], np.array([[0.0, 0.0, 1.0, 1.0]]))
    taxonomy = resolve_taxonomy(LayoutSet("gt", [reference]), LayoutSet("m", [prediction]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prepared = prepare_columns(PageColumns.from_pages([reference]), PageColumns.from_pages([prediction]), np.array([0]), taxonomy)
        task, page_warnings = prepare_page(reference, prediction, taxonomy)
    assert [w.message for w in prepared.warnings] == [w.message for w in page_warnings] == [
        "box clipped at the edge of the 10 x 10 page: bbox [0.0, 0.0, inf, 1.0]"]
    extents = task.prediction_extents
    assert (extents.col0.tolist(), extents.col1.tolist(), extents.row0.tolist(), extents.row1.tolist()) == ([0], [10], [0], [1])
    assert prepared.tasks()[0].prediction_extents.col1.tolist() == [10]
