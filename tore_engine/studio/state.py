"""The app's state in one place (as FiftyOne's session): every key the app keeps in
`st.session_state` is named here, with its type, its default and its choices where they are fixed,
what it holds and whether the URL carries it; `bind` ties a widget to its key in one call; the rest
binds the URL to the state.

A `Key` is a `str` (Streamlit's widgets and `st.session_state` take it as it is); a `Family` names
keys made of a prefix and parts (one table a model and view, one upload slot). No other module
spells a session key: `tests/studio/test_state.py` reads every module for a key written as text,
and runs every page to find a key in the session that this module does not name.

The view in the URL: a bound key lives in `st.session_state` under the name of its query parameter,
seeded from the URL on a session's first run and written back after each run, so a link reopens
the same view. Widgets use `persist_state="session"` so a value survives page switches.

One key, many pages: Streamlit's element ids include the page script, so a widget with the same
key on another page is a new element, registered with its own default, which outranks the value
kept under the key (Streamlit 1.67; it made "Values" jump from recall to confusion on the way to
Compare). `seed` therefore writes the kept value back under the key on every run, before the
widget exists: a value set through the Session State API wins over the default.

The URL is untrusted: a parameter is parsed against the type of its default (a whole number, a
0/1 flag, text without NUL bytes) and must be one of the widget's choices; anything else is
ignored, and the page says which parameters were, in one warning at its top (never with their
values, which may be long, hostile or name server paths).
"""

from __future__ import annotations

from collections.abc import Collection, Container
from dataclasses import dataclass
from typing import Any

import streamlit as st

OVERLAYS_PAGE = "overlays"  # a page by its name (app.PAGES), which is its URL path

KEYS: dict[str, Key] = {}
FAMILIES: dict[str, Family] = {}


class Key(str):
    """A session key: its name, the type of its value, its default and choices where fixed (else
    given to `bind` by the page, which knows them), whether the URL carries it and, when it does,
    whether the URL leaves it out at its default."""

    kind: type
    default: Any
    choices: Container[Any] | None
    url: bool
    omit_default: bool
    holds: str

    def __new__(cls, name: str, kind: type, holds: str, *, default: Any = None, choices: Container[Any] | None = None,
                url: bool = False, omit_default: bool = False) -> Key:
        if name in KEYS:
            raise ValueError(f"session key {name!r} named twice")
        key = super().__new__(cls, name)
        key.kind, key.default, key.choices, key.url, key.omit_default, key.holds = kind, default, choices, url, omit_default, holds
        KEYS[name] = key
        return key


class Family:
    """Keys made of a prefix and parts, one key a table, model or slot: `ROWS_PAGE("pages", "A")` is
    "rows-pages-A"."""

    def __init__(self, prefix: str, holds: str, *, suffix: str = "", separator: str = "-") -> None:
        if prefix + suffix in FAMILIES:
            raise ValueError(f"session key family {prefix!r} named twice")
        self.prefix, self.suffix, self.separator, self.holds = prefix, suffix, separator, holds
        FAMILIES[prefix + suffix] = self

    def __call__(self, *parts: object) -> str:
        return self.prefix + self.separator.join(str(part) for part in parts) + self.suffix

    def owns(self, name: str) -> bool:
        return name.startswith(self.prefix) and name.endswith(self.suffix) and len(name) > len(self.prefix) + len(self.suffix)


def named(name: str) -> bool:
    """Whether `name` is a key this module names (itself, or one of a family)."""
    return name in KEYS or any(family.owns(name) for family in FAMILIES.values())


# --- the dataset (the sidebar) -------------------------------------------------------------------------
DATASET = Key("_dataset", object, "the dataset this run's sidebar chose (sidebar.Dataset), kept to be read back (tests); no page reads "
              "it: each receives it (app.main)")
