"""The result of an evaluation (tore_engine.results.evaluation): its DataFrames hold the matrices' numbers;
dual mode has no per-class rows; an unknown class is a KeyError naming the valid ones; `plot` takes
a kind or a normalisation (never two that disagree) and a class subset; `summary` is what
`tore evaluate` prints; what a matrix view shows (class subsets, the "all" normalisation); two
evaluations of disjoint pages merged are bit for bit one evaluation of all of them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tore_engine as tore
from tests.helpers import DEMO, load_vector, write_json
from tests.helpers import small_layout as _layout
from tore_engine.cli import main
from tore_engine.plots.heatmaps import LABEL_LIMIT
from tore_engine.plots.plain_text import shortened
from tore_engine.results.evaluation import MatrixFrames, plot_kind, shown_matrices


def test_dataframes_hold_the_matrices_numbers(demo_a):
    a = demo_a
    matrices = a.matrices
    assert a.classes == matrices.classes and a.classes[0] == "Background"
    for frame, values in ((a.confusion, matrices.full.confusion), (a.recall, matrices.full.recall), (a.precision, matrices.full.precision)):
        assert list(frame.index) == list(frame.columns) == a.classes
        assert np.array_equal(frame.to_numpy(), values)
    assert np.array_equal(a.trimmed.recall.to_numpy(), matrices.trimmed.recall)
    assert list(a.reduced.precision.index) == ["Background", "Foreground"]
    report = a.to_json()
    assert a.per_class[["recall", "precision", "f1"]].to_dict("index") == report["per_class"]
    support = a.confusion.sum(axis=1)
    assert np.allclose(a.per_class["support"], support.loc[a.per_class.index], rtol=1e-12)
    assert a.pages.index.tolist() == a.page_ids and a.pages["pixels"].tolist() == a.page_pixels.tolist()


def test_dual_mode_has_no_per_class_rows(demo_b):
    per_class = demo_b.per_class
    assert demo_b.matrices.mode == "dual" and demo_b.to_json()["per_class"] is None
    assert isinstance(per_class, pd.DataFrame) and per_class.empty
    assert per_class.index.name == "class" and list(per_class.columns) == ["recall", "precision", "f1", "support"]


def test_matrix_frames_are_typed_dataframes_with_a_one_line_repr(demo_a):
    trimmed = demo_a.trimmed
    assert isinstance(trimmed, MatrixFrames) and all(isinstance(frame, pd.DataFrame) for frame in (trimmed.confusion, trimmed.recall, trimmed.precision))
    rows, columns = trimmed.confusion.shape
    assert repr(trimmed) == f"MatrixFrames({rows} reference x {columns} predicted classes: .confusion, .recall, .precision)"


def test_an_unknown_class_is_a_key_error_naming_the_views_classes(demo_a):
    with pytest.raises(KeyError, match="'Txt' is no reference \\(row\\) class of the full view; those are 'Background', 'Caption', "):
        demo_a.pages_for_cell("Txt", "Table")
    with pytest.raises(KeyError, match="'Text' is no predicted \\(column\\) class of the reduced view; those are 'Background', 'Foreground'"):
        demo_a.pages_for_cell("Foreground", "Text", view="reduced")


def test_shown_matrices_keep_values_and_add_the_share_of_the_total(small):
    whole = shown_matrices(small.matrices, "full")
    assert whole.share.sum() == pytest.approx(1.0) and whole.share[0, 0] == pytest.approx((90 + 91) / 200)
    subset = shown_matrices(small.matrices, "full", ["Text", "Title"])
    assert subset.rows == subset.columns == ["Text", "Title"]
    assert subset.recall.tolist() == [[0.0, 0.6], [0.0, 1.0]]  # still over the whole Text row: 4 of 10 went to Background
    assert subset.share.tolist() == [[0.0, 6 / 200], [0.0, 4 / 200]]
    hidden = shown_matrices(small.matrices, "trimmed", hide_background=True)
    assert hidden.rows == ["Text", "Title"] and hidden.columns == ["Text", "Title"]
    assert shown_matrices(small.matrices, "reduced", hide_background=True).rows == ["Foreground"]


@pytest.mark.parametrize(("kind", "normalize", "shown"), [
    ("confusion", None, "confusion"), ("confusion", "row", "recall"), ("confusion", "column", "precision"), ("confusion", "all", "share"),
    ("recall", None, "recall"), ("recall", "row", "recall"), ("precision", "column", "precision"), ("share", "all", "share"),
])
def test_a_kind_and_a_normalisation_name_one_matrix(kind, normalize, shown):
    assert plot_kind(kind, normalize) == shown


@pytest.mark.parametrize(("kind", "normalize", "message"), [
    ("recall", "column", "kind 'recall' and normalize='column' \\(which gives precision\\) contradict each other"),
    ("share", "row", "contradict each other"),
    ("precision", "all", "contradict each other"),
    ("f1", None, "unknown kind 'f1'"),
    ("confusion", "true", "unknown normalize 'true'"),
])
def test_a_kind_and_a_normalisation_that_disagree_are_refused(kind, normalize, message):
    with pytest.raises(ValueError, match=message):
        plot_kind(kind, normalize)


def _shown_values(figure) -> np.ndarray:
    """The values a heatmap shows, from the hover markers (one per cell, row by row)."""
    rows, columns = len(figure.layout.yaxis.ticktext), len(figure.layout.xaxis.ticktext)
    return np.asarray(figure.data[1].customdata)[:, 0].reshape(rows, columns)


def test_plot_draws_the_chosen_matrix_of_a_class_subset(small, demo_b):
    pytest.importorskip("plotly")
    figure = small.plot(normalize="row", classes=["Text", "Title"])
    assert list(figure.layout.yaxis.ticktext) == list(figure.layout.xaxis.ticktext) == ["Text", "Title"]
    assert _shown_values(figure).tolist() == [[0.0, 0.6], [0.0, 1.0]]  # 0.6 of the whole Text row
    assert figure.layout.title.text == "recall, full view"
    share = small.plot("share", view="reduced")
    assert np.allclose(_shown_values(share), small.matrices.reduced.confusion / 200)
    trimmed = demo_b.plot()  # dual mode: the trimmed view, long names shortened in the middle (whole in meta and on hover)
    assert trimmed.layout.meta["rows"] == demo_b.matrices.trimmed.rows
    assert list(trimmed.layout.yaxis.ticktext) == [shortened(name, LABEL_LIMIT) for name in demo_b.matrices.trimmed.rows]
    with pytest.raises(KeyError, match="'Txt' is no class of the full view; those are 'Background', 'Text', 'Title'"):
        small.plot("recall", classes=["Text", "Txt"])
    with pytest.raises(KeyError, match="'Text' is no class of the reduced view"):
        small.plot(view="reduced", classes=["Text"])
    with pytest.raises(TypeError, match="a list of class names"):
        small.plot(classes="Text")
    with pytest.raises(ValueError, match="contradict"):
        small.plot("recall", normalize="column")


def test_summary_is_what_tore_evaluate_prints(tmp_path, capsys, demo_a):
    out = tmp_path / "out"
    assert main(["evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    summary, _, hint = printed.out.rstrip("\n").rpartition("\n")  # and last, the command that opens the run in the app
    assert summary == demo_a.summary(out) and printed.err == ""
    assert demo_a.summary(out).startswith("TORE, single taxonomy: ") and hint.startswith("Open it in TORE Studio: ")


# --- merging evaluations of disjoint pages ------------------------------------------------------------


def _document(pages: list[dict], name: str, ids: list[str] | None = None, **extra) -> dict:
    return {"name": name, **extra, "pages": [page for page in pages if ids is None or page["id"] in ids]}


def _write_halves(tmp_path, reference: dict, prediction: dict, first: set[str], second: set[str]) -> list[tuple]:
    """The whole reference and prediction, and each half (its pages on both sides), as files."""
    written = []
    for name, ids in (("all", None), ("first", first), ("second", second)):
        sides = [write_json(tmp_path / f"{name}_{side}.json", _document(document["pages"], document["name"], ids and sorted(ids),
                                                                         **{k: v for k, v in document.items() if k not in ("name", "pages")}))
                 for side, document in (("gt", reference), ("model", prediction))]
        written.append(tuple(sides))
    return written


def _assert_the_same(merged, whole, tmp_path):
    merged.to_json(tmp_path / "merged.json")
    whole.to_json(tmp_path / "whole.json")
    assert (tmp_path / "merged.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    for name in ("page_pixels", "page_reduced", "contribution_offsets", "contribution_cell", "contribution_value"):
        mine, theirs = getattr(merged, name), getattr(whole, name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), name
    assert merged.pages.equals(whole.pages) and merged.warnings == whole.warnings and repr(merged) == repr(whole)
    assert merged.warning_groups == whole.warning_groups


@pytest.mark.filterwarnings("ignore::tore_engine.core.errors.ToreWarning")
@pytest.mark.parametrize("workers", [1, 2])
def test_two_halves_merged_are_one_evaluation_of_all_pages(tmp_path, workers):
    """The public vectors' 60 pages split in two (both sides by page), each half evaluated, merged:
    report.json's bytes, every page's contributions and the pages table are one evaluation's."""
    document = load_vector("tore_public_pages.json")
    ids = [page["id"] for page in document["reference"]["pages"]]
    (gt, model), *halves = _write_halves(tmp_path, document["reference"], document["prediction"], set(ids[:23]), set(ids[23:]))
    whole = tore.evaluate(gt, model, workers=workers)
    first, second = (tore.evaluate(*half, workers=workers) for half in halves)
    merged = first.merge(second)
    _assert_the_same(merged, whole, tmp_path)
    assert len(whole.warnings) == 33  # 32 clipped boxes and mAP's note on unscored boxes: from both halves, summed

    def decisions(evaluation, page: int) -> dict:  # TIDE's, made again from the page's boxes (NaN: no IoU)
        return {side: [(box.outcome, box.error, box.partner, None if np.isnan(box.iou) else box.iou) for box in boxes]
                for side, boxes in evaluation.page_decisions(page).items()}

    assert [decisions(merged, page) for page in range(len(ids))] == [decisions(whole, page) for page in range(len(ids))]
    assert any(box[0] == "fp" for page in range(len(ids)) for box in decisions(whole, page)["prediction"])
    assert merged.page_decisions(len(ids)) is None and merged.page_decisions(-1) is None


