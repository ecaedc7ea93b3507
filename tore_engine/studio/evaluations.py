"""Loading and evaluating a dataset, cached for every session of the process.

Evaluations are kept in one process-wide store (a `st.cache_resource` object) rather than behind
`st.cache_data`: an evaluation shows a progress bar while it runs, and cached functions would
record and replay that bar. Entries are read-only once stored. The key holds everything that
changes what is shown (the files and their versions, format, taxonomy mode, label map and title),
not how it was computed (workers, scheduler: the numbers are the same).

The label map is applied here, once: the layouts kept for drawing boxes are the ones the engine
evaluated, so the engine gets no label map of its own (its warnings about unused keys are added
where the engine puts them, first).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import streamlit as st

from tore_engine.api import evaluate_pair
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio.compute import dask_executor
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.sidebar import REFERENCE, Dataset

MAX_ENTRIES = 8  # evaluations kept for all sessions


@dataclass
class Evaluated:
    """One prediction evaluated against one reference, with both layouts as evaluated (label map
    applied) for drawing their boxes. Pages are looked up by id on demand: a large layout is held
    column-wise (`PageColumns`) and is never turned into one object a page."""

    title: str
    reference: LayoutSet
    prediction: LayoutSet
    evaluation: Evaluation

    @cached_property
    def _reference_positions(self) -> dict[str, int]:
        return {page_id: position for position, page_id in enumerate(self.reference.page_ids())}

    @cached_property
    def _prediction_positions(self) -> dict[str, int]:
        return {page_id: position for position, page_id in enumerate(self.prediction.page_ids())}

    def reference_page(self, page_id: str) -> Page | None:
        position = self._reference_positions.get(page_id)
        return None if position is None else self.reference.pages[position]

    def prediction_page(self, page_id: str) -> Page | None:
        position = self._prediction_positions.get(page_id)
        return None if position is None else self.prediction.pages[position]


class EvaluationStore:
    """A small process-wide LRU of evaluations, shared by all sessions."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
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
    formats: tuple[str, str] = ("auto", "auto"),
    taxonomy: str = "auto",
    label_map: Path | None = None,
    coco_images: Path | None = None,
    page_images: Path | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluated:
    """Load and evaluate one pair (`api.evaluate_pair`) (cached by everything but `workers` and
    `scheduler`, which do not change the result); `scheduler` is the name of a configured Dask
    scheduler. Raises `InputError` for bad input."""
    key = (_stamp(reference), _stamp(prediction), formats, taxonomy, _stamp(label_map), _stamp(coco_images), _stamp(page_images), title)
    store = evaluation_store()
    cached = store.get(key)
    if cached is not None:
        return cached
    executor = dask_executor(scheduler) if scheduler else None
    pair = evaluate_pair(reference, prediction, format=formats, taxonomy=taxonomy, label_map=label_map, coco_images=coco_images,
                         page_images=page_images, workers=workers, executor=executor, progress=progress)
    result = Evaluated(title, pair.reference, pair.prediction, pair.evaluation)
    store.put(key, result)
    return result


def _evaluate_with_progress(reference: Path, prediction: Path, title: str, **options: Any) -> Evaluated | None:
    """`evaluate`, with a progress bar while it runs and the engine's message for bad input."""
    bar = st.empty()

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Evaluating {plain_for_markdown(title)}: {done:,} of {total:,} pages")

    try:
        return evaluate(reference, prediction, title=title, progress=progress, **options)
    except InputError as error:
        show_input_error(error, title=title)
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
        formats=(dataset.format_of(REFERENCE), dataset.format_of(model)), taxonomy=dataset.taxonomy, **_reading(dataset),
    )


def _reading(dataset: Dataset) -> dict[str, Any]:
    """How every pair of the dataset is read and computed, besides its formats and taxonomy."""
    return {"label_map": dataset.label_map, "coco_images": dataset.coco_images, "page_images": dataset.page_images,
            "workers": dataset.workers, "scheduler": dataset.scheduler}


def model_against_model(dataset: Dataset) -> Evaluated | None:
    """Model A taken as the reference and model B as the prediction, in dual-taxonomy mode (two
    COCO results lists are read against the dataset's COCO images + categories file)."""
    if not {"A", "B"} <= set(dataset.models):
        return None
    return _evaluate_with_progress(
        dataset.models["A"], dataset.models["B"], "model B against model A",
        formats=(dataset.format_of("A"), dataset.format_of("B")), taxonomy="dual", **_reading(dataset),
    )