SOURCE = Key("src", str, "where the inputs come from: demo, upload, path or saved", url=True)
MODELS = Key("models", int, "how many models are evaluated against the reference", url=True, omit_default=True)
LABEL_MAP = Key("map", str, "a label map's path in the data root", default="", url=True)
MODEL_LETTERS = tuple("ABCDEFGH")  # at most this many predictions a dataset
REFERENCE_INPUT = Key("ref", str, "the reference's path in the data root", default="", url=True)
REFERENCE_FORMAT = Key("fmt", str, "the reference's format (auto: detected)", default="auto", url=True)
MODEL_INPUTS = {model: Key(model.lower(), str, f"model {model}'s path in the data root", default="", url=True) for model in MODEL_LETTERS}
MODEL_FORMATS = {model: Key(f"fmt_{model.lower()}", str, f"model {model}'s format (auto: detected)", default="auto", url=True)
                 for model in MODEL_LETTERS}
COCO_IMAGES = Key("coco", str, "a COCO file's images and categories, for its page sizes", default="", url=True)
PAGE_IMAGES = Key("imgdir", str, "the folder of the page images", default="", url=True)
SAVED = {model: Key("saved" if model == "A" else f"saved_{model.lower()}", str, f"model {model}'s saved evaluation (a folder)",
                    default="", url=True) for model in MODEL_LETTERS}
TAXONOMY = Key("tax", str, "the taxonomy mode: auto, single or dual", default="auto", url=True)
MIN_SCORE = Key("min_score", float, "the minimum score of a kept box (the sidebar's, and the operating point's click)", url=True,
                omit_default=True)
SCORE_SIDE = Key("score_side", str, "which side's boxes the minimum score drops", url=True, omit_default=True)
CONVENTION = Key("convention", str, "mAP's convention: coco or docling", url=True, omit_default=True)
PAGE_ID_RULE = Key("pidmap", str, "the rule that maps the predictions' page ids", default="", url=True)
SETTINGS = Key("settings", object, "the sidebar's Evaluation popover")
WORKERS = Key("workers", int, "local worker processes")
SCHEDULER = Key("dask", str, "a Dask scheduler's address (empty: local processes)")
UPLOAD = Family("upload_", "an upload slot's file uploader, by slot and generation", separator="_")
UPLOADED = Family("uploaded_", "an upload slot's kept file: (upload id, path[, skipped members])")
UPLOAD_FOLDER = Key("_upload_folder", object, "this session's UploadFolder")
UPLOAD_GENERATION = Key("_upload_generation", int, "bumped to empty the uploaders", default=0)
AFTER_RUN = Key("_after_run", list, "(thread name, work) the run queued for once its page is drawn (background.later)")
PRELOAD = Key("preload", object, "the blank chart that has a new tab load plotly.js while its first run works (panels.plotly_loading)")
PRELOADED = Key("_preloaded", bool, "this session's first run drew the blank chart (panels.plotly_loading)", default=False)