@pytest.mark.filterwarnings("ignore::tore_engine.core.errors.ToreWarning")
def test_merged_warnings_are_one_evaluations_group_by_group(tmp_path):
    """Every kind of warning on both halves: the label map's (a key one half uses is used by all
    pages), each reader's, prediction pages without reference, the pages' own, mAP's note."""
    def box(label, bbox, score=None):
        return {"label": label, "bbox": bbox, **({} if score is None else {"score": score})}

    reference = {"name": "gt", "pages": [
        {"id": "a1", "width": 10, "height": 10, "image": "/etc/passwd", "boxes": [box("Text", [0, 0, 12, 2]), box("Texte", [1, 3, 3, 5])]},
        {"id": "a2", "width": 10, "height": 10, "boxes": [box("Title", [0, 0, 5, 5])]},
        {"id": "b1", "width": 10, "height": 10, "image": "/etc/passwd", "boxes": [box("Text", [20, 20, 30, 30]), box("Title", [0, 0, 4, 4])]},
        {"id": "b2", "width": 10, "height": 10, "boxes": [box("Title", [0, 0, 5, 5])]},
    ]}
    prediction = {"name": "model", "pages": [
        {"id": "a1", "width": 10, "height": 10, "boxes": [box("Text", [0, 0, 5, 5], 0.1), box("Title", [0, 0, 2, 2], 0.9)]},
        {"id": "a2", "width": 10, "height": 10, "boxes": [box("Text", [0, 0, 5, 5])]},
        {"id": "xa", "width": 10, "height": 10, "boxes": [box("Text", [0, 0, 5, 5], 0.5)]},
        {"id": "b1", "width": 10, "height": 10, "boxes": [box("Text", [0, 0, 5, 5], 0.9), box("Title", [0, 0, 2, 2], 0.8)]},
        {"id": "xb", "width": 10, "height": 10, "boxes": [box("Title", [0, 0, 5, 5], 0.7)]},
    ]}
    (gt, model), *halves = _write_halves(tmp_path, reference, prediction, {"a1", "a2", "xa"}, {"b1", "b2", "xb"})
    options = {"label_map": {"Texte": "Text", "Tabel": "Table"}, "min_score": 0.5, "sweep": True}
    whole = tore.evaluate(gt, model, **options)
    first, second = (tore.evaluate(*half, **options) for half in halves)
    assert [w["message"] for w in second.warnings][:2] == [  # 'Texte' is a label of the first half only
        "label map key 'Texte' is no label of the reference or the prediction; it had no effect",
        "label map key 'Tabel' is no label of the reference or the prediction; it had no effect"]
    assert whole.warning_groups == (1, 2, 0, 2) and len(whole.warnings) == 10
    _assert_the_same(first.merge(second), whole, tmp_path)


