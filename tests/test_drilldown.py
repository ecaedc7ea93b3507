"""Cells of the full, trimmed and reduced views back to their pages, on pages counted by hand."""

import pytest

from tore_engine.dataset import evaluate_dataset
from tore_engine.drilldown import pages_for_view_cell, top_confusions, view_matrices
from tore_engine.formats.native import from_document as from_native


def _layout(name, pages):
    return from_native({"name": name, "pages": [{"id": pid, "width": 10, "height": 10, "boxes": boxes} for pid, boxes in pages]}, name)


@pytest.fixture
def evaluation():
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [{"label": "Text", "bbox": [0, 0, 2, 2]}])])
    # p1: 10 Text pixels predicted as Background; p2: 4 Text pixels missed and 9 Background pixels called Text
    prediction = _layout("model", [("p1", []), ("p2", [{"label": "Text", "bbox": [5, 5, 8, 8]}])])
    return evaluate_dataset(reference, prediction)


def test_reduced_cells_rank_pages_by_their_own_pixels(evaluation):
    assert pages_for_view_cell(evaluation, "reduced", "Foreground", "Background") == [("p1", 10.0, 10 / 14), ("p2", 4.0, 4 / 14)]
    assert pages_for_view_cell(evaluation, "reduced", "Background", "Foreground") == [("p2", 9.0, 1.0)]
    assert pages_for_view_cell(evaluation, "reduced", "Foreground", "Foreground") == []
    assert pages_for_view_cell(evaluation, "reduced", "Foreground", "Background", limit=1) == [("p1", 10.0, 10 / 14)]


def test_full_and_trimmed_cells_are_cells_of_the_full_matrix(evaluation):
    expected = [("p1", 10.0, 10 / 14), ("p2", 4.0, 4 / 14)]
    assert pages_for_view_cell(evaluation, "full", "Text", "Background") == expected
    assert pages_for_view_cell(evaluation, "trimmed", "Text", "Background") == expected
    assert pages_for_view_cell(evaluation, "full", "Background", "Text") == [("p2", 9.0, 1.0)]


def test_views(evaluation):
    assert view_matrices(evaluation.matrices, "reduced").rows == ["Background", "Foreground"]
    assert view_matrices(evaluation.matrices, "trimmed").rows == ["Background", "Text"]
    with pytest.raises(ValueError):
        view_matrices(evaluation.matrices, "diagonal")


def test_top_confusions_skip_the_diagonal_and_zeros(evaluation):
    full = evaluation.matrices.full  # Text -> Background 14 px, Background -> Text 9 px
    assert top_confusions(full) == [("Text", "Background", 14.0, 14 / 14, 14 / (14 + 177)), ("Background", "Text", 9.0, 9 / (177 + 9), 9 / 9)]
    assert top_confusions(full, count=1)[0][:2] == ("Text", "Background")


# --- from a cell and a page to the pixels behind it -------------------------------------------------

from fractions import Fraction  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from tests.brute_force import contribution, pixel_sets  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tore_engine.algorithm1 import contributions  # noqa: E402
from tore_engine.dataset import prepare_page  # noqa: E402
from tore_engine.drilldown import page_regions  # noqa: E402
from tore_engine.formats.native import read as read_native  # noqa: E402
from tore_engine.raster import label_sets, pair_table  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "tore_engine" / "demo" / "data"


def exact_page_matrix(reference, prediction, taxonomy) -> dict[tuple[int, int], Fraction]:
    """One page's exact matrix through the production pair table (packed, banded painting)."""
    task, _ = prepare_page(reference, prediction, taxonomy)
    table = pair_table(task.width, task.height, (task.reference_classes, task.reference_extents),
                       (task.prediction_classes, task.prediction_extents), taxonomy.size)
    counts = contributions(label_sets(table.reference_codes, taxonomy.size), label_sets(table.prediction_codes, taxonomy.size), table.pixels)
    exact: dict[tuple[int, int], Fraction] = {}
    for d, i, j, n in zip(counts.denominator.tolist(), counts.row.tolist(), counts.column.tolist(), counts.numerator.tolist()):
        exact[i, j] = exact.get((i, j), Fraction(0)) + Fraction(n, d)
    return exact


@pytest.mark.parametrize("model", ["model_a.json", "model_b.json"])
def test_regions_sum_to_each_pages_contribution_on_the_whole_demo(model):
    reference, prediction = read_native(DEMO / "reference.json"), read_native(DEMO / model)
    evaluation = evaluate_dataset(reference, prediction)
    taxonomy, classes = evaluation.taxonomy, evaluation.taxonomy.classes
    predictions = {page.id: page for page in prediction.pages}
    for index, page in enumerate(reference.pages):
        exact = exact_page_matrix(page, predictions.get(page.id), taxonomy)
        floats = evaluation.page_matrix(index)
        for (i, j), value in exact.items():
            regions = page_regions(page, predictions.get(page.id), taxonomy, "full", classes[i], classes[j])
            assert regions.contribution() == value
            assert float(value) == pytest.approx(floats[i, j], rel=1e-15, abs=0)
        for row in REDUCED:
            for column in REDUCED:
                regions = page_regions(page, predictions.get(page.id), taxonomy, "reduced", row, column)
                assert regions.contribution() == int(evaluation.page_reduced[index, REDUCED.index(row), REDUCED.index(column)])


REDUCED = ["Background", "Foreground"]
small_boxes = st.lists(
    st.tuples(st.integers(0, 2), st.floats(-2, 14), st.floats(-2, 10), st.floats(0, 9), st.floats(0, 7)), max_size=5
)


def _boxes(drawn):
    return [{"label": "abc"[k], "bbox": [x, y, x + w, y + h]} for k, x, y, w, h in drawn]


@settings(max_examples=60, deadline=None)
@given(small_boxes, small_boxes, st.booleans())
def test_every_pixels_share_equals_the_brute_force_contribution(reference_boxes, prediction_boxes, dual):
    reference = from_native({"name": "gt", "pages": [{"id": "p", "width": 12, "height": 8, "boxes": _boxes(reference_boxes)}]}, "gt")
    prediction = from_native({"name": "m", "pages": [{"id": "p", "width": 12, "height": 8, "boxes": _boxes(prediction_boxes)}]}, "m")
    evaluation = evaluate_dataset(reference, prediction, taxonomy="dual" if dual else "single")
    taxonomy = evaluation.taxonomy
    index = {label: k for k, label in enumerate(taxonomy.classes)}
    truth = pixel_sets(12, 8, [(taxonomy.reference_index[label], box) for label, box in zip(reference.pages[0].labels, reference.pages[0].bboxes.tolist())])
    predicted = pixel_sets(12, 8, [(taxonomy.prediction_index[label], box) for label, box in zip(prediction.pages[0].labels, prediction.pages[0].bboxes.tolist())])
    for row in taxonomy.classes:
        for column in taxonomy.classes:
            regions = page_regions(reference.pages[0], prediction.pages[0], taxonomy, "full", row, column)
            shares = np.zeros((8, 12), dtype=object)
            for x0, x1, y0, y1, n, d in zip(regions.x0, regions.x1, regions.y0, regions.y1, regions.numerators, regions.denominators):
                shares[y0:y1, x0:x1] = Fraction(int(n), int(d))
            for y in range(8):
                for x in range(12):
                    expected = contribution(truth[y][x], predicted[y][x]).get((index[row], index[column]), Fraction(0))
                    assert shares[y, x] == expected
