"""The sidebar: where the dataset comes from (the embedded demo, uploads, paths on the server), how
to read it, and where to compute. Shared by every page, so its choices persist across pages.

A dataset has one reference and one to `len(MODELS)` predictions, models A, B, C, ... (the
Models page puts them side by side, Compare takes any two).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import streamlit as st

from tore_engine.api import FORMATS, detect_format
from tore_engine.core.errors import InputError
from tore_engine.formats.page_id_map import RULE_PATTERN, page_id_map, shown_id
from tore_engine.metrics.mean_average_precision import CONVENTIONS
from tore_engine.metrics.sweep import MIN_SCORE_SIDES
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.studio import sections, state, uploads
from tore_engine.studio.compute import compute_choices
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE, DEMO_DIR, data_root, server_path
from tore_engine.studio.messages import show_input_error, shown_errors

DEMO_FILES = {"reference": "reference.json", "A": "model_a.json", "B": "model_b.json"}
SOURCES = {"demo": "Embedded demo", "upload": "Upload files", "path": "Paths on the server", "saved": "Saved evaluations"}
TAXONOMY_MODES = ("auto", "single", "dual")
NO_MIN_SCORE = 0.0  # the minimum score's "none": every box kept, as without --min-score
MAP_CONVENTIONS = tuple(CONVENTIONS)  # coco (the command line's default), docling
MAP_CONVENTION_LABELS = {"coco": "coco (pycocotools' COCOeval)", "docling": "docling (docling-metrics-layout 0.17.0)"}
MODELS = state.MODEL_LETTERS  # at most this many predictions a dataset
DEFAULT_MODELS = 2
REFERENCE = "reference"
SIDEBAR_WIDTH = 400  # pixels: room for a path
BOTH_SIDES_FORMAT = "docling-eval"  # one dataset holds the reference and the predictions of model A
FORMATS_OPEN = state.SECTION("formats")  # the section of the format pickers (session state and URL)
FORMAT_HELP = "auto: recognised from the content; or the format this input is in"
LAYOUT_HELP = ("a layout in any format the app reads (layout JSON, JSON Lines, Parquet, COCO, DoclingDocument, DocTags, ...): "
               "one file, or several that make one set (the documents of a Docling folder, say)")
PATH_CAPTION = (f"Paths are relative to the server's data folder (`{DATA_ROOT_VARIABLE}`, by default the folder the app was "
                "started in), for example `shared/data/layouts/docling_documents/heron`; a file or a folder (Docling, "
                "DocTags, Parquet, a docling-eval dataset).")
COCO_IMAGES_HELP = ("the COCO images + categories file that COCO results lists refer to: needed when both models "
                    "are results lists, or when the reference is not a COCO instances file")
PAGE_IMAGES_HELP = "the page images or PDFs the layouts name, when they are not beside the layout files"
LABEL_MAP_HELP = "a JSON object {\"old label\": \"new label\"}, applied to both sides"
PAGE_ID_HELP = ("when the predictions name the reference's pages otherwise (doc_page_00000 for page_00000): a rule that maps "
                "their ids to the reference's, strip-prefix:TEXT, strip-suffix:TEXT, add-prefix:TEXT or add-suffix:TEXT "
                "(as tore evaluate --page-id-map); empty: ids as they are")
MAX_RULE_CHARACTERS = 200
WORD_JOINER = "\u2060"
SIDE_LABELS = {"both": "both sides", "prediction": "the predictions only"}
DEMO_CAPTION = "Embedded demo: 26 synthetic pages; models A and B are simulated from the ground truth, not trained."
DEMO_NOTE = (
    "**Embedded demo**: 26 synthetic pages drawn by the project, with their exact ground truth "
    "(11 DocLayNet classes). Models A and B are **simulated**: their predictions are made from the "
    "ground truth by seeded perturbations (model A: same 11 classes, jittered, missed, confused and "
    "split boxes; model B: 6 coarse classes, oversized and merged boxes), not by trained detectors."
)


def input_keys(side: str) -> tuple[state.Key, state.Key]:
    """The URL key (and upload slot) of an input, and its format picker's: ref / fmt, a / fmt_a, ..."""
    if side == REFERENCE:
        return state.REFERENCE_INPUT, state.REFERENCE_FORMAT
    return state.MODEL_INPUTS[side], state.MODEL_FORMATS[side]


