"""Evaluating a whole dataset: pairing pages, batching them over workers, merging exact state.

Reference pages are paired with their predictions and sent in batches to any
`concurrent.futures.Executor` (a local process pool by default, or a Dask client's executor); the
worker turns each page into a `PageTask`, rasterises it, and returns integer state that adds up
exactly. The report is therefore bit-identical for
any number of workers and any completion order. Each page's contribution to each cell is kept, so
the app can ask which pages make up a cell.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, as_completed, wait
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import (
    LayoutSet,
    Page,
    PageColumns,
    PagePart,
    PageSource,
    page_source,
)
from tore_engine.core.memory import Appended, FreedMemory, give_back_free_memory
from tore_engine.core.packed_warnings import PackedWarnings
from tore_engine.core.taxonomy import Taxonomy, resolve_taxonomy
from tore_engine.engine import page_kernel, sweep_grid, sweep_kernel
from tore_engine.engine.preparation import PreparedBatch, prepare_columns, prepare_page
from tore_engine.engine.raster import PageTask, PairTable, label_sets, pair_table
from tore_engine.formats.page_id_map import PageIdMap, shown_id, unmatched_ids_error
from tore_engine.metrics import box_outcomes, map_kernel
from tore_engine.metrics.algorithm1 import (
    ExactCounts,
    cell_values_by_page,
    contribution_entries,
    exact_integers,
    reduced_counts,
)
from tore_engine.metrics.box_table import BoxColumns
from tore_engine.metrics.map_report import DUAL_TAXONOMY, NOTHING_TO_RANK, SWITCHED_OFF, MapState
from tore_engine.metrics.map_types import CONVENTIONS, MatchRuns, SideBoxes
from tore_engine.metrics.matrices import ToreMatrices
from tore_engine.metrics.mean_average_precision import convention_named, page_records
from tore_engine.metrics.sweep import BOTH_SIDES, MIN_SCORE_SIDES, POINTS, SweepState, score_levels
from tore_engine.results.evaluation import Evaluation, map_warnings
from tore_engine.run.workers import task_part, worker_pool

Progress = Callable[[int, int], None]
Sources = tuple[PageSource, PageSource]  # a job's reference and prediction pages
Outcome = TypeVar("Outcome")  # what a task gives back: an evaluation's BatchOutcome, or a sweep's SweepState
MAX_BATCH_PAGES = 256  # pages a task: enough to amortise a task's overhead, small enough to balance workers
BATCHES_PER_WORKER = 8  # a small job still gives each worker several tasks
SWEEP_LABEL_CELLS = 1 << 23  # label-set cells (pairs x classes) the sweep hands Algorithm 1 at once: 8 MB a side
MIN_IN_FLIGHT, IN_FLIGHT_PER_WORKER = 16, 4  # tasks sent ahead of the results, so no worker waits
# A job smaller than this (in pages, or in boxes counted as pages of `map_kernel.BOXES_A_PAGE`, plus its
# polygons' pixel rows counted as pages of `POLYGON_ROWS_A_PAGE`) runs in this process: each forked
# worker imports numba and loads its kernels, which a small job does not pay back (1,000 pages: 2.35 s
# on 2 workers against 1.30-1.35 s here; 3,000 pages: 1.80 against 1.85-1.87 s)
POOL_AFTER_PAGES = 3_000
# A polygon paints a rectangle a pixel row: about this many rows cost a page of boxes (pages of 80
# regions turned up to 30 degrees, 11,200 rows a page: 400 pages 1.63-1.70 s here, 1.37-1.44 s on 2
# workers; 200 pages 1.21-1.29 s here, 2.05-2.09 s on 2 workers; benchmarks/RESULTS.md)
POLYGON_ROWS_A_PAGE = 1_400
# A task's polygons paint at most about this many pixel rows (their pieces: 16 bytes a row, the
# kernel's state beside), so that each batch reuses the memory the last one freed instead of fresh pages,
# which this kind of machine zeroes at about 1 ms a MB (4,000 turned pages: 6.0-6.3 s in tasks of 250
# pages, 5.8 s of 43, at 40 bytes a row; 10,000 turned pages: 6.43 s median in tasks of 41 pages, 6.02 s
# of 83, 6.01 s of 103, more system time again at 206)
POLYGON_ROWS_A_TASK = 1_000_000
POOL_ENV = "TORE_POOL"  # "always": the pool whenever workers > 1, whatever the job's size (the pool's own tests)


@dataclass(frozen=True)
class BatchOutcome:
    """What a batch adds, as flat arrays (cheap to send back from a worker): each page's pixel
    count, its non-zero cells (row * K + column; page k's are `bounds[k]:bounds[k + 1]`) with their
    values, and its integer 2x2 Background/Foreground matrix; the batch's exact counts; and its
    warnings in page order.

    A page has at most 2^62 pixels (`layout.MAX_PAGE_SIDE` = 2^31 a side), which int64 holds;
    products with |T| and sums over pages may exceed int64, and become Python integers where
    they could (`algorithm1.exact_integers`)."""

    pixels: np.ndarray  # (pages,) int64
    bounds: np.ndarray  # (pages + 1,)
    cells: np.ndarray  # int32: K is at most 2048, so K * K fits
    values: np.ndarray  # float64
    reduced: np.ndarray  # (pages, 2, 2)
    counts: ExactCounts
    warnings: PackedWarnings  # sent packed: thousands of small objects would cost the driver far more
    map_state: MapState | None = None  # mAP's records of the batch's pages, when asked for
    sweep_state: SweepState | None = None  # the sweep's counts of the batch's pages, when asked for
    scored: np.ndarray | None = None  # (pages,) each page's prediction boxes with a score, before the minimum score
    box_outcomes: box_outcomes.BoxOutcomes | None = None  # TIDE's decisions on the batch's boxes, when asked for

    @property
    def page_count(self) -> int:
        return len(self.pixels)


class BatchJoin:
    """The batches' large arrays joined as they arrive, in batch order (`_run_batches` hands each to
    `take`): each page's cells (page, cell, value), mAP's records (`MatchRuns`) and TIDE's box
    outcomes (`BoxOutcomeRuns`). The driver copies them while the workers compute, and lets each
    batch's go at once, so that it never holds every batch's arrays beside their join. `references`
    and `predictions`: the inputs' boxes, the most that the records and outcomes can hold."""

    CELL_TYPES = (np.int32, np.float64)  # cell (K is at most 2048, so K * K fits), value; their pages as offsets
    CELLS_RESERVED_AT_MOST = 1 << 26  # rows (512 MB of values, untouched until written): a dense first batch (K^2 cells a page) must not reserve terabytes

    def __init__(self, pages: int, references: int, predictions: int) -> None:
        self._pages, self._references, self._predictions = pages, references, predictions
        self._cells: list[Appended] = []  # reserved at the first batch, from its cells a page
        self._page_ends: list[np.ndarray] = []  # where each batch's pages' cells end among all cells
        self._matches: MatchRuns | None = None
        self._convention, self._predicted, self._unscored = "", 0, 0
        self._boxes: box_outcomes.BoxOutcomeRuns | None = None
        self._freed = FreedMemory()

    def take(self, outcome: BatchOutcome) -> BatchOutcome:
        """The batch without its cells, mAP's records and box outcomes, which are joined."""
        if not self._cells:  # twice the first batch's cells a page: what is reserved but not written costs nothing
            expected = min(2 * math.ceil(len(outcome.cells) * self._pages / max(outcome.page_count, 1)), self.CELLS_RESERVED_AT_MOST)
            self._cells = [Appended(dtype, expected) for dtype in self.CELL_TYPES]
        self._page_ends.append(outcome.bounds[1:] + len(self._cells[0]))
        for column, values in zip(self._cells, (outcome.cells, outcome.values)):
            column.append(values)
        self._freed.let_go(outcome.cells.nbytes + outcome.values.nbytes + outcome.bounds.nbytes)
        if outcome.map_state is not None:
            if self._matches is None:
                self._matches, self._convention = MatchRuns(self._predictions), outcome.map_state.convention
            for run in outcome.map_state.runs:
                self._matches.add(run)
            self._predicted += outcome.map_state.predicted
            self._unscored += outcome.map_state.unscored
        if outcome.box_outcomes is not None:
            if self._boxes is None:
                self._boxes = box_outcomes.BoxOutcomeRuns(self._references, self._predictions)
            self._boxes.add(outcome.box_outcomes)
        nothing = np.zeros(0, np.int64)
        return replace(outcome, bounds=nothing, cells=nothing.astype(np.int32), values=nothing.astype(np.float64), map_state=None, box_outcomes=None)

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every page's non-zero cells: (offsets, cell, value), page p's at `offsets[p]:offsets[p + 1]`."""
        cell, value = (column.array() for column in self._cells) if self._cells else (np.zeros(0, dtype) for dtype in self.CELL_TYPES)
        return np.concatenate([np.zeros(1, np.int64), *self._page_ends]).astype(np.int64), cell, value

    def map_state(self, reason: str | None) -> tuple[MapState | None, str | None]:
        """mAP's records of all pages, in page order; None (and why) when there is nothing to rank."""
        if self._matches is None:
            return None, reason
        state = MapState(self._convention, (self._matches.joined(),), self._predicted, self._unscored)
        return (state, None) if state.boxes else (None, NOTHING_TO_RANK)

    def box_outcomes(self) -> box_outcomes.BoxOutcomes | None:
        """TIDE's decisions on every page's boxes, or None when no batch made them."""
        return None if self._boxes is None else self._boxes.outcomes()


