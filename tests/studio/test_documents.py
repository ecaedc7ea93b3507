"""Documents in the app (tore_engine.studio.documents), through AppTest: the document table, the
document picker (`doc` in the URL) narrowing the matrices, the page lists and the Overlays
navigator to one document's pages, with matrices equal to a separate evaluation of those pages;
on the demo and on the real Docling documents."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import DEMO, shared_path
from tests.studio.helpers import _app, _axes, _cells, _heatmaps, _no_exception, open_page
from tore_engine.api import evaluate_pair, load_pair
from tore_engine.core.layout import LayoutSet
from tore_engine.results.documents import document_table
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio import documents
from tore_engine.studio.evaluations import Evaluated

DEMO_DOCUMENTS = ["report-a", "paper-b", "manual-c", "newsletter-d"]


def _alone(reference: LayoutSet, prediction: LayoutSet, document: str, taxonomy: str):
    """A separate evaluation of the document's pages."""
    def subset(layout: LayoutSet) -> LayoutSet:
        return LayoutSet(layout.name, [page for page in layout.pages if page.id.startswith(f"{document}/")], layout.taxonomy)

    return evaluate_dataset(subset(reference), subset(prediction), taxonomy=taxonomy)


def _heatmap(at) -> tuple[list[str], list[str], np.ndarray]:
    """The first heatmap's rows, columns and values."""
    heatmap = _heatmaps(at)[0]
    return *_axes(heatmap), _cells(heatmap, "value")


def _same_matrix(at, alone) -> bool:
    """The page's first heatmap (confusion) is the separate evaluation's, class by class (0 for a
    class of the whole evaluation that the document's pages alone do not have)."""
    rows, columns, z = _heatmap(at)
    names = alone.matrices.classes
    expected = np.array([[alone.matrices.full.confusion[names.index(row), names.index(column)] if {row, column} <= set(names) else 0.0
                          for column in columns] for row in rows])
    shown = ~np.isnan(z)
    return shown.sum() > len(rows) and np.array_equal(z[shown], expected[shown])


def test_the_demos_documents_are_listed_with_their_exact_scores(demo_evaluation):
    at = _app()
    _no_exception(at)
    assert at.selectbox(key=documents.DOCUMENT).options == ["(all documents)", *(f"Document {name}" for name in DEMO_DOCUMENTS)]
    assert not [frame for frame in at.dataframe if "document" in frame.value.columns]  # drawn once its section is opened
    at.session_state[documents.DOCUMENTS_OPEN] = True  # what opening the section does (on_change="rerun")
    at.run()
    table = next(frame.value for frame in at.dataframe if "document" in frame.value.columns)
    assert table.equals(document_table(demo_evaluation))
    assert "doc" not in at.query_params and at.query_params[documents.DOCUMENTS_OPEN] == "1"


def test_choosing_a_document_narrows_the_matrices_and_the_page_lists(demo):
    reference, prediction, _ = demo
    at = _app(metric="confusion", pages_open="1")
    at.selectbox(key=documents.DOCUMENT).set_value("paper-b").run()
    _no_exception(at)
    assert at.query_params["doc"] == "paper-b"
    alone = _alone(reference, prediction, "paper-b", "single")
    assert _same_matrix(at, alone)
    pages = next(frame.value for frame in at.dataframe if "foreground F1" in frame.value.columns)
    assert pages["page"].tolist() == alone.page_ids == [f"paper-b/p{k}" for k in range(1, 9)]
    at.selectbox(key="cell_ref").set_value("Text").run()
    at.selectbox(key="cell_pred").set_value("Background").run()
    listed = next(frame.value for frame in at.dataframe if "contribution (pixels)" in frame.value.columns)
    assert listed["page"].tolist() == alone.pages_for_cell("Text", "Background")["page"].tolist()
    at.selectbox(key=documents.DOCUMENT).set_value(documents.ALL).run()
    assert len(_heatmap(at)[0]) == 12 and "doc" not in at.query_params


def _navigator(at) -> str:
    """What the Overlays navigator says of the current page ("Page **id**: 1 of 6 in file order ...")."""
    return next(markdown.value for markdown in at.markdown if markdown.value.startswith("Page **"))


