"""B minus A (tore_engine.results.comparison) on matrices and per-class scores, and two evaluations compared: the
view they share, the pages of a cell or of a reference class's outcome (DataFrames with ASCII
columns), unknown classes named, on pages counted by hand and on the demo."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from tests.helpers import small_layout as _layout
from tore_engine.formats.native import from_document as from_native
from tore_engine.metrics.matrices import MatrixSet
from tore_engine.results.comparison import (
    OUTCOMES,
    Comparison,
    comparable,
    compare,
    matrix_difference,
    outcome_cell,
    reference_class_outcomes,
)
from tore_engine.run.runner import evaluate_dataset


def _matrices(rows, confusion):
    confusion = np.array(confusion, dtype=float)
    recall = confusion / confusion.sum(axis=1, keepdims=True)
    precision = confusion / confusion.sum(axis=0, keepdims=True)
    return MatrixSet(rows, rows, confusion, recall, precision)


def test_difference_is_b_minus_a_cell_by_cell():
    a = _matrices(["Background", "Text"], [[3, 1], [1, 3]])
    b = _matrices(["Background", "Text"], [[4, 0], [2, 2]])
    difference = matrix_difference(a, b)
    assert difference.confusion.tolist() == [[1, -1], [1, -1]]
    assert difference.recall.tolist() == [[0.25, -0.25], [0.25, -0.25]]
    assert difference.precision[1, 1] == pytest.approx(1.0 - 0.75)


def test_matrices_with_other_classes_are_not_comparable():
    a = _matrices(["Background", "Text"], [[1, 1], [1, 1]])
    b = _matrices(["Background", "text"], [[1, 1], [1, 1]])
    assert not comparable(a, b)
    with pytest.raises(ValueError):
        matrix_difference(a, b)


def test_page_deltas_follow_a_and_skip_pages_b_lacks():
    # a page's reduced matrix [[Background->Background, ->Foreground], [Foreground->Background, ->Foreground]] by its F1
    reduced = {0.0: [[0, 1], [1, 0]], 0.25: [[0, 3], [3, 1]], 0.5: [[0, 1], [1, 1]], 0.75: [[0, 1], [1, 3]], 1.0: [[0, 0], [0, 1]]}

    def pages(f1: dict[str, float]) -> SimpleNamespace:
        return SimpleNamespace(page_ids=list(f1), page_reduced=np.array([reduced[value] for value in f1.values()], dtype=np.int64))

    deltas = Comparison(pages({"p1": 0.5, "p2": 1.0, "p3": 0.0}), pages({"p2": 0.25, "p1": 0.75})).pages
    assert deltas.reset_index().to_dict("records") == [
        {"page": "p1", "f1_a": 0.5, "f1_b": 0.75, "b_minus_a": 0.25},
        {"page": "p2", "f1_a": 1.0, "f1_b": 0.25, "b_minus_a": -0.75},
    ]
    same = Comparison(pages({"p1": 0.5, "p2": 1.0}), pages({"p1": 0.75, "p2": 0.25})).pages  # the same pages: no join
    assert same.reset_index().to_dict("records") == deltas.reset_index().to_dict("records")


def test_page_deltas_are_pages_csvs_f1(demo_a, demo_b):
    a, b = demo_a, demo_b
    deltas = compare(a, b).pages
    assert deltas["f1_a"].tolist() == a.pages["foreground_f1"].tolist() and deltas["f1_b"].tolist() == b.pages["foreground_f1"].tolist()


# --- two evaluations: the view they share, cell and outcome pages ----------------------------------


def test_a_single_and_a_dual_model_differ_on_the_reduced_view(demo_a, demo_b):
    comparison = compare(demo_a, demo_b)
    assert comparison.difference_view("trimmed") == comparison.difference_view("full") == "reduced"
    assert comparison.difference("trimmed").recall.index.tolist() == ["Background", "Foreground"]
    pages = comparison.pages_for_cell("Foreground", "Background")
    assert list(pages.columns) == ["page", "pixels_a", "pixels_b", "b_minus_a"]
    assert pages["pixels_a"].sum() == demo_a.matrices.reduced.confusion[1, 0]
    assert pages["pixels_b"].sum() == demo_b.matrices.reduced.confusion[1, 0]
    assert pages["b_minus_a"].abs().is_monotonic_decreasing
    with pytest.raises(KeyError, match="'Text' is no reference \\(row\\) class of the reduced difference; those are 'Background', 'Foreground'"):
        comparison.pages_for_cell("Text", "Background")


def test_two_trimmed_single_matrices_differ_on_the_union_of_their_classes(small):
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [{"label": "Title", "bbox": [0, 0, 2, 2]}])])
    other = evaluate_dataset(reference, _layout("model", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [])]))
    comparison = compare(small, other)
    assert comparison.difference_view("trimmed") == "trimmed" and comparison.difference_view("full") == "full"
    difference = comparison.difference("trimmed").confusion
    assert difference.index.tolist() == difference.columns.tolist() == ["Background", "Text", "Title"]
    assert difference.loc["Text", "Text"] == 10.0  # Text right in B, nowhere in A
    assert comparison.pages_for_cell("Text", "Title").to_dict("records") == [{"page": "p1", "pixels_a": 6.0, "pixels_b": 0.0, "b_minus_a": -6.0}]


def test_outcome_pages_sum_to_the_per_class_outcomes(demo_a, demo_b):
    comparison = compare(demo_a, demo_b)
    support = {label: demo_a.matrices.full.confusion[index].sum() for label, index in demo_a.taxonomy.reference_index.items()}
    outcomes_a, outcomes_b = reference_class_outcomes(demo_a), reference_class_outcomes(demo_b)
    for outcome in OUTCOMES:
        pages = comparison.pages_for_outcome("Text", outcome)
        assert pages["pixels_a"].sum() / support["Text"] == pytest.approx(outcomes_a["Text"][outcome])
        assert pages["pixels_b"].sum() / support["Text"] == pytest.approx(outcomes_b["Text"][outcome])
    with pytest.raises(KeyError, match="'Txt' is no reference class; those are 'Caption', "):
        comparison.pages_for_outcome("Txt", "own class")
    with pytest.raises(ValueError, match="unknown outcome 'nowhere'"):
        comparison.pages_for_outcome("Text", "nowhere")


def test_outcome_cells(demo_a, demo_b):
    assert outcome_cell(demo_a, "Text", "Background") == ("Text", "Background")
    assert outcome_cell(demo_a, "Text", "own class") == ("Text", "Text")
    assert outcome_cell(demo_a, "Text", "elsewhere") is None
    row = demo_b.matrices.classes[demo_b.taxonomy.reference_index["Text"]]
    assert outcome_cell(demo_b, "Text", "Background") == (row, "Background")
    assert outcome_cell(demo_b, "Text", "own class") == (row, demo_b.matrices.classes[demo_b.taxonomy.prediction_index["text"]])
    assert outcome_cell(demo_b, "Caption", "own class") is None  # model B has no caption class
    with pytest.raises(ValueError):
        outcome_cell(demo_a, "Text", "nowhere")


def test_per_class_columns_are_ascii_snake_case(demo_a, demo_b):
    shares = compare(demo_a, demo_b).per_class
    assert shares.index.name == "class" and all(column.isascii() for column in shares.columns)
    assert list(shares.columns) == [f"{outcome}_{model}" for model in ("a", "b", "b_minus_a") for outcome in ("background", "own_class", "elsewhere")]
    outcomes_a, outcomes_b = reference_class_outcomes(demo_a), reference_class_outcomes(demo_b)
    assert shares.loc["Text", "own_class_a"] == outcomes_a["Text"]["own class"]
    assert shares.loc["Text", "elsewhere_b_minus_a"] == outcomes_b["Text"]["elsewhere"] - outcomes_a["Text"]["elsewhere"]


def test_per_class_of_two_evaluations_without_shared_support_is_an_empty_table_with_its_columns():
    reference = _layout("gt", [("p1", []), ("p2", [])])
    empty = evaluate_dataset(reference, _layout("model", [("p1", []), ("p2", [])]))
    shares = compare(empty, empty).per_class
    assert shares.empty and list(shares.columns)[:3] == ["background_a", "own_class_a", "elsewhere_a"]


# --- two runs of one detector: aligned by their own labels (issue 24) ------------------------------


def _detector(name: str, boxes: list[dict], vocabulary: str | None = None):
    """One run of a detector that declares its classes (figure, text, title) or a vocabulary."""
    layout = from_native({"name": name, "taxonomy": None if vocabulary else ["figure", "text", "title"],
                          "pages": [{"id": "p1", "width": 10, "height": 10, "boxes": boxes}]}, name)
    return replace(layout, vocabulary=vocabulary)


REFERENCE = [("p1", [{"label": "Text", "bbox": [0, 0, 6, 2]}, {"label": "Title", "bbox": [0, 3, 4, 5]}])]
STRICT = [{"label": "text", "bbox": [0, 0, 6, 2]}, {"label": "figure", "bbox": [5, 3, 6, 5]}]
LENIENT = [{"label": "text", "bbox": [0, 0, 3, 2]}, {"label": "title", "bbox": [0, 3, 4, 5]}, {"label": "figure", "bbox": [5, 3, 6, 5]}]


@pytest.mark.parametrize("vocabulary", [None, "docling"])
def test_two_runs_of_one_detector_are_subtracted_by_their_own_labels(vocabulary):
    """Two thresholds of one detector (one declared class list, or one vocabulary) against a
    reference of other classes: both dual, prefixed cdla_ and cdla015_, yet their difference is
    cell by cell, by the models' own labels."""
    reference = _layout("gt", REFERENCE)
    a, b = (evaluate_dataset(reference, _detector(name, boxes, vocabulary)) for name, boxes in (("cdla", STRICT), ("cdla015", LENIENT)))
    assert a.matrices.mode == b.matrices.mode == "dual" and a.classes != b.classes
    comparison = compare(a, b)
    assert comparison.aligned("full") and comparison.difference_view("full") == "full"
    difference = comparison.difference("full").confusion
    assert difference.index.tolist() == ["Background", "gt_Text", "gt_Title"]
    own_title = "cdla_title" if vocabulary is None else "cdla015_title"  # A's names, then B's for a label A never used
    assert difference.columns.tolist() == ["Background", "cdla_figure", "cdla_text", own_title]
    for row_label, row in (("Text", "gt_Text"), ("Title", "gt_Title")):
        for column_label, column in (("figure", "cdla_figure"), ("text", "cdla_text"), ("title", own_title)):
            expected = sum(sign * evaluation.matrices.full.confusion[evaluation.taxonomy.reference_index[row_label],
                                                                     evaluation.taxonomy.prediction_index[column_label]]
                           for sign, evaluation in ((-1, a), (1, b)) if column_label in evaluation.taxonomy.prediction_index)
            assert difference.loc[row, column] == expected
    assert difference.loc["gt_Text", "cdla_text"] == 6 - 12 and difference.loc["gt_Title", own_title] == 8
    assert comparison.model_cell("b", "full", "gt_Text", "cdla_text") == ("gt_Text", "cdla015_text")
    pages = comparison.pages_for_cell("gt_Title", own_title, view="full")
    assert pages.to_dict("records") == [{"page": "p1", "pixels_a": 0.0, "pixels_b": 8.0, "b_minus_a": 8.0}]
    assert comparison.difference("trimmed").confusion.columns.tolist() == ["Background", "cdla_figure", "cdla_text", own_title]


def test_a_label_one_run_never_used_is_none_of_its_cells():
    reference = _layout("gt", REFERENCE)
    a, b = (evaluate_dataset(reference, _detector(name, boxes, "docling")) for name, boxes in (("cdla", STRICT), ("cdla015", LENIENT)))
    assert compare(a, b).model_cell("a", "full", "gt_Title", "cdla015_title") is None


def test_models_of_other_vocabularies_are_not_aligned(demo_a, demo_b):
    assert not compare(demo_a, demo_b).aligned("full") and compare(demo_a, demo_b).difference_view("full") == "reduced"
