"""The app's shared state: the sidebar's dataset choices, the URL, and cached loading/evaluation.

Every choice lives in `st.session_state` under the same key as its URL query parameter, seeded
from the URL on a session's first run, and written back to the URL after each run, so a link
reopens the same view. Widgets use `persist_state="session"` so a value survives page switches.

Evaluations are kept in one process-wide store (a `st.cache_resource` object) rather than behind
`st.cache_data`: an evaluation shows a progress bar while it runs, and cached functions would
record and replay that bar. Entries are read-only once stored.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from tore_engine.cluster import dask_client
from tore_engine.dataset import DatasetEvaluation, evaluate_dataset
from tore_engine.errors import InputError
from tore_engine.layout import LayoutSet, Page, PageImage
from tore_engine.loaders import PAIR_LOADERS, load_pair
from tore_engine.taxonomy import apply_label_map, read_label_map
from tore_engine.studio import rendering
from tore_engine.studio.data_root import data_root, server_path

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo" / "data"
DEMO_FILES = {"reference": "reference.json", "A": "model_a.json", "B": "model_b.json"}
SOURCES = {"demo": "Embedded demo", "upload": "Upload files", "path": "Paths on the server"}
TAXONOMY_MODES = ("auto", "single", "dual")
MODELS = ("A", "B")
OVERLAYS_PAGE = "app_pages/overlays.py"
UPLOAD_DIR = Path(tempfile.gettempdir()) / "tore_studio_uploads"
MAX_UPLOAD_MB = 200  # larger datasets: paths on the server
DEMO_NOTE = (
    "**Embedded demo**: 26 synthetic pages drawn by the project, with their exact ground truth "
    "(11 DocLayNet classes). Models A and B are **simulated**: their predictions are made from the "
    "ground truth by seeded perturbations (model A: same 11 classes, jittered, missed, confused and "
    "split boxes; model B: 6 coarse classes, oversized and merged boxes), not by trained detectors."
)


# --- URL <-> session state -------------------------------------------------------------------


def _from_url(text: str, default: Any) -> Any:
    if isinstance(default, bool):
        return text == "1"
    return text


def _to_url(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def seed(key: str, default: Any, options: list | tuple | None = None) -> None:
    """Give `key` its URL value on the session's first run (else `default`), and fall back to
    `default` whenever the stored value is not one of `options`. Call before the widget."""
    if key not in st.session_state:
        st.session_state[key] = _from_url(st.query_params[key], default) if key in st.query_params else default
    if options is not None and st.session_state[key] not in options:
        st.session_state[key] = default


def begin_run() -> None:
    """Start collecting the values this run puts in the URL."""
    st.session_state["_url"] = {}


def share(**values: Any) -> None:
    """Put these values in the URL at the end of the run."""
    st.session_state.setdefault("_url", {}).update(values)


def url_params(**overrides: Any) -> dict[str, str]:
    values = {**st.session_state.get("_url", {}), **overrides}
    return {key: text for key, value in values.items() if (text := _to_url(value)) is not None}


def publish_url() -> None:
    """Write the shared values to the browser's URL."""
    params = url_params()
    if params != st.query_params.to_dict():
        st.query_params.from_dict(params)


def request_page(page_id: str, model: str) -> None:
    """Widget callback: show this page in the Overlays page on this run (see `follow_page_request`).
    A callback runs before the widgets are created, so it may set their values."""
    st.session_state["page"] = page_id
    st.session_state["model"] = model
    st.session_state["_open_overlays"] = True


def follow_page_request() -> None:
    """Switch to the Overlays page if a callback asked for it, keeping the view in the URL."""
    if st.session_state.pop("_open_overlays", False):
        page_id, model = st.session_state["page"], st.session_state["model"]
        st.switch_page(OVERLAYS_PAGE, query_params=url_params(page=page_id, model=model))


# --- dataset choices -------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """What to evaluate: a reference, one or two predictions (models A and B), how to read them."""

    source: str
    reference: Path | None
    models: dict[str, Path]
    format_name: str = "auto"
    taxonomy: str = "auto"
    label_map: Path | None = None
    workers: int = 1
    scheduler: str | None = None  # a Dask scheduler address

    @property
    def is_demo(self) -> bool:
        return self.source == "demo"

    def model_label(self, model: str) -> str:
        name = self.models[model].stem if model in self.models else "?"
        return f"model {model} ({'simulated' if self.is_demo else name})"


def _save_upload(upload) -> Path:
    """An uploaded file as a file on the server (the loaders read paths; formats are detected from
    the content). Kept under a content hash, so the same upload is the same path."""
    data = upload.getvalue()
    folder = UPLOAD_DIR / hashlib.sha256(data).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / Path(upload.name).name
    if not path.exists():
        path.write_bytes(data)
    return path


