"""The sidebar: where the dataset comes from (the embedded demo, uploads, paths on the server), how
to read it, and where to compute. Shared by every page, so its choices persist across pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from tore_engine.errors import InputError
from tore_engine.formats import FORMATS
from tore_engine.studio import uploads, url_state
from tore_engine.studio.compute import compute_choices
from tore_engine.studio.data_root import data_root, server_path
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.plain_text import plain_for_markdown

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo" / "data"
DEMO_FILES = {"reference": "reference.json", "A": "model_a.json", "B": "model_b.json"}
SOURCES = {"demo": "Embedded demo", "upload": "Upload files", "path": "Paths on the server"}
TAXONOMY_MODES = ("auto", "single", "dual")
MODELS = ("A", "B")
LAYOUT_HELP = "layout JSON (formats.md section 1), COCO instances JSON, or a COCO results list"
LABEL_MAP_HELP = "a JSON object {\"old label\": \"new label\"}, applied to both sides"
DEMO_NOTE = (
    "**Embedded demo**: 26 synthetic pages drawn by the project, with their exact ground truth "
    "(11 DocLayNet classes). Models A and B are **simulated**: their predictions are made from the "
    "ground truth by seeded perturbations (model A: same 11 classes, jittered, missed, confused and "
    "split boxes; model B: 6 coarse classes, oversized and merged boxes), not by trained detectors."
)


@dataclass(frozen=True)
class Dataset:
    """What to evaluate: a reference, one or two predictions (models A and B), how to read them,
    and the folder the page images they name may come from."""

    source: str
    reference: Path | None
    models: dict[str, Path]
    image_root: Path
    format_name: str = "auto"
    taxonomy: str = "auto"
    label_map: Path | None = None
    workers: int = 1
    scheduler: str | None = None  # the name of a configured Dask scheduler

    @property
    def is_demo(self) -> bool:
        return self.source == "demo"

    def model_label(self, model: str) -> str:
        """Plain text (a file name): escape it where Markdown or Plotly reads it."""
        name = self.models[model].stem if model in self.models else "?"
        return f"model {model} ({'simulated' if self.is_demo else name})"


def _optional(model: str) -> str:
    return " (optional)" if model == "B" else ""


def _path_input(label: str, key: str, help_text: str) -> Path | None:
    """A path on the server, inside the data root (`studio.data_root`); None when empty or refused."""
    url_state.seed(key, "")
    text = st.sidebar.text_input(label, key=key, help=f"{help_text} (inside {plain_for_markdown(data_root())})",
                                 persist_state="session").strip()
    if not text:
        return None
    try:
        return server_path(text)
    except InputError as error:
        show_input_error(error, where=st.sidebar)
        return None


def _demo() -> tuple[Path, dict[str, Path], Path | None]:
    st.sidebar.caption("Models A and B of the demo are simulated (made from the ground truth, not trained).")
    label_map = _path_input("Label map (optional path)", "map", LABEL_MAP_HELP)
    url_state.share(src="demo", map=label_map)
    return DEMO_DIR / DEMO_FILES["reference"], {model: DEMO_DIR / DEMO_FILES[model] for model in MODELS}, label_map


def _uploaded() -> tuple[Path | None, dict[str, Path], Path | None]:
    st.sidebar.caption(f"JSON files of at most {uploads.MAX_UPLOAD_MB} MB each and {uploads.MAX_SESSION_UPLOAD_MB} MB in all, "
                       "read as data only and kept only for this session; for larger datasets, use paths on the server.")
    reference = uploads.uploader("Reference", "ref", LAYOUT_HELP)
    models = {model: path for model in MODELS
              if (path := uploads.uploader(f"Prediction, model {model}{_optional(model)}", model.lower(), LAYOUT_HELP)) is not None}
    label_map = uploads.uploader("Label map (optional)", "map", LABEL_MAP_HELP)
    st.sidebar.button("Forget the uploaded files", on_click=uploads.forget, help="delete them from the server now")
    url_state.share(src="upload")
    return reference, models, label_map


def _on_the_server() -> tuple[Path | None, dict[str, Path], Path | None, str]:
    reference = _path_input("Reference", "ref", "a file or folder on the server, in any format `tore evaluate` reads")
    models = {model: path for model in MODELS
              if (path := _path_input(f"Prediction, model {model}{_optional(model)}", model.lower(), "a file or folder on the server")) is not None}
    label_map = _path_input("Label map (optional)", "map", LABEL_MAP_HELP)
    formats = list(FORMATS)
    url_state.seed("fmt", "auto", formats)
    format_name = st.sidebar.selectbox("Format", formats, key="fmt", persist_state="session")
    url_state.share(src="path", ref=reference, a=models.get("A"), b=models.get("B"), map=label_map, fmt=format_name)
    return reference, models, label_map, format_name


def sidebar() -> Dataset:
    """Render the shared dataset choices in the sidebar and return them."""
    st.sidebar.header("Dataset")
    url_state.seed("src", "demo", list(SOURCES))
    source = st.sidebar.radio("Source", list(SOURCES), format_func=SOURCES.get, key="src", persist_state="session")
    format_name = "auto"
    if source == "demo":
        (reference, models, label_map), image_root = _demo(), DEMO_DIR
    elif source == "upload":
        (reference, models, label_map), image_root = _uploaded(), uploads.session_root()
    else:
        (reference, models, label_map, format_name), image_root = _on_the_server(), data_root()
    url_state.seed("tax", "auto", list(TAXONOMY_MODES))
    taxonomy = st.sidebar.selectbox(
        "Taxonomy", TAXONOMY_MODES, key="tax", persist_state="session",
        help="single: one class list for both sides; dual: the matrix runs over both class lists "
             "(for a model with other classes than the dataset); auto: single when every predicted class is a reference class",
    )
    url_state.share(tax=taxonomy)
    workers, scheduler = compute_choices()
    return Dataset(source, reference, models, image_root, format_name, taxonomy, label_map, workers, scheduler)