def set_name(side: str) -> str:
    """The name of an input uploaded as several files (their folder's name): `reference`, `model_a`, ..."""
    return REFERENCE if side == REFERENCE else f"model_{side.lower()}"


def input_label(side: str) -> str:
    return "Reference" if side == REFERENCE else f"Model {side} (prediction{'' if side == 'A' else ', optional'})"


@dataclass(frozen=True)
class Dataset:
    """What to evaluate: a reference, one or more predictions (models A, B, ...), how to read each
    of them, and the folder the page images they name may come from."""

    source: str
    reference: Path | None
    models: dict[str, Path]
    image_root: Path
    formats: dict[str, str] = field(default_factory=dict)  # REFERENCE, "A", "B", ... -> a name of FORMATS
    taxonomy: str = "auto"
    label_map: Path | None = None
    coco_images: Path | None = None
    page_images: Path | None = None
    workers: int = 1
    scheduler: str | None = None  # the name of a configured Dask scheduler
    min_score: float | None = None  # boxes scored below it dropped on both sides (--min-score); None: all kept
    map_convention: str = MAP_CONVENTIONS[0]  # mAP's convention (--map)
    min_score_side: str = MIN_SCORE_SIDES[0]  # whose boxes the minimum score drops (--min-score-side)
    page_id_rule: str | None = None  # how the predictions' page ids become the reference's (--page-id-map RULE)

    @property
    def is_demo(self) -> bool:
        return self.source == "demo"

    @property
    def is_saved(self) -> bool:
        """Each model is an evaluation saved by `tore evaluate --out DIR` (`models` name the folders), opened, not evaluated."""
        return self.source == "saved"

    def format_of(self, side: str) -> str:
        return self.formats.get(side, "auto")


def _format_pickers(sides: tuple[str, ...]) -> dict[str, str]:
    """One format picker an input, together under one section (auto suits most inputs), whose label
    names the formats chosen, so that a closed section does not hide them."""
    keys = {side: input_keys(side)[1] for side in sides}
    for key in keys.values():
        state.seed(key, "auto", list(FORMATS))
    chosen = [f"{st.session_state[key]} ({'reference' if side == REFERENCE else f'model {side}'})" for side, key in keys.items()
              if st.session_state[key] != "auto"]
    label = f"Formats: {', '.join(chosen)}" if chosen else "Formats (auto: recognised from the content)"
    section = sections.opened(label, FORMATS_OPEN, where=st.sidebar)
    if section is not None:
        with section:
            for side, key in keys.items():
                st.selectbox(f"Format of {'the reference' if side == REFERENCE else f'model {side}'}", FORMATS, key=key,
                             persist_state="session", help=FORMAT_HELP)
    return {side: st.session_state[key] for side, key in keys.items()}


def _path_input(label: str, key: state.Key, help_text: str, where=st.sidebar) -> Path | None:
    """A path on the server, inside the data root (`studio.data_root`); None when empty or refused."""
    text = where.text_input(label, help=help_text, placeholder="a path relative to the data folder", **state.bind(key)).strip()
    if not text:
        return None
    try:
        return server_path(text)
    except InputError as error:
        show_input_error(error, where=st.sidebar)
        return None


def _holds_both_sides(path: Path, format_name: str) -> bool:
    """Whether the reference is a dataset that also holds model A's predictions (docling-eval)."""
    if format_name != "auto":
        return format_name == BOTH_SIDES_FORMAT
    try:
        return detect_format(path) == BOTH_SIDES_FORMAT
    except InputError:  # the reader says why, when it reads it
        return False