@pytest.mark.filterwarnings("ignore::tore_engine.core.errors.ToreWarning")
def test_what_cannot_be_merged_is_a_value_error(tmp_path, small):
    both = [{"label": "Text", "bbox": [0, 0, 5, 2]}, {"label": "Title", "bbox": [0, 3, 2, 5]}]
    reference, prediction = _layout("gt", [("p3", both)]), _layout("model", [("p3", both)])
    other = tore.evaluate(reference, prediction)
    with pytest.raises(ValueError, match="both evaluations score the pages 'p1', 'p2'; merge evaluations of disjoint pages"):
        small.merge(small)
    with pytest.raises(ValueError, match="different taxonomies \\(single: 'Background', 'Text', 'Title'; dual: "):
        small.merge(tore.evaluate(reference, prediction, taxonomy="dual"))
    with pytest.raises(ValueError, match="other mAP settings, or one has no box to rank \\(coco; switched off"):
        small.merge(tore.evaluate(reference, prediction, map="off"))
    whole_prediction = _layout("model", [("p1", []), ("p2", []), ("p3", both)])
    with pytest.raises(ValueError, match="the prediction pages 'p1', 'p2' were evaluated without their reference page"):
        small.merge(tore.evaluate(reference, whole_prediction))
    assert small.merge(other).page_ids == ["p1", "p2", "p3"]