def _pair_table(task: PageTask, class_count: int) -> PairTable:
    try:
        return pair_table(
            task.width,
            task.height,
            (task.reference_classes, task.reference_extents),
            (task.prediction_classes, task.prediction_extents),
            class_count,
        )
    except InputError as error:
        raise error.located(page=task.page_id) from None


def numpy_cells(tasks: list[PageTask], class_count: int) -> page_kernel.Cells:
    """The NumPy path: rasterise each page, then apply Algorithm 1 once to the distinct label-set
    pairs of all the batch's pages (tagged with their page), and split the results."""
    tables = [_pair_table(task, class_count) for task in tasks]
    page = np.repeat(np.arange(len(tables)), [len(table.pixels) for table in tables])
    pixels = np.concatenate([table.pixels for table in tables])
    truth = label_sets(np.concatenate([table.reference_codes for table in tables]), class_count)
    predicted = label_sets(np.concatenate([table.prediction_codes for table in tables]), class_count)
    pair, denominator, row, column, numerator = contribution_entries(truth, predicted, pixels)
    cell_page, cells, values = cell_values_by_page(page[pair], denominator, row, column, numerator, class_count)
    reduced = reduced_counts(truth, predicted, pixels, page, len(tables))
    bounds = np.searchsorted(cell_page, np.arange(len(tables) + 1))
    return bounds, cells, values, reduced, ExactCounts.summed(class_count, denominator, row, column, numerator)


