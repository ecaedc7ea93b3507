"""Per-document roll-ups (tore_engine.results.documents): the document table against a brute-force
sum of each document's pages, and one document's evaluation against a separate evaluation of just
its pages."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tests.helpers import DEMO, shared_path
from tore_engine.api import load_pair
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.metrics.rates import rates
from tore_engine.results.documents import DOCUMENT_COLUMNS, document_of, document_table, page_documents, subset_evaluation
from tore_engine.run.runner import evaluate_batch, evaluate_dataset


@pytest.mark.parametrize("page_id, document", [("paper-b/p1", "paper-b"), ("a/b/3", "a/b"), ("p1", None), ("/3", None), ("doc/", None)])
def test_the_document_is_everything_before_the_last_slash(page_id, document):
    assert document_of(page_id) == document


def test_pages_are_grouped_in_the_order_of_each_documents_first_page():
    documents = page_documents(["b/1", "a/1", "loose", "b/2"])
    assert documents.names == ["b", "a"]
    assert documents.codes.tolist() == [0, 1, -1, 0]
    assert documents.pages("b").tolist() == [0, 3] and documents.pages("nowhere").tolist() == []


def _brute_force_table(evaluation) -> list[tuple]:
    """Each document's row, summed page by page in Python integers."""
    totals: dict[str, list] = {}
    for page_id, pixels, reduced in zip(evaluation.page_ids, evaluation.page_pixels.tolist(), evaluation.page_reduced.tolist()):
        document = page_id.rsplit("/", 1)[0]
        entry = totals.setdefault(document, [0, 0, [[0, 0], [0, 0]]])
        entry[0] += 1
        entry[1] += int(pixels)
        for i in range(2):
            for j in range(2):
                entry[2][i][j] += int(reduced[i][j])
    rows = []
    for document, (pages, pixels, reduced) in totals.items():
        scores = rates(reduced[1][1], reduced[0][1] + reduced[1][1], reduced[1][0] + reduced[1][1])
        rows.append((document, pages, pixels, scores.recall, scores.precision, scores.f1))
    return rows


def test_the_document_table_of_the_demo_sums_its_pages_exactly(demo_a):
    table = document_table(demo_a)
    assert list(table.columns) == DOCUMENT_COLUMNS
    assert list(table.itertuples(index=False, name=None)) == _brute_force_table(demo_a)
    assert table["pages"].sum() == len(demo_a.page_ids) and table["pixels"].sum() == demo_a.pixels


def test_the_document_table_of_the_docling_documents():
    folder = shared_path("data", "layouts", "docling_documents")
    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs docling-core (pip install 'tore-studio[docling]')")
    evaluation = evaluate_dataset(*load_pair(folder / "pre_heron", folder / "heron"))
    table = document_table(evaluation)
    assert table["document"].tolist() == ["2305.03393v1-pg9", "amt_handbook_sample", "picture_classification", "right_to_left_01",
                                          "right_to_left_02", "right_to_left_03"]
    assert table.set_index("document").loc["picture_classification", "pages"] == 2
    assert list(table.itertuples(index=False, name=None)) == _brute_force_table(evaluation)


def _huge_page(page_id: str) -> Page:
    side = 2**31
    return Page(page_id, side, side, ["Text"], np.array([[0.0, 0.0, side / 2, side]]))


def test_sums_beyond_int64_stay_exact():
    """Two pages of 2^62 pixels: a document of 2^63, which int64 cannot hold."""
    reference = LayoutSet("gt", [_huge_page("d/1"), _huge_page("d/2")])
    evaluation = evaluate_dataset(reference, LayoutSet("m", [_huge_page("d/1"), _huge_page("d/2")]))
    (row,) = document_table(evaluation).itertuples(index=False, name=None)
    assert row == ("d", 2, 2**63, 1.0, 1.0, 1.0) and type(row[2]) is int


