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