def test_maps_summary_is_made_once_when_two_threads_ask_at_once(monkeypatch):
    """The app's page index (a thread) and its script both read `Evaluation.map`: one summary is made,
    the other thread waits for it and gets the same report (Python 3.12's cached_property has no lock)."""
    import threading
    import time

    from tore_engine.metrics.map_report import MapState

    summary, made, both_asked = MapState.report, [], threading.Barrier(2)

    def counted(self, classes):
        made.append(threading.get_ident())
        time.sleep(0.2)  # the other thread asks meanwhile
        return summary(self, classes)

    monkeypatch.setattr(MapState, "report", counted)
    evaluation = tore.evaluate(DEMO / "reference.json", DEMO / "model_a.json")
    reports = []

    def ask():
        both_asked.wait(timeout=20)
        reports.append(evaluation.map)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(made) == 1 and len(reports) == 2 and reports[0] is reports[1]
    assert reports[0].figures["map"] == summary(evaluation.map_state, evaluation.matrices.classes).figures["map"]


def _docling_labels(folder) -> set[str]:
    """The labels of every item with a position in a folder of DoclingDocument JSON files, read raw."""
    import json

    return {item["label"] for path in sorted(folder.glob("*.json")) for items in json.loads(path.read_text()).values()
            if isinstance(items, list) for item in items if isinstance(item, dict) and item.get("prov") and "label" in item}


def test_classes_only_predicted_have_no_recall_rank_or_mean_in_the_docling_documents():
    """Issue 36 N3, as written: pre_heron against heron, where formula and list_item are only predicted."""
    from tests.helpers import shared_path

    folder = shared_path("data", "layouts", "docling_documents")
    only_predicted = sorted(_docling_labels(folder / "heron") - _docling_labels(folder / "pre_heron"))
    assert only_predicted == ["formula", "list_item"]
    evaluation = tore.evaluate(folder / "pre_heron", folder / "heron", format="docling", map="off")
    report = evaluation.to_json()
    for name in only_predicted:
        assert report["per_class"][name]["recall"] is None and report["per_class"][name]["precision"] == 0.0
        assert np.isnan(evaluation.per_class.loc[name, "recall"])
    assert report["means"]["present_classes"]["classes"] == len(report["per_class"]) - len(only_predicted)
    present = [scores["recall"] for name, scores in report["per_class"].items() if name not in only_predicted]
    assert report["means"]["present_classes"]["recall"] == pytest.approx(sum(present) / len(present), abs=1e-15)
    lines = evaluation.summary().splitlines()
    lowest = next(line for line in lines if line.startswith("Lowest F1: "))
    assert not any(name in lowest for name in only_predicted)
    assert f"Predicted only (no reference pixel: recall undefined, not ranked): {', '.join(only_predicted)}" in lines
