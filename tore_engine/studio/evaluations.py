"""Loading and evaluating a dataset, cached for every session and tab of the process.

Evaluations are kept in one process-wide store (a `st.cache_resource` object) rather than behind
`st.cache_data`: an evaluation shows a progress bar while it runs, and cached functions would
record and replay that bar; and `st.cache_data` copies its value for each caller, which at
100,000 pages costs seconds and hundreds of megabytes a rerun. Entries are read-only once stored,
together with what the views derive from them once (`core.derived.Derived`: the page index, the pages table),
so that a link to a cached evaluation opens in a new tab as fast as a view switch. The key holds
what changes the numbers (the files and their versions, formats, taxonomy mode, label map, minimum
score and its side, mAP's convention, the page id rule), not how they were computed (workers, scheduler: the numbers are the
same) nor how they are titled. The sweep of minimum scores is made from all boxes whatever the
minimum score, so it is kept once for every minimum score of a pair (`EvaluationStore.sweep`): a
click on one of its points evaluates at that score without sweeping again.

The label map is applied here, once: the layouts kept for drawing boxes are the ones the engine
evaluated, so the engine gets no label map of its own (its warnings about unused keys are added
where the engine puts them, first). The minimum score is applied to a page when it is looked up
(`Evaluated.reference_page`), so the boxes drawn, lit and evaluated again for one document are
those the engine kept.

Titles come from the layouts' own names (`LayoutSet.name`), remembered once a side was read:
"reference (ground-truth)", "model A (heron)".
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from tore_engine.api import evaluate_pair, saved_inputs
from tore_engine.core.derived import Derived
from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.core.packed_warnings import PackedWarnings
from tore_engine.formats.page_id_map import PageIdMap, page_id_map
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS
from tore_engine.plots.plain_text import plain_for_markdown, shortened
from tore_engine.results import saved
from tore_engine.results.drilldown import pages_table
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio import background
from tore_engine.studio.compute import dask_executor
from tore_engine.studio.data_root import server_path
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.page_index import PageIndex
from tore_engine.studio.server_settings import megabytes
from tore_engine.studio.sidebar import REFERENCE, Dataset

MAX_ENTRIES = 8  # evaluations kept for all sessions
STORE_BUDGET_VARIABLE = "TORE_STUDIO_STORE_BUDGET"  # MB the kept evaluations may hold together
DEFAULT_STORE_BUDGET_MB = 1024  # about four 100,000-page evaluations (0.24 GB of arrays each with its layouts, measured)
PROGRESS_INTERVAL = 1.0  # seconds between two updates of the evaluation's progress bar
NAME_LENGTH = 40  # characters of a layout's name in a title
_HOLDING_NO_ARRAY = (str, bytes, int, float, InputWarning, PackedWarnings)


@dataclass(frozen=True)
class Evaluated:
    """One prediction evaluated against one reference, with both layouts as evaluated (label map
    applied) for drawing their boxes, under a title. Pages are looked up by id on demand: a large
    layout is held column-wise (`PageColumns`) and is never turned into one object a page.
    `derived` is shared by every copy of the entry (`titled`)."""

    title: str
    reference: LayoutSet
    prediction: LayoutSet
    evaluation: Evaluation
    derived: Derived = field(default_factory=Derived, repr=False, compare=False)
    min_score: float | None = None  # the evaluation's: a page's boxes scored below it are left out
    sweep_key: tuple | None = field(default=None, repr=False, compare=False)  # its sweep in the store (None: made here)
    min_score_side: str = "both"  # whose boxes `min_score` leaves out: both sides', or the prediction's only
    page_id_map: PageIdMap | None = None  # how the prediction's page ids became the reference's
    saved_layouts: SavedLayouts | None = field(default=None, repr=False, compare=False)  # a saved one's: `reference` and `prediction` are empty

    def titled(self, title: str) -> Evaluated:
        return replace(self, title=title)

    @property
    def index(self) -> PageIndex:
        """Page ids, orders and search (`page_index`), with each page's mAP when the evaluation has it."""
        def made() -> PageIndex:
            pages = self.pages
            page_map = pages["map"].to_numpy(dtype=float) if "map" in pages.columns else None
            counts = {name: pages[name].to_numpy(dtype=np.int64) for name in PAGE_COUNT_COLUMNS if name in pages.columns}
            return PageIndex(list(self.evaluation.page_ids), pages["foreground_f1"].to_numpy(dtype=float), page_map, counts or None)

        return self.derived.get("index", made)

    @property
    def scored_boxes(self) -> int:
        """How many prediction boxes of the evaluated pages have a score (the workers counted them):
        the sweep and mAP's ranking need them."""
        return self.evaluation.scored_boxes or 0

    def sweep(self) -> pd.DataFrame:
        """`Evaluation.sweep()`, made once for every minimum score of this pair (it reads all boxes)."""
        if self.sweep_key is None:
            return self.derived.get("sweep", self.evaluation.sweep)
        return evaluation_store().sweep(self.sweep_key, self.evaluation.sweep)

    def sweep_made(self) -> bool:
        """Whether `sweep()` is made already, so that showing it costs nothing."""
        if self.evaluation.sweep_state is not None:
            return True
        return self.derived.has("sweep") if self.sweep_key is None else evaluation_store().has_sweep(self.sweep_key)

    @property
    def pages(self) -> pd.DataFrame:
        """`Evaluation.pages`: per page, its pixels and reduced Foreground scores."""
        return self.derived.get("pages", lambda: self.evaluation.pages)

    @property
    def pages_table(self) -> pd.DataFrame:
        """`drilldown.pages_table`: per page, each class's pixels on each side, scores, warnings."""
        return self.derived.get("pages_table", lambda: pages_table(self.evaluation, self.pages))

    def _positions(self, side: str, layout: LayoutSet) -> dict[str, int]:
        """Each page's position by the reference's id (a prediction's ids through the page id map)."""
        def made() -> dict[str, int]:
            ids = layout.page_ids()
            return {page_id: k for k, page_id in enumerate(ids if side == REFERENCE or self.page_id_map is None else self.page_id_map.mapped(ids))}

        return self.derived.get(f"{side}_positions", made)

    def _page(self, side: str, layout: LayoutSet, page_id: str) -> Page | None:
        """The page as evaluated: without its boxes scored below the minimum score (on its side)."""
        position = self._positions(side, layout).get(page_id)
        if position is None:
            return None
        page = layout.pages[position]
        if self.min_score is None or (side == REFERENCE and self.min_score_side != "both"):
            return page
        return page.above_score(self.min_score)[0]

    def layouts(self) -> tuple[LayoutSet, LayoutSet]:
        """The reference and the prediction with their boxes (a saved evaluation's read from its
        inputs, waited for; an `InputError` when they cannot be)."""
        return (self.reference, self.prediction) if self.saved_layouts is None else self.saved_layouts.layouts()

    @property
    def has_boxes(self) -> bool:
        """Whether `layouts` gives boxes: the evaluated layouts, or a saved evaluation's inputs unless
        reading them failed (`saved_layouts.error`)."""
        return bool(self.reference.pages) if self.saved_layouts is None else self.saved_layouts.error is None

    def reference_page(self, page_id: str) -> Page | None:
        return self._page(REFERENCE, self.layouts()[0], page_id)

    def prediction_page(self, page_id: str) -> Page | None:
        return self._page("prediction", self.layouts()[1], page_id)