def _uploaded(label: str, key: str, help_text: str) -> Path | None:
    """A file uploader whose last upload survives page switches (its path is kept in the state)."""
    generation = st.session_state.get("_upload_generation", 0)
    upload = st.sidebar.file_uploader(
        label, type=["json"], key=f"upload_{key}_{generation}", max_upload_size=MAX_UPLOAD_MB,
        help=f"{help_text}; JSON only, at most {MAX_UPLOAD_MB} MB, read as data and never executed",
    )
    if upload is not None:
        st.session_state[f"uploaded_{key}"] = str(_save_upload(upload))
    path = st.session_state.get(f"uploaded_{key}")
    return Path(path) if path else None


def _forget_uploads() -> None:
    """Drop the kept uploads and empty the uploaders (new keys make new, empty widgets)."""
    for key in [key for key in st.session_state if str(key).startswith("uploaded_")]:
        del st.session_state[key]
    st.session_state["_upload_generation"] = st.session_state.get("_upload_generation", 0) + 1


def _path_input(label: str, key: str, help_text: str) -> Path | None:
    """A path on the server, inside the data root (`studio.data_root`); None when empty or refused."""
    seed(key, "")
    text = st.sidebar.text_input(label, key=key, help=f"{help_text} (inside {data_root()})", persist_state="session").strip()
    if not text:
        return None
    try:
        return server_path(text)
    except InputError as error:
        st.sidebar.error(error.paragraph())
        return None


def sidebar() -> Dataset:
    """Render the shared dataset choices in the sidebar and return them."""
    st.sidebar.header("Dataset")
    seed("src", "demo", list(SOURCES))
    source = st.sidebar.radio("Source", list(SOURCES), format_func=SOURCES.get, key="src", persist_state="session")
    format_name, models, label_map = "auto", {}, None
    formats = ["auto", *sorted(PAIR_LOADERS)]
    if source == "demo":
        reference = DEMO_DIR / DEMO_FILES["reference"]
        models = {model: DEMO_DIR / DEMO_FILES[model] for model in MODELS}
        st.sidebar.caption("Models A and B of the demo are simulated (made from the ground truth, not trained).")
        label_map = _path_input("Label map (optional path)", "map", "a JSON object {\"old label\": \"new label\"}, applied to both sides")
        share(src=source, map=label_map)
    elif source == "upload":
        st.sidebar.caption(f"JSON files of at most {MAX_UPLOAD_MB} MB each, read as data only; for larger datasets, use paths on the server.")
        help_text = "layout JSON (formats.md section 1), COCO instances JSON, or a COCO results list"
        reference = _uploaded("Reference", "ref", help_text)
        for model in MODELS:
            if (path := _uploaded(f"Prediction, model {model}" + (" (optional)" if model == "B" else ""), model.lower(), help_text)) is not None:
                models[model] = path
        label_map = _uploaded("Label map (optional)", "map", "a JSON object {\"old label\": \"new label\"}")
        st.sidebar.button("Forget the uploaded files", on_click=_forget_uploads)
        share(src=source)
    else:
        reference = _path_input("Reference", "ref", "a file or folder on the server, in any format `tore evaluate` reads")
        for model in MODELS:
            if (path := _path_input(f"Prediction, model {model}" + (" (optional)" if model == "B" else ""), model.lower(), "")) is not None:
                models[model] = path
        label_map = _path_input("Label map (optional)", "map", "a JSON object {\"old label\": \"new label\"}, applied to both sides")
        seed("fmt", "auto", formats)
        format_name = st.sidebar.selectbox("Format", formats, key="fmt", persist_state="session")
        share(src=source, ref=reference, a=models.get("A"), b=models.get("B"), map=label_map, fmt=format_name)
    seed("tax", "auto", list(TAXONOMY_MODES))
    taxonomy = st.sidebar.selectbox(
        "Taxonomy", TAXONOMY_MODES, key="tax", persist_state="session",
        help="single: one class list for both sides; dual: the matrix runs over both class lists "
             "(for a model with other classes than the dataset); auto: single when every predicted class is a reference class",
    )
    share(tax=taxonomy)
    workers, scheduler = _compute_choices()
    return Dataset(source, reference, models, format_name, taxonomy, label_map, workers, scheduler)


def _compute_choices() -> tuple[int, str | None]:
    """Local worker processes, or a Dask cluster; the numbers are the same either way."""
    with st.sidebar.expander("Compute"):
        seed("workers", 1)
        workers = st.number_input("Local worker processes", 1, os.cpu_count() or 1, key="workers", persist_state="session",
                                  help="pages are evaluated in batches over this many processes")
        seed("dask", "")
        scheduler = st.text_input("Dask scheduler (optional)", key="dask", persist_state="session",
                                  help="e.g. tcp://10.0.0.5:8786: send the pages to a Dask cluster instead (needs the 'dask' extra)").strip()
    return int(workers), scheduler or None


@st.cache_resource(show_spinner=False)
def _dask_executor(address: str) -> Executor:
    """One client a scheduler address for the server's lifetime, as its executor."""
    return dask_client(address).get_executor()


# --- loading and evaluating --------------------------------------------------------------------