# --- the matrix --------------------------------------------------------------------------------------
MODEL = Key("model", str, "the model shown (A, B, ...)", url=True)
DOCUMENT = Key("doc", str, "the document shown (empty: all)", default="", url=True)
VIEW = Key("view", str, "the matrix view: full, trimmed or reduced", url=True)
VIEW_MODE = Key("_view_mode", str, "the taxonomy mode the matrix view control last showed")
VIEW_BY_MODE = Key("_view_by_mode", dict, "the view last chosen in each taxonomy mode")
VIEW_SHOWN = Key("_view_shown", str, "the view the last run showed")
METRIC = Key("metric", str, "the normalisation: confusion, recall, precision or share", default="recall", url=True)
SCALE = Key("scale", str, "the colour scale: linear, log or power", default="linear", url=True)
HIDE_DIAGONAL = Key("hide", bool, "hide the diagonal", default=False, url=True)
HIDE_BACKGROUND = Key("nobg", bool, "hide Background's row and column", default=False, url=True)
CLASSES = Key("classes", list, "the classes shown (empty: all)", default=[], url=True)
DISPLAY = Key("display", object, "the Display popover")
CELL = Key("cell", str, "the chosen cell, row|column (empty: none)", default="", url=True)
CELL_ROW = Key("cell_ref", str, "the cell picker's reference class")
CELL_COLUMN = Key("cell_pred", str, "the cell picker's predicted class")
CELL_PICKERS = Key("cell_pickers", object, "the cell pickers' popover")
CELL_CHECKED = Key("_cell_checked", bool, "a link's cell was checked against the matrix")
CLICKS = Key("_clicks", dict, "chart key -> the last click it reported")
HEATMAP = Family("heatmap-", "a matrix's chart, by model")
MATRIX_CSV = Family("csv-", "a matrix's CSV download, by model, view and metric")
OPEN_PAGE = Family("open-", "a page table's page to open, by table")
OPEN_BUTTON = Family("open-button-", "a page table's Open button, by table and model")
CLASS_BAR = Family("bar-class-", "the class a click on a per-class bar chose, by model")
CLASS_PAGES = Family("class-", "a class's page table, by model")
CLASS_BARS = Family("bars-", "the per-class bar chart, by model")
LARGEST = Family("largest-", "the largest cells' table, by model and view")
SECTIONS_KEPT = Key("_sections_open", dict, "section key -> open, kept when the page changes")
SECTION = Family("", "an expander's open state (session and URL), by name", suffix="_open")
ROWS_PAGE = Family("rows-", "a long table's page of rows and its buttons, by table")
DOCUMENTS_TABLE = Family("documents-", "the documents' table, by model")
PAGES_SORT = Key("pages_sort", str, "the all-pages table's sort column", default="page", url=True, omit_default=True)
PAGES_DESCENDING = Key("pages_desc", bool, "the all-pages table: largest first", default=False, url=True, omit_default=True)
PAGES_FILTER = Key("pages_filter", str, "the all-pages table: page id contains", default="", url=True)
PAGES_CLASSES = Key("pages_classes", list, "the all-pages table: pages with any of these classes", default=[], url=True)
PAGES_TABLE = Family("pages-", "the all-pages table, by model")
DOWNLOAD = Family("download-", "a report's download button, by report and model")
SWEEP_CHART = Family("sweep-", "the operating point's chart, by model")
SWEEP_MAKE = Family("sweep-", "the operating point's Compute button, by model", suffix="-make")
ERROR_TYPE = Key("error_type", str, "the TIDE error type chosen", default="")
BOX_CELL = Key("box_cell", str, "the chosen cell of the box-level matrix, row|column", default="")
ERROR_PAGES = Key("error-pages", object, "the pages of the chosen error type")
BOX_CELL_PAGES = Key("box-cell-pages", object, "the pages of the box-level cell")
ERROR_BARS = Key("error-bars", object, "TIDE's error types' bars")
BOX_MATRIX = Key("box-matrix", object, "the box-level confusion matrix")
GALLERY = Key("gallery", bool, "the cell's pages shown as a gallery", default=False, url=True)
GALLERY_PAGE = Key("gpage", int, "the gallery's page number", default=1, url=True, omit_default=True)
GALLERY_FOR = Key("_gallery_for", str, "the cell the gallery's page number belongs to")
GALLERY_BUTTON = Family("gallery-", "the gallery's Previous, Next and Open buttons")

# --- Overlays ------------------------------------------------------------------------------------------
PAGE = Key("page", str, "the page shown in Overlays (its id)", url=True)
ORDER = Key("order", str, "the order of the pages", url=True)
POSITION = Key("page_position", int, "the page's position in its order")
FIND = Key("page_find", str, "a page id searched for", default="")
MATCH = Key("page_match", str, "the search match chosen")
AGREEMENT = Key("agree", bool, "the agreement view", default=False, url=True)
HIGHLIGHT = Key("highlight", str, "the cell whose pixels the panes highlight, row|column", default="")
BOX_COLOURS = Key("box_colours", str, "boxes coloured by outcome or by class", url=True)
OVERLAY = Key("overlay", object, "the Overlays page's panes")