def held_bytes(value: object, depth: int = 6, seen: set[int] | None = None) -> int:
    """The bytes of the NumPy arrays and DataFrames `value` holds, followed through dataclass
    fields, attributes, lists, tuples and dicts (each object once): what an evaluation and its
    layouts cost, for the store's budget. Strings, small Python objects and input warnings (text
    only, and 100,000 of them take 0.36 s to walk) are left out."""
    seen = set() if seen is None else seen
    if id(value) in seen or depth < 0 or callable(value):
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=False).sum())
    if isinstance(value, dict):  # copied first: another thread may add to it (a `Derived`, while a view derives)
        children: Iterable[object] = list(value.values())
    elif isinstance(value, (list, tuple)):
        children = value
    elif hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        children = [getattr(value, name, None) for name in (*getattr(value, "__slots__", ()), *list(getattr(value, "__dict__", {})))]
    else:
        return 0
    return sum(held_bytes(child, depth - 1, seen) for child in children if not isinstance(child, _HOLDING_NO_ARRAY))


class EvaluationStore:
    """A small process-wide LRU of evaluations, shared by all sessions, and the names of the
    layouts read so far (by side and file version). It keeps at most `max_entries` evaluations,
    and the least recently used leave once those kept hold more than `budget` bytes
    (`$TORE_STUDIO_STORE_BUDGET` MB; each measured when stored), the last one always kept."""

    def __init__(self, max_entries: int = MAX_ENTRIES, budget: int | None = None) -> None:
        self._budget = megabytes(STORE_BUDGET_VARIABLE, DEFAULT_STORE_BUDGET_MB) if budget is None else budget
        self._sizes: dict[tuple, int] = {}
        self._entries: OrderedDict[tuple, Evaluated] = OrderedDict()
        self._sweeps: OrderedDict[tuple, pd.DataFrame] = OrderedDict()
        self._names: dict[tuple, str] = {}
        self._lock = threading.Lock()
        self._max_entries = max_entries

    def get(self, key: tuple) -> Evaluated | None:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        return None

    def put(self, key: tuple, value: Evaluated) -> None:
        size = held_bytes(value)
        with self._lock:
            self._entries[key], self._sizes[key] = value, size
            self._entries.move_to_end(key)
            while len(self._entries) > 1 and (len(self._entries) > self._max_entries or sum(self._sizes.values()) > self._budget):
                gone, _ = self._entries.popitem(last=False)
                del self._sizes[gone]

    def has_sweep(self, key: tuple) -> bool:
        with self._lock:
            return key in self._sweeps

    def sweep(self, key: tuple, make: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """The sweep of the pair `key` names (made by `make` the first time), as many kept as evaluations."""
        with self._lock:
            if key in self._sweeps:
                self._sweeps.move_to_end(key)
                return self._sweeps[key]
        made = make()
        with self._lock:
            made = self._sweeps.setdefault(key, made)
            while len(self._sweeps) > self._max_entries:
                self._sweeps.popitem(last=False)
            return made

    def name(self, key: tuple) -> str | None:
        return self._names.get(key)

    def remember_name(self, key: tuple, name: str) -> None:
        self._names[key] = name


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


def _name_key(path: Path, format_name: str) -> tuple:
    """A layout's name is its file's, whichever side it was read on (model A is the reference of
    "B read against A")."""
    return _stamp(path), format_name


def evaluate(
    reference: Path,
    prediction: Path,
    *,
    formats: tuple[str, str] = ("auto", "auto"),
    taxonomy: str = "auto",
    label_map: Path | None = None,
    coco_images: Path | None = None,
    page_images: Path | None = None,
    min_score: float | None = None,
    map_convention: str = "coco",
    min_score_side: str = "both",
    page_id_rule: str | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    title: str = "",
) -> Evaluated:
    """Load and evaluate one pair (`api.evaluate_pair`, mAP in `map_convention`), cached by what
    changes the numbers (not by `workers`, `scheduler` or `title`); `scheduler` is the name of a
    configured Dask scheduler. Raises `InputError` for bad input."""
    pair_key = (_stamp(reference), _stamp(prediction), formats, taxonomy, _stamp(label_map), _stamp(coco_images), _stamp(page_images),
                map_convention, min_score_side, page_id_rule)
    key = (*pair_key, min_score)
    store = evaluation_store()
    cached = store.get(key)
    if cached is None:
        executor = dask_executor(scheduler) if scheduler else None
        pair = evaluate_pair(reference, prediction, format=formats, taxonomy=taxonomy, label_map=label_map, coco_images=coco_images,
                             page_images=page_images, min_score=min_score, map=map_convention, workers=workers, executor=executor,
                             progress=progress, min_score_side=min_score_side, page_id_map=page_id_rule)
        cached = Evaluated("", pair.reference, pair.prediction, pair.evaluation, min_score=min_score, sweep_key=pair_key,
                           min_score_side=min_score_side, page_id_map=page_id_map(page_id_rule))
        store.put(key, cached)
        # the page index in the background, so that the first step to Overlays finds it made (0.8 s at 100,000 pages)
        background.later("tore-page-index", lambda: cached.index)
        store.remember_name(_name_key(reference, formats[0]), pair.reference.name)
        store.remember_name(_name_key(prediction, formats[1]), pair.prediction.name)
    return cached.titled(title)


def layout_name(dataset: Dataset, side: str) -> str | None:
    """The name the layout of `side` (REFERENCE or a model) gave itself, once it was read."""
    path = dataset.reference if side == REFERENCE else dataset.models.get(side)
    if path is None:
        return None
    return evaluation_store().name(_name_key(path, dataset.format_of(side)))


def side_label(dataset: Dataset, side: str) -> str:
    """Plain text (escape it where Markdown reads it; the figures escape it): "reference (its name)", "model A
    (its name)", the name once the layout was read, shortened in the middle when long."""
    role = "reference" if side == REFERENCE else f"model {side}"
    details = [shortened(name, NAME_LENGTH)] if (name := layout_name(dataset, side)) else []
    if dataset.is_demo and side != REFERENCE:
        details.append("simulated")
    return f"{role} ({', '.join(details)})" if details else role


def _failed_input(error: InputError, dataset: Dataset, sides: tuple[str, str]) -> str:
    """Which input of the pair `sides` (REFERENCE or a model, then a model) an error is about, as
    the sidebar names it: the one whose file (or folder) the error names, else the pair."""
    named = Path(error.file) if error.file else None
    inputs = [*((side_label(dataset, side), dataset.reference if side == REFERENCE else dataset.models.get(side)) for side in sides),
              ("the label map", dataset.label_map), ("the COCO images + categories file", dataset.coco_images),
              ("the page images", dataset.page_images)]
    for label, path in inputs:
        if named is not None and path is not None and (named == path or path in named.parents):
            return label
    return f"{side_label(dataset, sides[1])} against the {side_label(dataset, sides[0])}"


def _evaluate_with_progress(dataset: Dataset, sides: tuple[str, str], reference: Path, prediction: Path, title: str,
                            **options: Any) -> Evaluated | None:
    """`evaluate`, with a progress bar while it runs and the engine's message for bad input,
    titled with the input it is about (plotly.js loads meanwhile: `panels.plotly_loading`)."""
    bar = st.empty()
    shown_at = [-math.inf]

    def progress(done: int, total: int) -> None:
        """The bar, at most once a second: each update is a message the browser draws, on the cores
        the workers need (at 100,000 pages the batches end 40 times a second; a bar updated 4 times
        a second took 0.22 of a core in Chromium, once a second 0.14, none 0.05: benchmarks/RESULTS.md)."""
        now = time.monotonic()
        if now - shown_at[0] >= PROGRESS_INTERVAL or done == total:
            shown_at[0] = now
            bar.progress(done / max(total, 1), text=f"Evaluating {plain_for_markdown(title)}: {done:,} of {total:,} pages")

    try:
        return evaluate(reference, prediction, progress=progress, title=title, **options)
    except InputError as error:
        show_input_error(error, title=_failed_input(error, dataset, sides))
        return None
    finally:
        bar.empty()


class SavedLayouts:
    """A saved evaluation's two layouts, read again from its inputs (`api.saved_inputs`, each path
    confined to the data root) once, by the first view that draws a box (Overlays, the gallery,
    Compare's panes, a document's matrix, a COCO export), which waits for them under a spinner:
    at 100,000 pages that is about 3 s of CPU, which read in the background took a core from the
    browser drawing the first heatmap and then the next tab's. An `InputError` says why they cannot
    be read (the inputs moved, or lie outside the data root); the heatmaps never need them."""

    def __init__(self, folder: Path, done: Callable[[], None]) -> None:
        self._folder, self._done = folder, done  # `done`: called once read (the store measures the entry again)
        self._lock = threading.Lock()  # two sessions asking at once: one reads, the other waits for it
        self.pair: tuple[LayoutSet, LayoutSet] | None = None
        self.error: InputError | None = None

    def layouts(self) -> tuple[LayoutSet, LayoutSet]:
        """The reference and the prediction, read now if not read yet; raises why they cannot be."""
        if self.pair is None and self.error is None:
            with st.spinner("Reading this saved evaluation's boxes from its inputs..."), self._lock:
                if self.pair is None and self.error is None:
                    try:
                        self.pair = saved_inputs(self._folder, checked=server_path)
                    except InputError as error:
                        self.error = error
                    except OSError as error:
                        self.error = InputError(f"its inputs cannot be read ({error.strerror or error})", file=str(self._folder))
                    self._done()
        if self.error is not None:
            raise self.error
        assert self.pair is not None
        return self.pair


_OPENING = threading.Lock()  # a saved folder is opened once, by the first session or by the server's start (`open_saved_first`)
_OPENED_AT_START: set[tuple] = set()  # keys opened before any session: the first to show one queues its page index


def _opened_saved(folder: Path) -> tuple[tuple, Evaluated, bool]:
    """The store's key and entry of the evaluation saved in `folder`, opened now if not held yet
    (its boxes come from its inputs when a view first wants them, `SavedLayouts`), and whether it
    was opened now."""
    store = evaluation_store()
    key = ("saved", _stamp(folder / saved.MANIFEST))
    with _OPENING:
        cached = store.get(key)
        if cached is not None:
            return key, cached, False
        evaluation = saved.open_saved(folder)
        run = saved.read_manifest(folder).manifest.run
        layouts = SavedLayouts(folder, lambda: store.put(key, entry) if store.get(key) is entry else None)
        entry = Evaluated("", LayoutSet(run.reference_name or "reference", []), LayoutSet(run.prediction_name or "prediction", []),
                          evaluation, min_score=run.min_score, min_score_side=run.min_score_side or "both", saved_layouts=layouts)
        store.put(key, entry)  # measured again once its layouts are read
        return key, entry, True


def open_saved_first(folder: Path) -> None:
    """Open the evaluation saved in `folder` as the server starts (`tore app FOLDER`), so that its
    link's first tab finds it held (0.3-0.6 s of a 100,000-page folder's first tab)."""
    key, _, opened = _opened_saved(folder)
    if opened:
        _OPENED_AT_START.add(key)


def saved_evaluation(folder: Path, model: str) -> Evaluated | None:
    """The evaluation saved in `folder` (`results.saved`), opened once for every session (kept by
    its manifest's version), titled after the model it evaluated; None, with the reason on the
    page, when it cannot be opened."""
    try:
        manifest = saved.read_manifest(folder).manifest
        key, entry, opened = _opened_saved(folder)
    except InputError as error:
        show_input_error(error, title=f"the saved evaluation of model {model}")
        return None
    if opened or key in _OPENED_AT_START:
        _OPENED_AT_START.discard(key)
        background.later("tore-page-index", lambda: entry.index)  # as `evaluate`'s
    name = shortened(manifest.run.prediction_name or folder.name, NAME_LENGTH)
    return entry.titled(f"model {model} ({name}, saved {manifest.created[:10]})")


def model_evaluation(dataset: Dataset, model: str, *, quiet: bool = False) -> Evaluated | None:
    """Model `model` against the dataset's reference, or None (with a message on the page unless
    `quiet`)."""
    if dataset.is_saved and model in dataset.models:
        return saved_evaluation(dataset.models[model], model)
    if dataset.reference is None or model not in dataset.models:
        if not quiet:
            st.info("Choose a reference and a prediction in the sidebar." if dataset.reference is None or model == "A"
                    else f"Model {model} is not set: choose its prediction in the sidebar.")
        return None
    options = dict(formats=(dataset.format_of(REFERENCE), dataset.format_of(model)), taxonomy=dataset.taxonomy, **_reading(dataset))
    evaluated = _evaluate_with_progress(dataset, (REFERENCE, model), dataset.reference, dataset.models[model], side_label(dataset, model),
                                        **options)
    return None if evaluated is None else evaluated.titled(side_label(dataset, model))  # named now that the layout was read


def _reading(dataset: Dataset) -> dict[str, Any]:
    """How every pair of the dataset is read and computed, besides its formats and taxonomy."""
    return {"label_map": dataset.label_map, "coco_images": dataset.coco_images, "page_images": dataset.page_images,
            "min_score": dataset.min_score, "map_convention": dataset.map_convention, "workers": dataset.workers,
            "min_score_side": dataset.min_score_side, "page_id_rule": dataset.page_id_rule,
            "scheduler": dataset.scheduler}


def model_against_model(dataset: Dataset, first: str = "A", second: str = "B") -> Evaluated | None:
    """Model `first` taken as the reference and model `second` as the prediction, in dual-taxonomy
    mode (two COCO results lists are read against the dataset's COCO images + categories file)."""
    if not {first, second} <= set(dataset.models):
        return None
    if dataset.is_saved:
        st.info("Saved evaluations hold no boxes: B read against A needs the two predictions (Paths on the server).")
        return None
    title = f"{side_label(dataset, second)} against {side_label(dataset, first)}"
    return _evaluate_with_progress(
        dataset, (first, second), dataset.models[first], dataset.models[second], title,
        formats=(dataset.format_of(first), dataset.format_of(second)), taxonomy="dual", **_reading(dataset),
    )