@dataclass(frozen=True)
class _Chosen:
    """The inputs one source gave: paths and formats."""

    reference: Path | None
    models: dict[str, Path]
    formats: dict[str, str]
    label_map: Path | None = None
    coco_images: Path | None = None
    page_images: Path | None = None


def _model_count() -> list[str]:
    """The models the sidebar offers inputs for: A, B, and as many more as asked."""
    count = st.sidebar.number_input("Number of models", 1, len(MODELS), **state.bind(state.MODELS, DEFAULT_MODELS, range(1, len(MODELS) + 1)),
                                    help="predictions evaluated against the same reference; the Models page puts them side by side")
    return list(MODELS[: int(count)])


def _demo() -> _Chosen:
    st.sidebar.caption(DEMO_CAPTION, help=DEMO_NOTE)
    label_map = _path_input("Label map (optional path)", state.LABEL_MAP, LABEL_MAP_HELP)
    return _Chosen(DEMO_DIR / DEMO_FILES[REFERENCE], {model: DEMO_DIR / DEMO_FILES[model] for model in ("A", "B")}, {}, label_map)


def _with_both_sides(reference: Path | None, models: dict[str, Path], formats: dict[str, str]) -> dict[str, Path]:
    """The models, model A being the reference itself when it holds both sides and none was given."""
    if "A" not in models and reference is not None and _holds_both_sides(reference, formats[REFERENCE]):
        st.sidebar.caption("Model A: the predictions stored in this docling-eval dataset.")
        return {"A": reference, **models}
    return models


def _guarded(uploader: Callable[[], Path | None]) -> Path | None:
    """What an uploader gives, or None when it fails (the error shown in the sidebar): one bad
    upload never hides the rest of the sidebar, "Forget the uploaded files" least of all."""
    with shown_errors(where=st.sidebar):
        return uploader()
    return None


def _chosen(paths: dict[str, Path | None], formats: dict[str, str], models: list[str], **others: Path | None) -> _Chosen:
    chosen_models = {model: path for model in models if (path := paths[model]) is not None}
    return _Chosen(paths[REFERENCE], _with_both_sides(paths[REFERENCE], chosen_models, formats), formats, **others)


def _uploaded() -> _Chosen:
    st.sidebar.caption(f"Files of at most {uploads.MAX_UPLOAD_MB} MB each and {uploads.MAX_SESSION_UPLOAD_MB} MB in all, "
                       "read as data only and kept only for this session; for larger datasets, use paths on the server. "
                       "Several files for one input make one set (the documents of a Docling folder, say).")
    models = _model_count()
    sides = (REFERENCE, *models)
    paths = {side: _guarded(partial(uploads.layouts_uploader, input_label(side), input_keys(side)[0], LAYOUT_HELP, set_name(side)))
             for side in sides}
    formats = _format_pickers(sides)
    coco_images = _guarded(partial(uploads.uploader, "COCO images + categories (optional)", "coco", COCO_IMAGES_HELP, types=("json",)))
    page_images = _guarded(partial(uploads.pages_uploader, "Page images (optional)", "pages",
                                   f"{PAGE_IMAGES_HELP}: image or PDF files, or a zip of them"))
    label_map = _guarded(partial(uploads.uploader, "Label map (optional)", "map", LABEL_MAP_HELP, types=("json",)))
    st.sidebar.button("Forget the uploaded files", on_click=uploads.forget, help="delete them from the server now")
    return _chosen(paths, formats, models, label_map=label_map, coco_images=coco_images, page_images=page_images)