# --- tags and saved views --------------------------------------------------------------------------------
TAG = Key("tag", str, "the tag whose pages are listed", url=True)
TAG_NAME = Key("tag_name", str, "a new tag's name", default="")
TAG_NOTE = Key("tag_note", str, "a new tag's note", default="")
TAG_TARGET = Key("tag_target", str, "what a new tag is on: the page or one of its boxes")
TAG_ERROR = Key("_tag_error", str, "why the last tag was refused")
TAG_PAGES = Key("tag_pages", object, "the tagged pages' table")
TAG_FORM = Family("tag-list-", "the form that tags a list of pages: its fields and outcome, by list")
VIEW_NAME = Key("view_name", str, "a view's name, to save it", default="")
VIEW_ERROR = Key("_view_error", str, "why the last view was refused")
SWITCH = Key("_switch_to", tuple, "a page (and values for its URL) a callback asked to go to")
PAGES = Key("_pages", dict, "the app's pages by name (app.PAGES): what `switch_to` goes to")
OPEN_OVERLAYS = Key("_open_overlays", bool, "a callback asked for the Overlays page")

# --- Models, Compare, Runs -------------------------------------------------------------------------------
MODELS_TABLE = Key("models-table", object, "the Models page's table")
COMPARE_A = Key("cmp_a", str, "Compare's first model", url=True, omit_default=True)
COMPARE_B = Key("cmp_b", str, "Compare's second model", url=True, omit_default=True)
COMPARE_TAB = Key("cmp", str, "Compare's tab: against the reference, B against A, ...", default="reference", url=True,
                  omit_default=True)
COMPARE_TAB_SHOWN = Key("_cmp_tab", str, "the tab Streamlit shows")
COMPARE_TARGET = Key("_compare_target", object, "the chosen target of a difference")
COMPARE_PAGES = Family("compare-", "Compare's tables and charts, by name")
PAGE_DELTAS = Key("page-deltas", object, "Compare's pages where B - A differs most")
COMPARE_CELL = Family("_compare_cell_", "the cell chosen in a model's matrix on Compare, by model and view")
DIFFERENCE = Family("difference-", "B - A's heatmap, by metric and basis")
DIFFERENCE_TAB = Key("_difference_tab", str, "the metric of B - A shown in its tabs (a wide difference: one chart at a time)")
OUTCOMES = Key("outcomes", object, "Compare's box outcomes' bars")
PAIR_CELL = Key("_pair_cell", tuple, "the chosen cell of B against A")
PAIR_PAGE = Key("pair_page", str, "the page of that cell")
PAIR = Family("pair-", "B against A's charts and tables")
A_VS_B = Family("a-vs-b-", "B against A's matrix, by metric")
ERROR_TYPES = Key("error-types", object, "Compare's TIDE error types table")
RUNS_FOLDER = Key("runs_dir", str, "the folder of saved evaluations", default="", url=True)
RUNS_TABLE = Key("runs_table", object, "the Runs page's table")
RUNS_REFERENCE = Key("runs_ref", str, "the reference whose runs are shown", url=True, omit_default=True)
RUNS_ORDER = Key("runs_order", str, "the order of the runs", default="date", url=True, omit_default=True)
RUNS_CHARTS = Family("runs_", "the Runs page's charts")

# --- Scores ----------------------------------------------------------------------------------------------
BENCHMARK = Key("bench", str, "the Scores page's benchmark", default="docile", url=True)
DOCILE = Family("docile_", separator="_", holds="the DocILE panel's inputs, tables and charts (dir, split, preds, kile, lir, iou, seed, doc, task: in the URL)")
FUNSD = Family("funsd_", separator="_", holds="the FUNSD panel's inputs, tables and charts (kind, seed, sort, desc, doc, paths: in the URL)")
OMNIDOCBENCH = Family("omnidocbench_", separator="_", holds="the OmniDocBench panel's inputs, tables and charts (paths, page: in the URL)")
OMNIDOCBENCH_OPEN = Key("_omnidocbench_open_matrices", dict, "query parameters of a requested switch to Matrices")

# --- the URL's own -----------------------------------------------------------------------------------------
_SHARED = Key("_url", dict, "the values this run puts in the URL")
_BOUND = Key("_url_bound", dict, "the keys bound this run -> their default (what `bind` writes back to the URL)")
_IGNORED = Key("_url_ignored", dict, "parameter -> why it was ignored, this run")
_NOTICE = Key("_url_notice", object, "the placeholder of the warning at the top of the page")
_GIVEN = Key("_url_given", dict, "the URL's parameters as this run began (a fragment's run: its page's last run)")