def _outcome(pages: list[PageTask] | PreparedBatch, taxonomy: Taxonomy, warnings: list[InputWarning], job_pages: int) -> BatchOutcome:
    """Evaluate prepared pages (page by page, or a batch prepared at once) with the compiled page
    kernel or, when it declines (`page_kernel.evaluate_arrays`), the NumPy path (to the same
    bits), into flat per-batch arrays."""
    class_count = taxonomy.size
    if isinstance(pages, PreparedBatch):
        boxes, pieces, polygon_pages = pages.kernel_inputs()
        compiled = page_kernel.evaluate_arrays(pages.frames, pages.offsets, boxes, class_count, job_pages, polygon_pages, pieces)
        frames = pages.frames
    else:
        compiled = page_kernel.evaluate(pages, class_count, job_pages)
        frames = np.array([(task.width, task.height) for task in pages], dtype=np.int64).reshape(-1, 2)
    if compiled is None:
        compiled = numpy_cells(pages.tasks() if isinstance(pages, PreparedBatch) else pages, class_count)
    bounds, cells, values, reduced, counts = compiled
    reduced = np.asarray(reduced).reshape(-1, 2, 2)
    return BatchOutcome(frames[:, 0] * frames[:, 1], np.asarray(bounds), np.asarray(cells).astype(np.int32), values, reduced, counts,
                        PackedWarnings.of(warnings))


def evaluate_batch(pages: list[tuple[Page, Page | None]], taxonomy: Taxonomy, job_pages: int = 0) -> BatchOutcome:
    """Evaluate page pairs, preparing them one by one (`prepare_page`): the reference path that
    `evaluate_task`'s batch preparation (`preparation.prepare_columns`) is checked against."""
    prepared = [prepare_page(reference, prediction, taxonomy) for reference, prediction in pages]
    warnings = [warning for _, page_warnings in prepared for warning in page_warnings]
    return _outcome([task for task, _ in prepared], taxonomy, warnings, job_pages)


def pair_positions(reference: LayoutSet, prediction: LayoutSet, id_map: PageIdMap | None = None) -> tuple[np.ndarray, list[InputWarning]]:
    """For each reference page in file order, the position of its prediction page (by id, after
    `id_map`), or -1; and the warnings for prediction pages that no reference page has. Two
    prediction pages that the map gives one id are an `InputError`; so is a prediction whose pages
    all miss the reference (`unmatched_ids_error`: every page would score 0, silently)."""
    reference_ids, prediction_ids = reference.page_ids(), prediction.page_ids()
    mapped = prediction_ids if id_map is None else id_map.mapped(prediction_ids)
    position: dict[str, int] = {}
    for index, page_id in enumerate(mapped):
        if position.setdefault(page_id, index) != index:
            raise InputError(f"the page id map gives two prediction pages the id {shown_id(page_id)}: "
                             f"{shown_id(prediction_ids[position[page_id]])} and {shown_id(prediction_ids[index])}", file=prediction.source)
    known = set(reference_ids)
    unscored = [
        InputWarning(original, None, "prediction", "prediction page has no reference page; not scored"
                     + ("" if page_id == original else f" (its id mapped to {shown_id(page_id)})"))
        for original, page_id in zip(prediction_ids, mapped)
        if page_id not in known
    ]
    if prediction_ids and reference_ids and len(unscored) == len(prediction_ids):
        raise unmatched_ids_error(reference_ids, prediction_ids, id_map).located(file=prediction.source)
    matched = np.fromiter((position.get(page_id, -1) for page_id in reference_ids), dtype=np.int64, count=len(reference_ids))
    return matched, unscored