def _on_the_server() -> _Chosen:
    st.sidebar.caption(PATH_CAPTION)
    models = _model_count()
    sides = (REFERENCE, *models)
    paths = {side: _path_input(input_label(side), input_keys(side)[0], f"{LAYOUT_HELP}; relative to the data folder") for side in sides}
    formats = _format_pickers(sides)
    coco_images = _path_input("COCO images + categories (optional)", state.COCO_IMAGES, f"{COCO_IMAGES_HELP}; relative to the data folder")
    page_images = _path_input("Page images folder (optional)", state.PAGE_IMAGES, f"{PAGE_IMAGES_HELP}; a folder relative to the data folder")
    label_map = _path_input("Label map (optional)", state.LABEL_MAP, f"{LABEL_MAP_HELP}; relative to the data folder")
    state.share(**{input_keys(side)[1]: formats[side] for side in formats})  # the formats of the paths given
    return _chosen(paths, formats, models, label_map=label_map, coco_images=coco_images, page_images=page_images)


SAVED_HELP = ("a folder `tore evaluate ... --out DIR` wrote (it holds saved.json), relative to the data folder: opened as it was "
              "evaluated, without its inputs; the Runs page lists those under a folder")


def saved_key(model: str) -> state.Key:
    """The URL key of model `model`'s saved evaluation: `saved` for A (`?saved=PATH`), `saved_b`, ... for the others."""
    return state.SAVED[model]


def _saved() -> _Chosen:
    """Saved evaluations as the models: each opened, never evaluated again; their reference is
    the one each was evaluated against (the first one's stands for the dataset's)."""
    st.sidebar.caption(PATH_CAPTION.replace("for example `shared/data/layouts/docling_documents/heron`; a file or a folder "
                                            "(Docling, DocTags, Parquet, a docling-eval dataset)", "a folder of `tore evaluate --out`"))
    models = _model_count()
    folders = {model: _path_input(f"Saved evaluation of model {model}{'' if model == 'A' else ' (optional)'}", saved_key(model), SAVED_HELP)
               for model in models}
    chosen = {model: folder for model, folder in folders.items() if folder is not None}
    return _Chosen(next(iter(chosen.values()), None), chosen, {})


SOURCE_INPUTS = {"demo": _demo, "upload": _uploaded, "path": _on_the_server, "saved": _saved}


def _image_root(source: str) -> Path:
    """The folder that page images named by this source's inputs must lie in."""
    if source == "demo":
        return DEMO_DIR
    return uploads.session_root() if source == "upload" else data_root()


def settings_label(taxonomy: str, min_score: float, convention: str, side: str = MIN_SCORE_SIDES[0], rule: str = "") -> str:
    """What the evaluation settings' button says: its choices, so that a closed popover hides none."""
    boxes = "every box" if min_score == NO_MIN_SCORE else f"boxes scored {min_score:.2f} or more"
    if min_score != NO_MIN_SCORE and side != MIN_SCORE_SIDES[0]:
        boxes += " (the prediction's)"
    return f"Evaluation: {taxonomy} taxonomy, {boxes}, mAP {convention}" + (f", page ids {rule}" if rule else "")


def page_id_rule(text: str) -> str | None:
    """The page id rule typed (None when empty), or an `InputError`: only a rule, never a path (the
    text may come from a link)."""
    text = text.replace(WORD_JOINER, "").strip()  # the app's messages break "strip-prefix:doc_" with one (a shortcode else)
    if not text:
        return None
    if RULE_PATTERN.match(text) is None:
        raise InputError(f"a page id rule is strip-prefix:TEXT, strip-suffix:TEXT, add-prefix:TEXT or add-suffix:TEXT, got {shown_id(text)}")
    page_id_map(text)  # checks the text as the engine will
    return text


def _page_id_input() -> str | None:
    """The page id rule (`--page-id-map RULE`), in the URL as `pidmap`; a bad one is said in the sidebar and not used."""
    text = st.text_input("Page ids of the predictions", key=state.PAGE_ID_RULE, persist_state="session", max_chars=MAX_RULE_CHARACTERS,
                         placeholder="e.g. strip-prefix:doc_", help=PAGE_ID_HELP)
    try:
        rule = page_id_rule(text)
    except InputError as error:
        show_input_error(error)
        return None
    state.share(**{state.PAGE_ID_RULE: rule})  # the rule as checked, not as typed
    return rule