def _separately(reference: LayoutSet, prediction: LayoutSet, page_ids: list[str], taxonomy: str):
    """A separate evaluation of just these pages, in this taxonomy mode (auto might choose another for
    a few pages)."""
    def subset(layout: LayoutSet) -> LayoutSet:
        pages = {page.id: page for page in layout.pages}
        return LayoutSet(layout.name, [pages[page_id] for page_id in page_ids if page_id in pages], layout.taxonomy)

    return evaluate_dataset(subset(reference), subset(prediction), taxonomy=taxonomy, map="off")  # a subset has no mAP (`subset_evaluation`)


def _cells(evaluation) -> dict[tuple[str, str], Fraction]:
    """The confusion matrix's non-zero cells as exact fractions, by class names."""
    classes = evaluation.matrices.classes
    return {(classes[i], classes[j]): value for i, row in enumerate(evaluation.matrices.exact.fractions())
            for j, value in enumerate(row) if value}


def _document_evaluation(reference, prediction, evaluation, document):
    pages = page_documents(evaluation.page_ids).pages(document)
    by_id = [{page.id: page for page in layout.pages} for layout in (reference, prediction)]
    pairs = [(by_id[0][evaluation.page_ids[k]], by_id[1].get(evaluation.page_ids[k])) for k in pages.tolist()]
    return subset_evaluation(evaluation, pages, evaluate_batch(pairs, evaluation.taxonomy).counts)


@pytest.fixture(scope="module")
def demo_pair():
    reference, prediction = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    return reference, prediction, evaluate_dataset(reference, prediction)


@pytest.mark.parametrize("document, split", [("report-a", True), ("paper-b", False), ("newsletter-d", True)])
def test_a_documents_evaluation_equals_a_separate_evaluation_of_its_pages(demo_pair, document, split):
    """`split`: whether the document has pixels split between classes (cells that are not whole
    pixels, whose page floats would not sum exactly)."""
    reference, prediction, evaluation = demo_pair
    narrowed = _document_evaluation(reference, prediction, evaluation, document)
    alone = _separately(reference, prediction, [page_id for page_id in evaluation.page_ids if page_id.startswith(f"{document}/")],
                        evaluation.matrices.mode)
    assert narrowed.page_ids == alone.page_ids
    assert _cells(narrowed) == _cells(alone)
    assert any(value.denominator > 1 for value in _cells(alone).values()) == split
    shared = [alone.matrices.classes.index(name) for name in narrowed.matrices.classes]
    for kind in ("confusion", "recall", "precision"):
        assert np.array_equal(getattr(narrowed.matrices.full, kind), getattr(alone.matrices.full, kind)[np.ix_(shared, shared)])
    assert narrowed.matrices.reduced.confusion.tolist() == alone.matrices.reduced.confusion.tolist()
    assert narrowed.pages.equals(alone.pages[narrowed.pages.columns])  # (mAP is not computed for a subset)
    assert narrowed.per_class.equals(alone.per_class.loc[narrowed.per_class.index, narrowed.per_class.columns])
    row, column = max(_cells(alone), key=lambda cell: (cell[0] != cell[1], _cells(alone)[cell]))  # its largest confusion
    assert narrowed.pages_for_cell(row, column).equals(alone.pages_for_cell(row, column))
    assert {warning.page for warning in narrowed.input_warnings} <= {*narrowed.page_ids, None}


def test_a_docling_documents_evaluation_equals_a_separate_evaluation():
    folder = shared_path("data", "layouts", "docling_documents")
    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs docling-core (pip install 'tore-studio[docling]')")
    reference, prediction = load_pair(folder / "pre_heron", folder / "heron")
    evaluation = evaluate_dataset(reference, prediction)
    narrowed = _document_evaluation(reference, prediction, evaluation, "picture_classification")
    alone = _separately(reference, prediction, ["picture_classification/1", "picture_classification/2"], evaluation.matrices.mode)
    assert narrowed.page_ids == ["picture_classification/1", "picture_classification/2"]
    assert _cells(narrowed) == _cells(alone)
    assert narrowed.matrices.foreground == alone.matrices.foreground
    (row,) = document_table(narrowed).itertuples(index=False, name=None)
    assert row[3:] == (*alone.matrices.foreground, row[5])