@dataclass(frozen=True)
class PageBatch:
    """One task: a run of reference pages and their predictions, as page parts (columns, or byte
    ranges of the files they are in: a worker reads them itself), never as Page objects."""

    reference: PagePart
    prediction: PagePart
    matched: np.ndarray  # (pages,) the position in `prediction` of each reference page's prediction, or -1
    min_score: float | None = None
    min_score_side: str = BOTH_SIDES  # whose boxes the minimum score drops: both sides', or the prediction's only
    job_pages: int = 0  # pages its worker will evaluate in this job: how the page kernel decides to load
    map_convention: str | None = None  # mAP's convention, or None for no mAP
    sweep: bool = False  # the sweep's counts too
    outcomes: bool = False  # TIDE's box outcomes too (docs/cli.md#box-outcomes-and-tides-error-types)


def local_workers(workers: int, reference: LayoutSet, prediction: LayoutSet, pages: int) -> int:
    """The worker processes a job of `pages` paired pages is worth: `workers`, or 1 below `POOL_AFTER_PAGES`
    (unless `TORE_POOL=always`)."""
    if workers <= 1 or pages >= POOL_AFTER_PAGES or os.environ.get(POOL_ENV) == "always":
        return workers
    boxes = reference.box_count() + prediction.box_count()
    rows = reference.polygon_rows() + prediction.polygon_rows()
    return workers if boxes // map_kernel.BOXES_A_PAGE + rows // POLYGON_ROWS_A_PAGE >= POOL_AFTER_PAGES else 1


def worker_share(pages: int, workers: int) -> int:
    """The pages each worker evaluates of a job: what loading the page kernel must pay for."""
    return math.ceil(pages / max(workers, 1))


def _batches(sources: Sources, matched: np.ndarray, workers: int, executor: Executor | None = None, *,
             min_score: float | None, map_convention: str | None, sweep: bool, min_score_side: str = BOTH_SIDES,
             outcomes: bool = False, pages: range | None = None) -> Iterator[PageBatch]:
    """The evaluation's tasks (`matched`: `pair_positions`), made only as they are sent, each with
    what the run asks for (its minimum score, mAP's convention, the sweep), its pages as `executor`
    takes them (`task_part`). Each says how many pages its worker will see (its share of the job),
    which is what loading the page kernel must pay for. `pages`: only those reference pages
    (positions; default all)."""
    reference_pages, prediction_pages = sources
    size = _batch_size(len(matched), workers, reference_pages.polygon_rows() + prediction_pages.polygon_rows())
    share = worker_share(len(matched), workers)
    pages = range(len(matched)) if pages is None else pages
    for start in range(pages.start, pages.stop, size):
        chosen = matched[start : min(start + size, pages.stop)]
        present = chosen[chosen >= 0]
        local = np.full(len(chosen), -1, dtype=np.int64)
        local[chosen >= 0] = np.arange(len(present))
        yield PageBatch(task_part(executor, reference_pages, np.arange(start, start + len(chosen))), task_part(executor, prediction_pages, present),
                        local, min_score=min_score, min_score_side=min_score_side, job_pages=share, map_convention=map_convention, sweep=sweep, outcomes=outcomes)


def _sided(warnings: list[InputWarning], side: str) -> list[InputWarning]:
    """A layout set's loading warnings, with the side they belong to filled in."""
    return [warning if warning.side else replace(warning, side=side) for warning in warnings]


def _checked_threshold(min_score: float) -> float:
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not math.isfinite(min_score):
        raise InputError(f"the minimum score must be a finite number, got {min_score!r}")
    return float(min_score)


def _checked_side(side: str) -> str:
    if side not in MIN_SCORE_SIDES:
        raise InputError(f"the minimum score's side must be one of {', '.join(MIN_SCORE_SIDES)}, got {side!r}")
    return side


def _above_score(references: PageColumns, predictions: PageColumns, matched: np.ndarray, threshold: float,
                 side: str = BOTH_SIDES) -> tuple[PageColumns, PageColumns, list[InputWarning], dict]:
    """Both sides (or the prediction only, `side`) without the boxes scored below `threshold`: a
    warning for each page and side that lost some, in page order, and for each side the boxes'
    indices within their pages before (for the later box warnings; None where nothing was dropped)."""
    kept_references, reference_within = references.above_score(threshold) if side == BOTH_SIDES else (references, None)
    kept_predictions, prediction_within = predictions.above_score(threshold)
    lost_references = np.diff(references.offsets) - np.diff(kept_references.offsets)
    lost_predictions = np.diff(predictions.offsets) - np.diff(kept_predictions.offsets)
    warnings = []
    for page, page_id in enumerate(references.ids):
        losses = (("reference", lost_references[page]), ("prediction", lost_predictions[matched[page]] if matched[page] >= 0 else 0))
        warnings += [InputWarning(page_id, None, name, f"{lost} boxes scored below {threshold} dropped (minimum score)") for name, lost in losses if lost]
    within = {"reference": (kept_references, reference_within), "prediction": (kept_predictions, prediction_within)}
    return kept_references, kept_predictions, warnings, within