def _evaluation_settings() -> tuple[str, float | None, str, str, str | None]:
    """The taxonomy mode (`--taxonomy`), the minimum score (`--min-score`; 0 keeps every box) and
    mAP's convention (`--map`), in the URL as `tax`, `min_score` and `convention`; all three change
    the numbers, so evaluations are kept by them. In one popover whose button names them (its
    content drawn in the browser only while open)."""
    bound = {state.TAXONOMY: state.bind(state.TAXONOMY, choices=list(TAXONOMY_MODES)),
             state.MIN_SCORE: state.bind(state.MIN_SCORE, NO_MIN_SCORE, state.Interval(0.0, 1.0)),
             state.CONVENTION: state.bind(state.CONVENTION, MAP_CONVENTIONS[0], list(MAP_CONVENTIONS)),
             state.SCORE_SIDE: state.bind(state.SCORE_SIDE, MIN_SCORE_SIDES[0], list(MIN_SCORE_SIDES))}
    state.seed(state.PAGE_ID_RULE, "")
    session = st.session_state
    if not isinstance(session[state.PAGE_ID_RULE], str) or len(session[state.PAGE_ID_RULE]) > MAX_RULE_CHARACTERS:
        session[state.PAGE_ID_RULE] = ""  # a link's value the text box could not hold
    label = settings_label(session[state.TAXONOMY], session[state.MIN_SCORE], session[state.CONVENTION], session[state.SCORE_SIDE],
                           plain_for_markdown(session[state.PAGE_ID_RULE].strip()))
    with st.sidebar.popover(label, key=state.SETTINGS, width="stretch"):
        taxonomy = st.selectbox(
            "Taxonomy", TAXONOMY_MODES, **bound[state.TAXONOMY],
            help="single: one class list for both sides; dual: the matrix runs over both class lists "
                 "(for a model with other classes than the dataset); auto: single when every predicted class is a reference "
                 "class, or when both sides use one declared vocabulary (Docling's labels, say)")
        min_score = st.number_input(
            "Minimum score", 0.0, 1.0, step=0.05, format="%.2f", **bound[state.MIN_SCORE],
            help="boxes scored below it are dropped on both sides before TORE and mAP (as tore evaluate --min-score); 0 keeps every "
                 "box; boxes without a score are always kept. A click on a point of Matrices' operating-point chart sets it")
        side = st.radio("Minimum score drops the boxes of", MIN_SCORE_SIDES, horizontal=True, **bound[state.SCORE_SIDE],
                        format_func=SIDE_LABELS.__getitem__,
                        help="both sides (as tore evaluate --min-score), or the predictions' only (--min-score-side prediction): "
                             "to compare a model against another model's scored output kept whole; the operating point follows")
        convention = st.selectbox(
            "mAP convention", MAP_CONVENTIONS, format_func=MAP_CONVENTION_LABELS.__getitem__, **bound[state.CONVENTION],
            help="coco: pycocotools' COCOeval (the default of tore evaluate --map); docling: docling-metrics-layout 0.17.0's numbers "
                 "(float32 thresholds and values), as docling-eval prints them")
        rule = _page_id_input()
    return taxonomy, (None if min_score == NO_MIN_SCORE else float(min_score)), convention, side, rule


def sidebar() -> Dataset:
    """Render the shared dataset choices in the sidebar and return them."""
    st.sidebar.header("Dataset")
    opened = "saved" if state.given_values(saved_key("A")) else "demo"  # `?saved=PATH` alone opens it
    source = st.sidebar.radio("Source", list(SOURCES), format_func=SOURCES.get, **state.bind(state.SOURCE, opened, list(SOURCES)))
    chosen = SOURCE_INPUTS[source]()
    taxonomy, min_score, convention, side, rule = _evaluation_settings()
    workers, scheduler = compute_choices()
    return Dataset(source, chosen.reference, chosen.models, _image_root(source), chosen.formats, taxonomy, chosen.label_map,
                   chosen.coco_images, chosen.page_images, workers, scheduler, min_score, convention, side, rule)
