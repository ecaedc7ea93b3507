"""Documents: when page ids are `<document>/<page>` (Docling, docling-eval, the demo), a table of
the documents with their exact Foreground scores, and a document picker (`doc` in the URL) that
narrows the matrices, the page lists, the navigator and Compare's two models to one document's
pages.

The narrowed evaluation is `results.documents.subset_evaluation` with the exact counts of the
document's pages, which the engine computes again from the two layouts (the evaluation keeps
each page's contributions only as floats): its matrices are those of a separate evaluation of
these pages (at the same minimum score: the pages are looked up without the boxes it drops). It
is computed once a document and kept with the evaluation it came from (in its `derived` values,
which every session shares).
"""

from __future__ import annotations

import dataclasses
import functools

import pandas as pd
import streamlit as st

from tore_engine.core.derived import Derived
from tore_engine.core.layout import Page
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.documents import Documents, document_table, page_documents, subset_evaluation
from tore_engine.run.runner import evaluate_batch
from tore_engine.studio import sections, state, tables
from tore_engine.studio.evaluations import Evaluated

DOCUMENT = state.DOCUMENT  # session state key and URL parameter
ALL = ""  # no document chosen: the whole evaluation
DOCUMENTS_OPEN = state.SECTION("documents")  # the section of the document table (session state and URL)
PICKER_HELP = "only this document's pages, in every view (page ids are document/page)"
MAX_LISTED = 1_000  # documents a picker lists; above, a name is typed (the browser is never sent them all)


def documents(evaluated: Evaluated) -> Documents:
    return evaluated.derived.get("documents", lambda: page_documents(evaluated.evaluation.page_ids))


def _table(evaluated: Evaluated) -> pd.DataFrame:
    return evaluated.derived.get("documents_table", lambda: document_table(evaluated.evaluation))


def page_pair(evaluated: Evaluated, page_id: str) -> tuple[Page, Page | None]:
    """A page of the evaluation: its reference page and its prediction page, if any."""
    reference = evaluated.reference_page(page_id)
    if reference is None:  # every page of an evaluation is a page of its reference
        raise KeyError(f"no page {page_id!r} in the reference")
    return reference, evaluated.prediction_page(page_id)


def _document_evaluation(evaluated: Evaluated, document: str) -> Evaluated:
    """The evaluation of the document's pages alone, titled with the document's name."""
    evaluation = evaluated.evaluation
    pages = documents(evaluated).pages(document)
    counts = evaluate_batch([page_pair(evaluated, evaluation.page_ids[k]) for k in pages.tolist()], evaluation.taxonomy).counts
    return dataclasses.replace(evaluated, title=f"{evaluated.title}, document {document}", evaluation=subset_evaluation(evaluation, pages, counts),
                               derived=Derived(), sweep_key=None)  # its own page index and tables; no sweep of its own


def document_evaluated(evaluated: Evaluated, document: str) -> Evaluated:
    """`evaluated` narrowed to one of its documents (kept with it once computed)."""
    return evaluated.derived.get(f"document {document}", lambda: _document_evaluation(evaluated, document))


def chosen_document(evaluated: Evaluated) -> str:
    """The document picker, when the pages belong to more than one document: the document chosen,
    or `ALL`."""
    names = documents(evaluated).names
    if len(names) < 2:
        return ALL
    if len(names) <= MAX_LISTED:
        chosen = st.selectbox("Document", [ALL, *names], label_visibility="collapsed", **state.bind(DOCUMENT, ALL, [ALL, *names]),
                              format_func=lambda name: "(all documents)" if name == ALL else f"Document {name}")
    else:
        chosen = st.text_input(f"Document (one of {len(names):,}, by its name; empty: all)", **state.bind(DOCUMENT, ALL),  # a name not found stays typed, and is said
                               help=f"{PICKER_HELP}; or select a row of the Documents table")
        if chosen != ALL and chosen not in names:
            st.warning(f"No document is named {plain_for_markdown(chosen)}: all documents are shown.")
            chosen = ALL
            state.share(**{DOCUMENT: ALL})  # the link keeps no document that is not there
    return chosen


def narrowed(evaluated: Evaluated, document: str) -> Evaluated:
    """The evaluation of the document's pages (`document_evaluated`), or the whole one for `ALL` or
    a document it does not have."""
    return document_evaluated(evaluated, document) if document in documents(evaluated).names else evaluated


def document_filter(evaluated: Evaluated) -> Evaluated:
    """The document picker; the chosen document's evaluation, or the whole one."""
    return narrowed(evaluated, chosen_document(evaluated))


def _choose_row(table_key: str, names: list[str]) -> None:
    rows = st.session_state[table_key].selection.rows
    st.session_state[DOCUMENT] = names[rows[0]] if rows else ALL


def document_table_view(evaluated: Evaluated, key: str) -> None:
    """The documents, one row each: pages, pixels and Foreground scores of their summed pages;
    selecting a row chooses the document."""
    count = len(documents(evaluated).names)  # the picker's too; the table is made only once the section is open
    if count < 2:
        return
    section = sections.opened(f"Documents: {count:,} (select one to show only its pages)", DOCUMENTS_OPEN)
    if section is None:
        return
    table = _table(evaluated)
    with section:
        st.caption("Each document's pages summed: its pixels, and the Foreground recall, precision and F1 of its pages' reduced "
                   "matrices added together (exact ratios of pixel counts, not means of the pages' scores).")
        table_key = state.DOCUMENTS_TABLE(key)
        shown = tables.rows_shown(table, table_key)  # a dataset of thousands of documents sends the browser 50 rows
        config = {"pixels": tables.pixel_column()} | {name: tables.score_column(label) for name, label in tables.FOREGROUND_LABELS.items()}
        st.dataframe(shown, key=table_key, hide_index=True, selection_mode="single-row", width="stretch", column_config=tables.pinned_first(shown, config),
                     on_select=functools.partial(_choose_row, table_key, shown["document"].tolist()))


def document_view(evaluated: Evaluated, key: str) -> Evaluated:
    """The document table and picker; the evaluation of the chosen document, or the whole one."""
    document_table_view(evaluated, key)
    return document_filter(evaluated)