@dataclass(frozen=True)
class Interval:
    """The numbers from `low` to `high`, both included: the choices of a number input."""

    low: float
    high: float

    def __contains__(self, value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and self.low <= value <= self.high


class _Refused(ValueError):
    """A URL value that does not parse as its parameter's type; the message says what was expected."""


def _parse(text: str, default: Any) -> Any:
    """The URL text as a value of `default`'s type."""
    if isinstance(default, bool):
        if text not in ("0", "1"):
            raise _Refused("expected 0 or 1")
        return text == "1"
    if isinstance(default, (int, float)):
        try:
            return type(default)(text)
        except ValueError:
            raise _Refused("expected a whole number" if isinstance(default, int) else "expected a number") from None
    if "\x00" in text:
        raise _Refused("contains a NUL byte")
    return text


def _describe(options: Container[Any]) -> str:
    if isinstance(options, range) and options.step == 1:
        return f"expected a whole number from {options.start} to {options.stop - 1}"
    if isinstance(options, Interval):
        return f"expected a number from {options.low:g} to {options.high:g}"
    return "not one of the choices"


def seed(key: str, default: Any, options: Container[Any] | None = None) -> None:
    """Give `key` its URL value on the session's first run (else `default`), and fall back to
    `default` whenever the stored value is not one of `options` (a list, a `range` of whole
    numbers, an `Interval`). A URL value that does not fit is ignored and named in the page's
    notice. Call before the widget: the value is written back so that the widget takes it on
    every page (see the module's docstring)."""
    if key not in st.session_state:
        st.session_state[key] = default
        if given := given_values(key):
            try:
                value = _parse(given[-1], default)
                if options is not None and value not in options:
                    raise _Refused(_describe(options))
                st.session_state[key] = value
            except _Refused as refused:
                ignore(key, str(refused))
    if options is not None and st.session_state[key] not in options:
        st.session_state[key] = default
    st.session_state[key] = st.session_state[key]


def seed_list(key: str, options: Collection[str]) -> None:
    """`seed` for a list of choices (a multiselect; the URL repeats the key, `classes=Text&classes=Table`):
    the URL's values on the session's first run, and always only those among `options` (a choice
    that does not fit is ignored and named in the page's notice, once)."""
    if key not in st.session_state:
        given = given_values(key)
        if any(value not in options for value in given):
            ignore(key, "not one of the choices")
        st.session_state[key] = list(dict.fromkeys(given))
    st.session_state[key] = [value for value in st.session_state[key] if value in options]


def given_values(key: str) -> list[str]:
    """The values the URL gave `key` as this run began: a control drawn after the URL was rewritten
    in the same run (by a fragment, which publishes its own values) still finds its parameter."""
    given = st.session_state.get(_GIVEN)
    return list(given.get(key, [])) if given is not None else st.query_params.get_all(key)


def ignore(key: str, reason: str) -> None:
    """Name an ignored URL parameter in the notice at the top of the page."""
    ignored = st.session_state.setdefault(_IGNORED, {})
    ignored[key] = reason
    notice = st.session_state.get(_NOTICE)
    if notice is not None:
        listed = "; ".join(f"`{name}` ({why})" for name, why in ignored.items())
        notice.warning(f"Some parameters of this link were ignored, their values kept as default: {listed}.", icon=":material/link_off:")


def bind(key: Key, default: Any = None, choices: Container[Any] | None = None) -> dict[str, Any]:
    """Tie a widget to `key` in one call: its value seeded from the URL on the session's first run
    (else `default`, or the key's own) and kept among `choices` (or the key's own), kept across
    pages, and written back to the URL after the run when the key is in the URL (left out at its
    default when the key says so). Returns the widget's arguments: `st.radio(..., **state.bind(MODEL))`."""
    default = key.default if default is None else default
    choices = key.choices if choices is None else choices
    if key.kind is list:
        seed_list(key, choices if isinstance(choices, Collection) else ())
    else:
        seed(key, default, choices)
    if key.url:
        st.session_state.setdefault(_BOUND, {})[key] = default
    return {"key": key, "persist_state": "session"}


def _bound_values() -> dict[str, Any]:
    """The URL's values of the keys bound this run (a fragment's run: its page's last run, and its own)."""
    values = {}
    for key, default in st.session_state.get(_BOUND, {}).items():
        value = st.session_state.get(key)
        values[key] = None if KEYS[key].omit_default and value == default else value
    return values


def begin_run() -> None:
    """Note the URL as this run begins (what `seed` reads), start collecting the values this run
    puts in the URL, and place the notice of ignored parameters at the top of the page."""
    st.session_state[_GIVEN] = {key: st.query_params.get_all(key) for key in st.query_params}
    st.session_state[_SHARED] = {}
    st.session_state[_BOUND] = {}
    st.session_state[_IGNORED] = {}
    st.session_state[_NOTICE] = st.empty()


def share(**values: Any) -> None:
    """Put these values in the URL at the end of the run."""
    st.session_state.setdefault(_SHARED, {}).update(values)


def _to_url(value: Any) -> str | list[str] | None:
    if value is None or value == "" or value == [] or value == ():
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return str(value)


def url_params(**overrides: Any) -> dict[str, str | list[str]]:
    """The URL's parameters: a list is a repeated key."""
    values = {**_bound_values(), **st.session_state.get(_SHARED, {}), **overrides}
    return {key: text for key, value in values.items() if (text := _to_url(value)) is not None}


def _listed(params: dict[str, str | list[str]]) -> dict[str, list[str]]:
    return {key: [value] if isinstance(value, str) else list(value) for key, value in params.items()}


def publish_url() -> None:
    """Write the shared values to the browser's URL."""
    params = url_params()
    if _listed(params) != {key: st.query_params.get_all(key) for key in st.query_params}:
        st.query_params.from_dict(params)


def cell_text(cell: tuple[str, str] | None) -> str:
    """A cell as its URL value, `row|column` (empty for none)."""
    return "" if cell is None else f"{cell[0]}|{cell[1]}"


def request_page(page_id: str, model: str, cell: tuple[str, str] | None = None, view: str | None = None) -> None:
    """Widget callback: show this page in the Overlays page on this run (see `follow_page_request`),
    with this cell of this matrix view highlighted. A callback runs before the widgets are
    created, so it may set their values."""
    st.session_state[PAGE] = page_id
    st.session_state[MODEL] = model
    if cell is not None:
        st.session_state[CELL] = cell_text(cell)
    if view is not None:
        st.session_state[VIEW] = view
        st.session_state.pop(VIEW_MODE, None)  # the view asked for wins over the mode's remembered one
    st.session_state[OPEN_OVERLAYS] = True


def set_pages(pages: dict[str, Any]) -> None:
    """The app's pages by name (`st.Page`s of this run), for `switch_to`."""
    st.session_state[PAGES] = pages


def switch_to(page: str, query: dict[str, Any]) -> None:
    """Go to the page named `page` (its URL path) now, with this query."""
    st.switch_page(st.session_state[PAGES][page], query_params=query)


def request_switch(page: str, **values: str) -> None:
    """Widget callback: go to the page named `page` on this run (see `follow_page_request`), these values in its URL."""
    st.session_state[SWITCH] = (page, values)


def follow_page_request() -> None:
    """Switch to the page a callback asked for (Overlays with a page, `request_page`; another with
    `request_switch`), keeping the view in the URL."""
    session = st.session_state
    if session.pop(OPEN_OVERLAYS, False):
        switch_to(OVERLAYS_PAGE, url_params(**{PAGE: session[PAGE], MODEL: session[MODEL], CELL: session.get(CELL), VIEW: session.get(VIEW)}))
    if (switch := session.pop(SWITCH, None)) is not None:
        page, values = switch
        switch_to(page, url_params(**values))
