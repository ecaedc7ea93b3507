"""Tags and saved views in the app (`results.tags`: one database for every session and server,
`$TORE_STUDIO_DB` or `.tore-studio.sqlite` in the data root): a page's tags and a form to tag it or
one of its boxes (Overlays), the pages of a tag with their ids to download, and saved views (a name
for the URL's state) in the sidebar. A tag belongs to the reference's dataset (its layout's name).
"""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import pandas as pd
import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.core.text_safety import write_csv
from tore_engine.plots.page_overlays import largest_boxes
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.tags import TagStore, database_url
from tore_engine.studio import state
from tore_engine.studio.data_root import data_root
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.messages import show_input_error

PAGE_TARGET = "the page"


@st.cache_resource(show_spinner=False)
def tag_store(url: str) -> TagStore:
    """One store (its connection pool) a database, for every session."""
    return TagStore(url)


def store() -> TagStore:
    return tag_store(database_url(data_root()))


def in_use() -> bool:
    """Whether there is a database to read: an SQLite file is made by the first tag or view saved,
    not by a page that only shows none."""
    url = database_url(data_root())
    return not url.startswith("sqlite") or Path(url.split(":///", 1)[1]).exists()


def _targets(evaluated: Evaluated, page_id: str) -> list[str]:
    """What a tag may be put on: the page, or one of its boxes on either side that the panes draw
    (all of them, or a pane's `MAX_BOXES` largest: a page of a million boxes would send them all)."""
    targets = [PAGE_TARGET]
    for side, page in (("reference", evaluated.reference_page(page_id)), ("prediction", evaluated.prediction_page(page_id))):
        if page is not None:
            targets += [f"{side} box {k} ({page.labels[k]})" for k in largest_boxes(page)]
    return targets


def _add_tag(dataset: str, page_id: str) -> None:
    """Form callback: the tag as typed, on the page or the box chosen."""
    session = st.session_state
    target = session[state.TAG_TARGET]
    side, box = (None, None) if target == PAGE_TARGET else (target.split()[0], int(target.split()[2]))
    try:
        store().add(dataset, page_id, session[state.TAG_NAME].strip(), note=session[state.TAG_NOTE].strip() or None, side=side, box=box)
        session[state.TAG_NAME] = session[state.TAG_NOTE] = ""
    except InputError as error:
        session[state.TAG_ERROR] = error


def page_tags(evaluated: Evaluated, page_id: str) -> None:
    """The page's tags (and its boxes'), and a form to add one."""
    dataset = evaluated.reference.name
    try:
        tags = store().find(dataset, page=page_id) if in_use() else []
    except InputError as error:
        show_input_error(error, title="the tags database")
        return
    with st.expander(f"Tags of this page ({len(tags)})" if tags else "Tag this page"):
        if tags:
            st.dataframe(pd.DataFrame([{"tag": tag.name, "on": PAGE_TARGET if tag.box is None else f"{tag.side} box {tag.box}",
                                        "note": tag.note, "created": tag.created} for tag in tags]), hide_index=True, width="stretch")
        with st.form("tag_form", clear_on_submit=False, border=False):
            left, middle, right = st.columns([2, 3, 2])
            left.text_input("Tag", key=state.TAG_NAME, placeholder="reference wrong, ambiguous, ...", max_chars=200)
            middle.text_input("Note (optional)", key=state.TAG_NOTE, max_chars=2000)
            right.selectbox("On", _targets(evaluated, page_id), key=state.TAG_TARGET)
            st.form_submit_button("Add the tag", on_click=_add_tag, args=(dataset, page_id))
        if (failed := st.session_state.pop(state.TAG_ERROR, None)) is not None:
            show_input_error(failed)


def _tag_listed(dataset: str, pages: list[str], key: str) -> None:
    """Form callback: the tag as typed on every listed page, in one transaction."""
    session = st.session_state
    name = session[state.TAG_FORM(key, "name")].strip()
    try:
        count = store().add_pages(dataset, pages, name, note=session[state.TAG_FORM(key, "note")].strip() or None)
        session[state.TAG_FORM(key, "done")] = f"Tagged {count:,} pages '{plain_for_markdown(name)}'."
    except InputError as error:
        session[state.TAG_ERROR] = error