def _original_boxes(warnings: list[InputWarning], within: dict, references: PageColumns, matched: np.ndarray) -> list[InputWarning]:
    """Box warnings after the minimum score, with each box's index in the file."""
    position = {page_id: page for page, page_id in enumerate(references.ids)}

    def original(warning: InputWarning) -> InputWarning:
        columns, indices = within[warning.side]
        if warning.box is None or warning.page is None or indices is None:
            return warning
        page = position[warning.page] if warning.side == "reference" else matched[position[warning.page]]
        return replace(warning, box=int(indices[columns.offsets[page] + warning.box]))

    return [original(warning) for warning in warnings]


def evaluate_task(batch: PageBatch, taxonomy: Taxonomy) -> BatchOutcome:
    """A worker's unit of work: read the batch's pages (from columns, or from their files), drop
    low scores, prepare them all at once and evaluate them; mAP's records of the same boxes, and
    the sweep's counts of all boxes (before the minimum score), when asked for."""
    all_references, all_predictions = references, predictions = batch.reference.columns(), batch.prediction.columns()
    score_warnings: list[InputWarning] = []
    if batch.min_score is not None:
        references, predictions, score_warnings, within = _above_score(references, predictions, batch.matched, batch.min_score, batch.min_score_side)
    prepared = prepare_columns(references, predictions, batch.matched, taxonomy)
    box_warnings = prepared.warnings
    if batch.min_score is not None:
        box_warnings = _original_boxes(box_warnings, within, references, batch.matched)
    outcome = replace(_outcome(prepared, taxonomy, score_warnings + box_warnings, batch.job_pages),
                      scored=_scored_boxes(all_predictions, batch.matched))
    sides = prepared.side_boxes() if batch.map_convention or batch.outcomes else None  # read by mAP and by TIDE alike
    map_state = _map_state(sides, taxonomy.size, batch.map_convention, batch.job_pages) if sides and batch.map_convention else None
    if sides and batch.outcomes:
        outcome = replace(outcome, box_outcomes=box_outcomes.match_outcomes(*sides, batch.job_pages))
    if not batch.sweep:
        return replace(outcome, map_state=map_state)
    everything = prepared if batch.min_score is None else prepare_columns(all_references, all_predictions, batch.matched, taxonomy)
    return replace(outcome, map_state=map_state, sweep_state=_batch_sweep(everything, batch, taxonomy))


def sweep_task(batch: PageBatch, taxonomy: Taxonomy) -> SweepState:
    """A worker's unit of a sweep made after its evaluation (`sweep_dataset`): the sweep's counts of
    all the batch's boxes, without the evaluation's own counts or mAP records, which it has."""
    return _batch_sweep(prepare_columns(batch.reference.columns(), batch.prediction.columns(), batch.matched, taxonomy), batch, taxonomy)


def _batch_sweep(everything: PreparedBatch, batch: PageBatch, taxonomy: Taxonomy) -> SweepState:
    """The sweep's counts of all the batch's boxes, with mAP's records of them when a minimum score
    made the evaluation's own records those of the boxes it kept (without one, they are the same)."""
    own_convention = batch.map_convention if batch.min_score is not None else None
    detection = _map_state(everything.side_boxes(), taxonomy.size, own_convention, batch.job_pages) if own_convention is not None else None
    return replace(_sweep_state(everything, taxonomy, batch.job_pages, batch.min_score_side), detection=detection)


def _scored_boxes(predictions: PageColumns, matched: np.ndarray) -> np.ndarray:
    """Each reference page's prediction boxes that have a score (0 without a prediction page)."""
    if predictions.scores is None:
        return np.zeros(len(matched), dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(~np.isnan(predictions.scores), dtype=np.int64)])[predictions.offsets]
    per_page = np.append(np.diff(before), 0)  # matched -1 (no prediction page) reads the 0 at the end
    return per_page[matched]


def _map_state(sides: tuple[SideBoxes, SideBoxes], class_count: int, convention: str, job_pages: int) -> MapState:
    """mAP's records of a batch's boxes (`PreparedBatch.side_boxes`: unclipped, in file order)."""
    reference, prediction = sides
    matches = page_records(reference, prediction, class_count, CONVENTIONS[convention], job_pages)
    unscored = int(np.isnan(prediction.scores).sum()) if prediction.scores is not None else len(prediction.classes)
    return MapState(convention, (matches,), len(prediction.classes), unscored)


def _sweep_state(prepared: PreparedBatch, taxonomy: Taxonomy, job_pages: int, side: str = BOTH_SIDES) -> SweepState:
    """The counts of a run at each of the sweep's minimum scores (of both sides' boxes, or the
    prediction's only, `side`): rasterised once for all points by the sweep kernel or, when it
    declines, by its NumPy path (`sweep_grid`); only a batch whose sums would not fit in int64
    takes one run a point of the boxes each keeps, with the page kernel or the NumPy path as a run
    would."""
    levels = score_levels(prepared.scores, len(prepared.scores))
    if side != BOTH_SIDES:
        levels[~prepared.prediction_boxes()] = POINTS  # the reference's boxes are kept at every point
    compiled = sweep_kernel.sweep_pairs(prepared, levels, taxonomy.size, job_pages)
    if compiled is not None:
        pairs, pixels = compiled
        return _from_codes(pairs[:, :1], pairs[:, 1:], pixels, taxonomy.size)
    if sweep_grid.applies(prepared, taxonomy.size):
        return _from_codes(*sweep_grid.sweep_pairs(prepared, levels, taxonomy.size), taxonomy.size)
    runs = [_outcome(prepared.kept(levels > point), taxonomy, [], job_pages) for point in range(POINTS)]
    return SweepState(tuple(run.counts for run in runs), np.stack([run.reduced.sum(axis=0) for run in runs]))