def test_a_link_with_a_document_narrows_the_overlays_navigator():
    at = _app(doc="manual-c", page="paper-b/p1")  # a page of another document: the document's first instead
    open_page(at, "overlays").run()
    _no_exception(at)
    assert _navigator(at).startswith("Page **manual-c/p1**: 1 of 6 in file order")
    at.number_input(key="page_position").set_value(6).run()
    assert _navigator(at).startswith("Page **manual-c/p6**: 6 of 6") and at.query_params["page"] == "manual-c/p6"
    assert at.query_params["doc"] == "manual-c"


def test_a_document_that_is_not_in_the_evaluation_is_ignored():
    at = _app(doc="no-such-document")
    _no_exception(at)
    assert at.selectbox(key=documents.DOCUMENT).value == ""
    assert "`doc` (not one of the choices)" in at.warning[0].value


def test_a_documents_evaluation_is_computed_once_and_kept_with_its_evaluation():
    pair = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json")
    evaluated = Evaluated("model A", pair.reference, pair.prediction, pair.evaluation)
    narrowed = documents.document_evaluated(evaluated, "report-a")
    assert documents.document_evaluated(evaluated, "report-a") is narrowed
    assert narrowed.title == "model A, document report-a"
    assert narrowed.evaluation.page_ids == narrowed.index.page_ids == [f"report-a/p{k}" for k in range(1, 8)]  # its own page index
    assert evaluated.index.page_ids == pair.evaluation.page_ids


def test_the_docling_documents_by_document():
    folder = shared_path("data", "layouts", "docling_documents")
    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs docling-core (pip install 'tore-studio[docling]')")
    reference, prediction = load_pair(folder / "pre_heron", folder / "heron")
    whole = evaluate_dataset(reference, prediction)
    at = _app(src="path", ref="shared/data/layouts/docling_documents/pre_heron", a="shared/data/layouts/docling_documents/heron",
              doc="picture_classification", metric="confusion", view="full")
    _no_exception(at)
    assert at.selectbox(key=documents.DOCUMENT).options[1:] == [f"Document {name}" for name in document_table(whole)["document"]]
    assert _same_matrix(at, _alone(reference, prediction, "picture_classification", whole.matrices.mode))
    open_page(at, "overlays").run()
    assert _navigator(at).startswith("Page **picture\\_classification/1**: 1 of 2 in file order")  # Markdown-escaped


def test_compare_narrows_both_models_to_the_document(demo):
    reference, prediction, _ = demo
    at = _app(doc="paper-b", metric="confusion")
    open_page(at, "compare").run()
    _no_exception(at)
    assert at.selectbox(key=documents.DOCUMENT).value == "paper-b"
    deltas = next(frame.value for frame in at.dataframe if "B − A" in frame.value.columns)
    assert sorted(deltas["page"]) == [f"paper-b/p{k}" for k in range(1, 9)]
    assert _same_matrix(at, _alone(reference, prediction, "paper-b", "single"))  # model A's matrix, first


def test_many_documents_are_typed_by_name_and_listed_a_page_of_rows_at_a_time(demo, monkeypatch):
    """Above `MAX_LISTED` documents the picker is a name typed, never a list of every name, and the
    documents table is sent `PAGE_ROWS` rows at a time (here 1 and 2, for the demo's 3 documents)."""
    from tore_engine.studio import tables

    reference, prediction, _ = demo
    monkeypatch.setattr(documents, "MAX_LISTED", 1)
    monkeypatch.setattr(tables, "PAGE_ROWS", 2)
    at = _app(metric="confusion", documents_open="1")
    _no_exception(at)
    assert not [box for box in at.selectbox if box.key == documents.DOCUMENT]
    table = next(frame.value for frame in at.dataframe if "document" in frame.value.columns)
    assert table["document"].tolist() == DEMO_DOCUMENTS[:2]
    at.number_input(key="rows-documents-A").set_value(2).run()
    assert next(frame.value for frame in at.dataframe if "document" in frame.value.columns)["document"].tolist() == DEMO_DOCUMENTS[2:]
    at.text_input(key=documents.DOCUMENT).input("manual-c").run()
    _no_exception(at)
    assert at.query_params["doc"] == "manual-c" and _same_matrix(at, _alone(reference, prediction, "manual-c", "single"))
    at.text_input(key=documents.DOCUMENT).input("no-such").run()
    _no_exception(at)
    assert "No document is named no-such" in at.warning[0].value and "doc" not in at.query_params