def tag_listed_pages(evaluated: Evaluated, pages: list[str], key: str) -> None:
    """A popover that tags every page of a list (a cell's, an error type's, a class's) at once; the
    tag then lists them in Overlays and `tore export --tag` exports them."""
    if not pages:
        return
    with st.popover("Tag this page" if len(pages) == 1 else f"Tag these {len(pages):,} pages", width="stretch" if len(pages) == 1 else "content"):
        with st.form(state.TAG_FORM(key), border=False):
            st.text_input("Tag", key=state.TAG_FORM(key, "name"), placeholder="reference wrong, ambiguous, ...", max_chars=200)
            st.text_input("Note (optional)", key=state.TAG_FORM(key, "note"), max_chars=2000)
            st.form_submit_button("Tag them", on_click=_tag_listed, args=(evaluated.reference.name, pages, key))
        if (done := st.session_state.pop(state.TAG_FORM(key, "done"), None)) is not None:
            st.success(done)
        if (failed := st.session_state.pop(state.TAG_ERROR, None)) is not None:
            show_input_error(failed)


def _pages_csv(pages: list[str]) -> str:
    import io

    text = io.StringIO()
    write_csv(text, [["page"], *([page] for page in pages)])
    return text.getvalue()


def _open_page(key: str, pages: list[str]) -> None:
    if rows := st.session_state[key].selection.rows:
        st.session_state[state.PAGE] = pages[rows[0]]


def tag_pages(evaluated: Evaluated) -> None:
    """The pages carrying a tag (chosen among the dataset's), one row opening it below, and their ids to download."""
    dataset = evaluated.reference.name
    try:
        names = store().names(dataset) if in_use() else []
    except InputError as error:
        show_input_error(error, title="the tags database")
        return
    if not names:
        return
    name = st.selectbox("Pages tagged", names, **state.bind(state.TAG, names[0], names))
    tagged = set(store().pages(dataset, name))
    pages = [page for page in evaluated.evaluation.page_ids if page in tagged]
    table = pd.DataFrame({"page": pages})
    st.dataframe(table, key=state.TAG_PAGES, hide_index=True, selection_mode="single-row", width="stretch", height=min(400, 40 + 35 * len(pages)),
                 on_select=functools.partial(_open_page, state.TAG_PAGES, pages))
    left, right = st.columns(2)
    left.download_button(f"Page ids of '{plain_for_markdown(name)}' (CSV)", _pages_csv(pages), file_name="tagged-pages.csv", mime="text/csv")
    if evaluated.has_boxes:
        right.download_button("These pages as COCO, both sides (zip)", functools.partial(_coco_zip, evaluated, pages), file_name="tagged-pages-coco.zip",
                              mime="application/zip", help="pages.json: images, categories and the reference's annotations; "
                              "pages.predictions.json: the prediction's results with scores (CVAT, Label Studio; tore evaluate reads "
                              "the two back as the same pages and boxes)")
    else:
        right.caption("No boxes to export: this saved evaluation's inputs cannot be read from here (Overlays says why).")


def _coco_zip(evaluated: Evaluated, pages: list[str]) -> bytes:
    """The pages' boxes as evaluated (minimum score applied), both sides as COCO (`coco.write_pair`), zipped."""
    import io
    import tempfile
    import zipfile

    from tore_engine.core.layout import LayoutSet
    from tore_engine.formats.coco import write_pair

    sides = []
    for layout, page_of in zip(evaluated.layouts(), (evaluated.reference_page, evaluated.prediction_page)):
        sides.append(LayoutSet(layout.name, [page for page_id in pages if (page := page_of(page_id)) is not None], layout.taxonomy))
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        instances, results = Path(folder) / "pages.json", Path(folder) / "pages.predictions.json"
        write_pair(sides[0], sides[1], instances, results)
        for path in (instances, results):
            archive.write(path, path.name)
    return buffer.getvalue()


def _save_view() -> None:
    name = st.session_state[state.VIEW_NAME].strip()
    try:
        store().save_view(name, urlencode(list(state.url_params().items()), doseq=True))
        st.session_state[state.VIEW_NAME] = ""
    except InputError as error:
        st.session_state[state.VIEW_ERROR] = error


def saved_views() -> None:
    """In the sidebar: save the app's URL state under a name; each saved view a link to it."""
    with st.sidebar.expander("Saved views"):
        st.text_input("Name of this view", key=state.VIEW_NAME, max_chars=200)
        st.button("Save this view", on_click=_save_view, disabled=not st.session_state.get(state.VIEW_NAME, "").strip())
        if (failed := st.session_state.pop(state.VIEW_ERROR, None)) is not None:
            show_input_error(failed)
        try:
            views = store().views() if in_use() else {}
        except InputError as error:
            show_input_error(error, title="the tags database")
            return
        for name, saved_query in views.items():
            query = urlencode(parse_qsl(saved_query, keep_blank_values=True))  # rebuilt: whatever the database holds stays a query string
            st.markdown(f"[{plain_for_markdown(name)}](?{query})")