@dataclass
class Evaluated:
    """One prediction evaluated against one reference, with both layouts as evaluated (label map
    applied) for drawing their boxes."""

    title: str
    reference: LayoutSet
    prediction: LayoutSet
    evaluation: DatasetEvaluation
    _reference_pages: dict[str, Page] = field(init=False, repr=False)
    _prediction_pages: dict[str, Page] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._reference_pages = {page.id: page for page in self.reference.pages}
        self._prediction_pages = {page.id: page for page in self.prediction.pages}

    def reference_page(self, page_id: str) -> Page | None:
        return self._reference_pages.get(page_id)

    def prediction_page(self, page_id: str) -> Page | None:
        return self._prediction_pages.get(page_id)


class EvaluationStore:
    """A small process-wide LRU of evaluations, shared by all sessions."""

    def __init__(self, max_entries: int = 8) -> None:
        self._entries: OrderedDict[tuple, Evaluated] = OrderedDict()
        self._lock = threading.Lock()
        self._max_entries = max_entries

    def get(self, key: tuple) -> Evaluated | None:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        return None

    def put(self, key: tuple, value: Evaluated) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)


@st.cache_resource(show_spinner=False)
def evaluation_store() -> EvaluationStore:
    return EvaluationStore()


def _stamp(path: Path | None) -> tuple:
    """What makes a cached result stale: the path and its modification time and size."""
    if path is None:
        return (None,)
    try:
        info = path.stat()
        return (str(path.resolve()), info.st_mtime_ns, info.st_size)
    except OSError:
        return (str(path), None, None)


def evaluate(
    reference: Path,
    prediction: Path,
    *,
    title: str,
    format_name: str = "auto",
    taxonomy: str = "auto",
    label_map: Path | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluated:
    """Load and evaluate one pair (cached; workers and scheduler do not change the result, so
    they are not part of the key); raises `InputError` for bad input."""
    key = (_stamp(reference), _stamp(prediction), format_name, taxonomy, _stamp(label_map))
    store = evaluation_store()
    cached = store.get(key)
    if cached is not None:
        return cached
    reference_set, prediction_set = load_pair(reference, prediction, format_name)
    mapping = read_label_map(label_map) if label_map is not None else {}
    executor = _dask_executor(scheduler) if scheduler else None
    evaluation = evaluate_dataset(
        reference_set, prediction_set, taxonomy=taxonomy, label_map=mapping, workers=workers, executor=executor, progress=progress
    )
    result = Evaluated(title, apply_label_map(reference_set, mapping), apply_label_map(prediction_set, mapping), evaluation)
    store.put(key, result)
    return result


def _evaluate_with_progress(reference: Path, prediction: Path, title: str, **options: Any) -> Evaluated | None:
    """`evaluate`, with a progress bar while it runs and the engine's message for bad input."""
    bar = st.empty()

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Evaluating {title}: {done:,} of {total:,} pages")

    try:
        return evaluate(reference, prediction, title=title, progress=progress, **options)
    except InputError as error:
        st.error(f"**{title}**: {error.paragraph()}")
        return None
    finally:
        bar.empty()


def model_evaluation(dataset: Dataset, model: str) -> Evaluated | None:
    """Model `model` against the dataset's reference, or None (with a message on the page)."""
    if dataset.reference is None or model not in dataset.models:
        st.info("Choose a reference and a prediction in the sidebar." if dataset.reference is None or model == "A"
                else f"Model {model} is not set: choose a second prediction in the sidebar.")
        return None
    return _evaluate_with_progress(
        dataset.reference, dataset.models[model], dataset.model_label(model),
        format_name=dataset.format_name, taxonomy=dataset.taxonomy, label_map=dataset.label_map,
        workers=dataset.workers, scheduler=dataset.scheduler,
    )


def model_against_model(dataset: Dataset) -> Evaluated | None:
    """Model A taken as the reference and model B as the prediction, in dual-taxonomy mode."""
    if not {"A", "B"} <= set(dataset.models):
        return None
    return _evaluate_with_progress(
        dataset.models["A"], dataset.models["B"], "model B against model A",
        format_name=dataset.format_name, taxonomy="dual", label_map=dataset.label_map,
        workers=dataset.workers, scheduler=dataset.scheduler,
    )


# --- page images -------------------------------------------------------------------------------


@st.cache_data(max_entries=128, show_spinner=False)
def _page_image_uri(path: str, stamp: tuple, pdf_page: int | None, width: float, height: float) -> str:
    try:
        return rendering.data_uri(rendering.render_page(PageImage(Path(path), pdf_page)))
    except rendering.PageImageError as error:
        return rendering.data_uri(rendering.placeholder(width, height, str(error)))


def page_image_uri(page: Page) -> str:
    """The page's image as a data URI (cached by file, modification time and page number), or a
    placeholder that says why there is none."""
    if page.image is None:
        return rendering.data_uri(rendering.placeholder(page.width, page.height, "This layout file names no page image for this page."))
    return _page_image_uri(str(page.image.path), _stamp(Path(page.image.path)), page.image.pdf_page, page.width, page.height)
