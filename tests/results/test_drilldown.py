"""Cells of the full, trimmed and reduced views back to their pages and pixels
(tore_engine.results.drilldown), and the engine's answers to the app's views (page cells, per-page
class pixels, the all-pages table, class pages), on pages counted by hand and on the demo; an
unknown class is a KeyError that names the valid ones."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.brute_force import contribution, pixel_sets
from tests.helpers import DEMO, ranked_pages
from tests.helpers import small_layout as _layout
from tore_engine.engine.cell_regions import page_regions
from tore_engine.engine.raster import label_sets, pair_table
from tore_engine.formats.native import from_document as from_native
from tore_engine.formats.native import read as read_native
from tore_engine.metrics.algorithm1 import contributions
from tore_engine.results.drilldown import (
    cell_page_values,
    class_pages,
    page_cell,
    page_cells,
    page_class_pixels,
    pages_table,
    top_confusions,
    view_matrices,
)
from tore_engine.run.runner import evaluate_dataset, prepare_page


@pytest.fixture
def evaluation():
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 5, 2]}]), ("p2", [{"label": "Text", "bbox": [0, 0, 2, 2]}])])
    # p1: 10 Text pixels predicted as Background; p2: 4 Text pixels missed and 9 Background pixels called Text
    prediction = _layout("model", [("p1", []), ("p2", [{"label": "Text", "bbox": [5, 5, 8, 8]}])])
    return evaluate_dataset(reference, prediction)


def test_reduced_cells_rank_pages_by_their_own_pixels(evaluation):
    assert ranked_pages(evaluation, "reduced", "Foreground", "Background") == [("p1", 10.0, 10 / 14), ("p2", 4.0, 4 / 14)]
    assert ranked_pages(evaluation, "reduced", "Background", "Foreground") == [("p2", 9.0, 1.0)]
    assert ranked_pages(evaluation, "reduced", "Foreground", "Foreground") == []
    assert ranked_pages(evaluation, "reduced", "Foreground", "Background", limit=1) == [("p1", 10.0, 10 / 14)]


def test_full_and_trimmed_cells_are_cells_of_the_full_matrix(evaluation):
    expected = [("p1", 10.0, 10 / 14), ("p2", 4.0, 4 / 14)]
    assert ranked_pages(evaluation, "full", "Text", "Background") == expected
    assert ranked_pages(evaluation, "trimmed", "Text", "Background") == expected
    assert ranked_pages(evaluation, "full", "Background", "Text") == [("p2", 9.0, 1.0)]


def test_views(evaluation):
    assert view_matrices(evaluation.matrices, "reduced").rows == ["Background", "Foreground"]
    assert view_matrices(evaluation.matrices, "trimmed").rows == ["Background", "Text"]
    with pytest.raises(ValueError):
        view_matrices(evaluation.matrices, "diagonal")


def test_top_confusions_skip_the_diagonal_and_zeros(evaluation):
    full = evaluation.matrices.full  # Text -> Background 14 px, Background -> Text 9 px
    assert top_confusions(full) == [("Text", "Background", 14.0, 14 / 14, 14 / (14 + 177)), ("Background", "Text", 9.0, 9 / (177 + 9), 9 / 9)]
    assert top_confusions(full, count=1)[0][:2] == ("Text", "Background")


# --- the app's views: page cells, subsets, shares, class pixels, the all-pages table ---------------


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
    assert (demo_a.page_ids[worst], values[worst]) == ranked_pages(demo_a, "full", "Text", "Table")[0][:2]
    reduced = cell_page_values(demo_a, "reduced", "Foreground", "Background")
    assert reduced.sum() == demo_a.matrices.reduced.confusion[1, 0]


def test_an_unknown_class_is_a_key_error_naming_the_classes(small):
    for lookup in (lambda: page_cell(small, "full", 0, "Txt", "Title"), lambda: cell_page_values(small, "full", "Text", "Txt"),
                   lambda: class_pages(small, "Txt")):
        with pytest.raises(KeyError, match="'Txt' is no .*class.*; those are 'Background', 'Text', 'Title'"):
            lookup()
    with pytest.raises(KeyError, match="those are 'Background', 'Foreground'"):
        cell_page_values(small, "reduced", "Text", "Background")


def test_page_class_pixels_are_row_and_column_sums_of_every_page(demo_b):
    reference, predicted = page_class_pixels(demo_b)
    for page in range(len(demo_b.page_ids)):
        matrix = demo_b.page_matrix(page)
        assert np.allclose(reference[page], matrix.sum(axis=1)) and np.allclose(predicted[page], matrix.sum(axis=0))


def test_pages_table_has_one_row_a_page_with_each_sides_class_pixels(small):
    table = pages_table(small)
    assert table.columns.tolist() == ["page", "pixels", "foreground recall", "foreground precision", "foreground F1", "map", "map_50", "map_75",
                                      "tp", "fp", "fn", "Cls", "Loc", "Both", "Dupe", "Bkg", "Miss", "warnings", "Text (ref)", "Title (ref)", "Text (pred)", "Title (pred)"]
    assert table["map"].tolist() == [0.0, pytest.approx(1 / (1 + np.spacing(1)), abs=1e-15)]  # p1: its Text missed; p2: its Title found (pycocotools' 1 / (1 + eps))
    assert table["Text (ref)"].tolist() == [10.0, 0.0] and table["Text (pred)"].tolist() == [0.0, 5.0]
    assert table["Title (pred)"].tolist() == [6.0, 4.0] and table["warnings"].tolist() == [0, 0]
    assert table["foreground recall"].tolist() == [0.6, 1.0]
    assert table[["tp", "fp", "fn", "Cls", "Bkg", "Miss"]].values.tolist() == [[0, 1, 1, 1, 0, 0], [1, 1, 0, 0, 1, 0]]  # p1: Text boxed as Title (Cls, IoU 0.6); p2: Title found, a Text on nothing (Bkg)


def test_pages_table_counts_each_pages_warnings(tmp_path):
    reference = _layout("gt", [("p1", [{"label": "Text", "bbox": [0, 0, 50, 2]}]), ("p2", [])])  # wider than the page
    table = pages_table(evaluate_dataset(reference, _layout("model", [("p1", []), ("p2", [])])))
    assert table["warnings"].tolist() == [1, 0]


def test_class_pages_rank_pages_by_wrong_pixels(small):
    assert class_pages(small, "Title") == [("p1", 0.0, 6.0, 0.0), ("p2", 4.0, 4.0, 4.0)]
    assert class_pages(small, "Text") == [("p1", 10.0, 0.0, 0.0), ("p2", 0.0, 5.0, 0.0)]


# --- from a cell and a page to the pixels behind it -------------------------------------------------


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
