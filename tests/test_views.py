"""The engine's answers to the app's views: page cells, class subsets, the "all" normalisation,
per-page class pixels, the all-pages table, class pages, and the comparison's cell and outcome
pages, on pages counted by hand and on the demo."""

from pathlib import Path

import numpy as np
import pytest

from tore_engine.comparison import OUTCOMES, compare, outcome_cell, reference_class_outcomes
from tore_engine.dataset import evaluate_dataset
from tore_engine.drilldown import (
    cell_page_values, class_pages, page_cell, page_cells, page_class_pixels, pages_for_view_cell, pages_table, shown_matrices,
)
from tore_engine.formats import load_pair
from tore_engine.formats.native import from_document as from_native

DEMO = Path(__file__).resolve().parents[1] / "tore_engine" / "demo" / "data"


def _layout(name, pages):
    return from_native({"name": name, "pages": [{"id": pid, "width": 10, "height": 10, "boxes": boxes} for pid, boxes in pages]}, name)


@pytest.fixture(scope="module")
def small():
    """p1: Text [0,0,5,2] (10 px), 6 of them predicted as Title, 4 missed; p2: Title [0,0,2,2]
    (4 px) found, and 5 Background pixels called Text."""
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [{"label": "Title", "bbox": [0, 0, 2, 2]}])])
    prediction = _layout("model", [("p1", [{"label": "Title", "bbox": [0, 0, 3, 2]}]),
                                   ("p2", [{"label": "Title", "bbox": [0, 0, 2, 2]}, {"label": "Text", "bbox": [5, 5, 10, 6]}])])
    return evaluate_dataset(reference, prediction)


@pytest.fixture(scope="module")
def demo_a():
    return evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"))


@pytest.fixture(scope="module")
def demo_b():
    return evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_b.json"))


def test_page_cells_are_the_pages_matrix_largest_first(small):
    assert page_cells(small, "full", 0) == [("Background", "Background", 90.0, 90 / 181), ("Text", "Title", 6.0, 1.0),
                                            ("Text", "Background", 4.0, 1.0)]
    assert page_cell(small, "full", 1, "Background", "Text") == (5.0, 1.0)
    assert page_cell(small, "trimmed", 1, "Title", "Title") == (4.0, 1.0)
    assert page_cell(small, "full", 1, "Text", "Title") == (0.0, 0.0)
    assert page_cells(small, "reduced", 0) == [("Background", "Background", 90.0, 90 / 181), ("Foreground", "Foreground", 6.0, 6 / 10),
                                               ("Foreground", "Background", 4.0, 1.0)]


def test_cell_page_values_sum_to_the_cell(demo_a):
    classes = demo_a.matrices.classes
    values = cell_page_values(demo_a, "full", "Text", "Table")
    assert values.sum() == pytest.approx(demo_a.matrices.full.confusion[classes.index("Text"), classes.index("Table")])
    worst = int(np.argmax(values))
    assert (demo_a.page_ids[worst], values[worst]) == pages_for_view_cell(demo_a, "full", "Text", "Table")[0][:2]
    reduced = cell_page_values(demo_a, "reduced", "Foreground", "Background")
    assert reduced.sum() == demo_a.matrices.reduced.confusion[1, 0]


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


def test_page_class_pixels_are_row_and_column_sums_of_every_page(demo_b):
    reference, predicted = page_class_pixels(demo_b)
    for page in range(len(demo_b.page_ids)):
        matrix = demo_b.page_matrix(page)
        assert np.allclose(reference[page], matrix.sum(axis=1)) and np.allclose(predicted[page], matrix.sum(axis=0))


def test_pages_table_has_one_row_a_page_with_each_sides_class_pixels(small):
    table = pages_table(small)
    assert table.columns.tolist() == ["page", "pixels", "foreground recall", "foreground precision", "foreground F1", "warnings",
                                      "Text (ref)", "Title (ref)", "Text (pred)", "Title (pred)"]
    assert table["Text (ref)"].tolist() == [10.0, 0.0] and table["Text (pred)"].tolist() == [0.0, 5.0]
    assert table["Title (pred)"].tolist() == [6.0, 4.0] and table["warnings"].tolist() == [0, 0]
    assert table["foreground recall"].tolist() == [0.6, 1.0]


def test_pages_table_counts_each_pages_warnings(tmp_path):
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 50, 2]}]), ("p2", [])])  # wider than the page
    table = pages_table(evaluate_dataset(reference, _layout("model", [("p1", []), ("p2", [])])))
    assert table["warnings"].tolist() == [1, 0]


def test_class_pages_rank_pages_by_wrong_pixels(small):
    assert class_pages(small, "Title") == [("p1", 0.0, 6.0, 0.0), ("p2", 4.0, 4.0, 4.0)]
    assert class_pages(small, "Text") == [("p1", 10.0, 0.0, 0.0), ("p2", 0.0, 5.0, 0.0)]


def test_a_single_and_a_dual_model_differ_on_the_reduced_view(demo_a, demo_b):
    comparison = compare(demo_a, demo_b)
    assert comparison.difference_view("trimmed") == comparison.difference_view("full") == "reduced"
    assert comparison.difference("trimmed").rows == ["Background", "Foreground"]
    pages = comparison.cell_pages("trimmed", "Foreground", "Background")
    assert sum(row["A"] for row in pages) == demo_a.matrices.reduced.confusion[1, 0]
    assert sum(row["B"] for row in pages) == demo_b.matrices.reduced.confusion[1, 0]
    changes = [abs(row["B − A"]) for row in pages]
    assert changes == sorted(changes, reverse=True)


def test_two_trimmed_single_matrices_differ_on_the_union_of_their_classes(small):
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [{"label": "Title", "bbox": [0, 0, 2, 2]}])])
    other = evaluate_dataset(reference, _layout("model", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [])]))
    comparison = compare(small, other)
    assert comparison.difference_view("trimmed") == "trimmed" and comparison.difference_view("full") == "full"
    difference = comparison.difference("trimmed")
    assert difference.rows == ["Background", "Text", "Title"] and difference.columns == ["Background", "Text", "Title"]
    assert difference.confusion[1, 1] == 10.0  # Text right in B, nowhere in A
    assert comparison.cell_pages("trimmed", "Text", "Title") == [{"page": "p1", "A": 6.0, "B": 0.0, "B − A": -6.0}]


def test_outcome_pages_sum_to_the_per_class_outcomes(demo_a, demo_b):
    comparison = compare(demo_a, demo_b)
    support = {label: demo_a.matrices.full.confusion[index].sum() for label, index in demo_a.taxonomy.reference_index.items()}
    outcomes_a, outcomes_b = reference_class_outcomes(demo_a), reference_class_outcomes(demo_b)
    for outcome in OUTCOMES:
        pages = comparison.outcome_pages("Text", outcome)
        assert sum(row["A"] for row in pages) / support["Text"] == pytest.approx(outcomes_a["Text"][outcome])
        assert sum(row["B"] for row in pages) / support["Text"] == pytest.approx(outcomes_b["Text"][outcome])


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