def _from_codes(reference: np.ndarray, prediction: np.ndarray, pixels: np.ndarray, class_count: int) -> SweepState:
    """The sweep's state of distinct bit-packed pairs, some thousand pairs at a time (at 2,048
    classes a pair's two label sets take 4 KB)."""
    step = max(1, SWEEP_LABEL_CELLS // class_count)
    parts = [SweepState.from_label_sets(label_sets(reference[start : start + step], class_count), label_sets(prediction[start : start + step], class_count),
                                        pixels[start : start + step]) for start in range(0, max(len(pixels), 1), step)]
    return SweepState.merged(parts, class_count) if len(parts) != 1 else parts[0]


# --- running -------------------------------------------------------------------------------------


def _batch_size(pages: int, workers: int, polygon_rows: int = 0) -> int:
    """Several pages a task: a page costs well under a millisecond, far less than a task's overhead;
    fewer when the pages' polygons paint more than `POLYGON_ROWS_A_TASK` rows a task."""
    size = max(1, min(MAX_BATCH_PAGES, math.ceil(pages / (max(workers, 1) * BATCHES_PER_WORKER))))
    return max(1, min(size, POLYGON_ROWS_A_TASK * pages // polygon_rows)) if polygon_rows else size


def _run_batches(batches: Iterator[PageBatch], total: int, task: Callable[[PageBatch, Taxonomy], Outcome], taxonomy: Taxonomy,
                 executor: Executor | None, in_flight: int, progress: Progress | None,
                 take: Callable[[Outcome], Outcome] | None = None) -> list[Outcome]:
    """`task`'s outcomes in batch order, whatever the order in which they complete, each handed to
    `take` (`BatchJoin.take`) as soon as the ones before it are in; at most `in_flight` batches
    are pending at once. Bad input found by a worker ends the run with the error of the earliest
    batch, so the message is the same for any number of workers."""
    outcomes: list[Outcome] = []  # in batch order, through `take`
    arrived: dict[int, Outcome] = {}  # completed before an earlier batch
    errors: dict[int, InputError] = {}
    pending: dict[Future, tuple[int, int]] = {}
    done = 0

    def record(position: int, pages: int, outcome_of: Callable[[], Outcome]) -> None:
        nonlocal done
        try:
            arrived[position] = outcome_of()
        except InputError as error:
            errors[position] = error
            return
        while len(outcomes) in arrived:
            outcome = arrived.pop(len(outcomes))
            outcomes.append(outcome if take is None else take(outcome))
        done += pages
        if progress:
            progress(done, total)

    for position, batch in enumerate(batches):
        if errors:
            break  # no new work after bad input; the batches already running finish
        if executor is None:
            record(position, len(batch.matched), partial(task, batch, taxonomy))
            continue
        pending[executor.submit(task, batch, taxonomy)] = (position, len(batch.matched))
        if len(pending) >= in_flight:
            for future in wait(pending, return_when=FIRST_COMPLETED).done:
                record(*pending.pop(future), future.result)
    for future in as_completed(list(pending)):
        record(*pending.pop(future), future.result)
    if errors:
        raise errors[min(errors)]
    return outcomes


def input_bytes(*paths: Path | None) -> int:
    """The size of the inputs (files, or the files in folders), for the reading progress bar."""
    total = 0
    for path in paths:
        if path is None:
            continue
        try:
            files = [path] if path.is_file() else [child for child in path.rglob("*") if child.is_file()]
            total += sum(file.stat().st_size for file in files)
        except OSError:
            pass  # the reader will say what is wrong with it
    return total


@contextmanager
def terminal_reading(total_bytes: int, enabled: bool = True) -> Iterator[None]:
    """A tqdm bar on stderr while the inputs are read (only on a terminal, and when `enabled`; tqdm,
    18 ms of a 1,000-page job's start, is imported only then)."""
    from tore_engine.formats.progress import reading

    if not (enabled and sys.stderr.isatty()):
        yield
        return
    from tqdm import tqdm

    with tqdm(total=total_bytes or None, unit="B", unit_scale=True, desc="reading", leave=False) as bar, reading(bar.update):
        yield


@contextmanager
def terminal_progress(total: int, enabled: bool = True) -> Iterator[Progress | None]:
    """A tqdm bar on stderr as a progress callback, shown only when stderr is a terminal (and
    `enabled`); closed on the way out, whatever happened."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="page", leave=False) as bar:

        def update(done: int, _total: int) -> None:
            bar.update(done - bar.n)

        yield update


def evaluate_dataset(
    reference: LayoutSet,
    prediction: LayoutSet,
    *,
    taxonomy: str = "auto",
    workers: int = 1,
    executor: Executor | None = None,
    progress: Progress | None = None,
    min_score: float | None = None,
    warnings: list[InputWarning] | None = None,
    map: str = "coco",
    sweep: bool = False,
    page_id_map: PageIdMap | None = None,
    min_score_side: str = BOTH_SIDES,
) -> Evaluation:
    """TORE matrices of `prediction` against `reference`, summed over the reference's pages, with
    mAP of the same boxes beside them.

    `workers > 1` runs batches on a local process pool; an `executor` given by the caller (a Dask
    client's `get_executor()`, say) is used instead. The result is the same, bit for bit.
    `min_score` drops the boxes scored below it on either side (or, `min_score_side="prediction"`,
    the prediction's only: a scored pseudo-reference stays whole; the sweep follows), boxes without a
    score staying, and says how many in `warnings`. `warnings` (the label map's, say) come first in the result's.
    `map`: mAP's convention, coco or docling (docs/cli.md#map-beside-tore), or off; single taxonomy only.
    `sweep`: also the counts of a run at each minimum score 0.05 ... 0.95 (`Evaluation.sweep`),
    made from all boxes, whatever `min_score` says. `page_id_map`: how the prediction's page ids
    become the reference's (`pair_positions`; its unused keys are warned about first).
    """
    resolved = resolve_taxonomy(reference, prediction, taxonomy)
    convention, map_reason = _map_convention(map, resolved)
    matched, unscored = pair_positions(reference, prediction, page_id_map)
    if page_id_map is not None:
        warnings = [*(warnings or []), *page_id_map.unused_keys(prediction.page_ids())]
    before = (list(warnings or []), _sided(reference.warnings, "reference"), _sided(prediction.warnings, "prediction"), unscored)
    threshold = None if min_score is None else _checked_threshold(min_score)
    side = _checked_side(min_score_side)
    single = resolved.mode == "single"
    workers = workers if executor is not None else local_workers(workers, reference, prediction, len(matched))
    sources = page_source(reference), page_source(prediction)
    batches = partial(_batches, matched=matched, workers=workers, min_score=threshold, map_convention=convention, sweep=sweep,
                      min_score_side=side, outcomes=single)
    join = BatchJoin(len(matched), reference.box_count(), prediction.box_count())
    outcomes = _run(batches, sources, len(matched), evaluate_task, resolved, workers, executor, progress, mapping=convention is not None,
                    deciding=single, take=join.take)
    boxes = join.box_outcomes() if single else None
    map_state, map_reason = join.map_state(map_reason)
    gathered = PackedWarnings.joined([*before, *(outcome.warnings for outcome in outcomes), map_warnings(map_state)])
    sweep_state = SweepState.merged([outcome.sweep_state for outcome in outcomes if outcome.sweep_state is not None], resolved.size) if sweep else None
    source = partial(sweep_dataset, reference, prediction, matched, resolved, workers=workers, min_score=threshold, map_convention=convention,
                     min_score_side=side)
    box_source = partial(box_batches, reference, prediction, matched, resolved, min_score=threshold, min_score_side=side)
    evaluation = _assemble(resolved, reference.page_ids(), outcomes, join.cells(), gathered, warning_groups=tuple(len(group) for group in before),
                           map_state=map_state, map_reason=map_reason, sweep_state=sweep_state, sweep_source=source, page_paired=matched >= 0,
                           box_outcomes=boxes, errors_reason=box_outcomes.DUAL_TAXONOMY if boxes is None else box_outcomes.nothing_to_match(boxes),
                           box_source=box_source if single else None)
    give_back_free_memory()  # the batches' outcomes, received and let go of one by one
    return evaluation


def box_batches(reference: LayoutSet, prediction: LayoutSet, matched: np.ndarray, taxonomy: Taxonomy, *,
                min_score: float | None, min_score_side: str = BOTH_SIDES, page: int | None = None) -> Iterator[BoxColumns]:
    """The evaluated boxes again, batch by batch, as the evaluation read them (after the minimum
    score, scaled, unclipped), with each box's index in its file: what boxes.csv and `Evaluation.boxes`
    put beside the outcomes, read again rather than held; `page`: that page's alone (its position)."""
    pages = None if page is None else range(page, page + 1)
    sources = page_source(reference), page_source(prediction)
    for batch in _batches(sources, matched, 1, min_score=min_score, map_convention=None, sweep=False, pages=pages):
        references, predictions = batch.reference.columns(), batch.prediction.columns()
        kept: dict[str, np.ndarray | None] = {"reference": None, "prediction": None}
        if min_score is not None:
            references, predictions, _, within = _above_score(references, predictions, batch.matched, min_score, min_score_side)
            kept = {side: indices for side, (_, indices) in within.items()}
        prepared = prepare_columns(references, predictions, batch.matched, taxonomy)
        yield BoxColumns.of(list(prepared.page_ids), *prepared.side_boxes(), kept["reference"], kept["prediction"])


def _map_convention(name: str, taxonomy: Taxonomy) -> tuple[str | None, str | None]:
    """mAP's convention for this run, or None and why not."""
    if name == "off":
        return None, SWITCHED_OFF
    try:
        convention_named(name)
    except ValueError as error:
        raise InputError(f"{error}, or off") from None
    return (name, None) if taxonomy.mode == "single" else (None, DUAL_TAXONOMY)


def _run(batches: Callable[..., Iterator[PageBatch]], sources: Sources, page_count: int,
         task: Callable[[PageBatch, Taxonomy], Outcome], taxonomy: Taxonomy, workers: int, executor: Executor | None,
         progress: Progress | None, *, mapping: bool, deciding: bool = False, take: Callable[[Outcome], Outcome] | None = None) -> list[Outcome]:
    """`task` over the batches that `batches(sources, executor=...)` makes (each outcome handed to
    `take` in batch order): on the caller's executor, on a local pool of `workers` processes (the kernels
    loaded first, mAP's when `mapping`, TIDE's box outcomes' when `deciding`, and the `sources`
    columns held, so that the workers inherit them), or here."""
    in_flight = max(MIN_IN_FLIGHT, IN_FLIGHT_PER_WORKER * workers)
    if executor is not None or workers <= 1 or page_count <= 1:
        return _run_batches(batches(sources, executor=executor), page_count, task, taxonomy, executor, in_flight, progress, take)
    page_kernel.preload_for_pool()
    if mapping:
        map_kernel.preload_for_pool()
    if deciding:
        box_outcomes.preload_for_pool()
    with worker_pool(workers, inherited=sources) as pool:
        return _run_batches(batches(sources, executor=pool), page_count, task, taxonomy, pool, in_flight, progress, take)


def sweep_dataset(reference: LayoutSet, prediction: LayoutSet, matched: np.ndarray, taxonomy: Taxonomy, *, workers: int,
                  min_score: float | None, map_convention: str | None, min_score_side: str = BOTH_SIDES) -> SweepState:
    """The sweep of an evaluation made without it (`Evaluation.sweep()` later; `matched`: its
    `pair_positions`), on local workers: its counts only, the evaluation's own counts and mAP
    records being made already. mAP's records are made again only under a minimum score (the
    evaluation's are of the boxes it kept)."""
    workers = local_workers(workers, reference, prediction, len(matched))
    sources = page_source(reference), page_source(prediction)
    batches = partial(_batches, matched=matched, workers=workers, min_score=min_score, map_convention=map_convention, sweep=True,
                      min_score_side=min_score_side)
    states = _run(batches, sources, len(matched), sweep_task, taxonomy, workers, None, None,
                  mapping=min_score is not None and map_convention is not None)
    return SweepState.merged(states, taxonomy.size)


def _assemble(taxonomy: Taxonomy, page_ids: list[str], outcomes: list[BatchOutcome], cells: tuple[np.ndarray, np.ndarray, np.ndarray],
              warnings: PackedWarnings, **merged) -> Evaluation:
    """The evaluation from the batches' outcomes, stripped by `BatchJoin.take` of what it joined
    (`cells`: each page's, `BatchJoin.cells`). `merged`: the other state merged from them (mAP's,
    the sweep's)."""
    counts = ExactCounts.merge([outcome.counts for outcome in outcomes], taxonomy.size)
    pages = sum(outcome.page_count for outcome in outcomes)
    exact = object if any(outcome.reduced.dtype == object or outcome.pixels.dtype == object for outcome in outcomes) else np.int64  # Python integers where a batch needed them
    pixels, page_reduced, page_scored = np.empty(pages, exact), np.empty((pages, 2, 2), exact), np.empty(pages, np.int64)
    page = 0
    for outcome in outcomes:
        batch_pages = slice(page, page + outcome.page_count)
        assert outcome.scored is not None, "evaluate_task counts every batch's scored boxes"
        pixels[batch_pages], page_reduced[batch_pages], page_scored[batch_pages] = outcome.pixels, outcome.reduced, outcome.scored
        page = batch_pages.stop
    contribution_offsets, contribution_cell, contribution_value = cells
    page_reduced = exact_integers(page_reduced, page_reduced.size)
    return Evaluation(
        taxonomy=taxonomy,
        page_ids=page_ids,
        page_pixels=exact_integers(pixels.astype(object), len(pixels)),
        page_reduced=page_reduced,
        contribution_offsets=contribution_offsets,
        contribution_cell=contribution_cell,
        contribution_value=contribution_value,
        counts=counts,
        matrices=ToreMatrices.from_counts(taxonomy.mode, taxonomy.classes, counts, page_reduced.sum(axis=0)),
        input_warnings=warnings,
        page_scored=page_scored,
        **merged,
    )
