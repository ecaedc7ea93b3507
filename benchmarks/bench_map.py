"""Benchmark: mAP (tore_engine.metrics) against docling-metrics-layout 0.17.0's mAP and pycocotools
2.0.11 on the same synthetic DocLayNet-like pages, in one run; then tore_engine alone at 100,000 pages.

- 1,000 pages (`benchmarks/synthetic.py`, seed 0, 20 reference boxes a page, scored predictions):
  tore_engine's compiled path (kernels loaded, CPU time of matching + summarising) and the
  reference's `MAPLayoutEvaluator.evaluate_dataset` (per page and over all pages, as
  `LayoutMetrics` runs it; CPU time of that call, in its own environment: see
  tests/metrics/oracles.py) in turn, `--rounds` times (medians); then tore_engine's NumPy path and
  pycocotools (COCOeval over all pages, and once more per page), once each.
  Every figure is compared: the `docling` convention with the reference exactly (float32 values),
  `coco` with pycocotools within 1e-12.
- 100,000 pages (those 1,000 repeated): matching in one process, and in chunks of 5,000 pages on
  two worker processes forked after loading the kernels; merging and summarising in the driver.
  CPU times, which hardly depend on what else the shared machine runs, and wall times.

    .venv/bin/python -m benchmarks.bench_map [--pages 1000] [--rounds 3] [--large 100000] [--skip-reference]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from benchmarks.common import machine_line
from benchmarks.synthetic import DOCLAYNET_CLASSES, synthetic_page_pairs
from tests.metrics.oracles import (
    REFERENCE_PYTHON,
    STATS,
    coco_oracle,
    docling_case,
    timed_docling_reference,
)
from tore_engine.metrics import map_kernel
from tore_engine.metrics.map_types import CONVENTIONS, PageMatches, SideBoxes
from tore_engine.metrics.mean_average_precision import match_pages, summarise

BOXES = 20
CLASSES = len(DOCLAYNET_CLASSES)


def synthetic_pages(count: int) -> list:
    """The API's pages of `count` synthetic page pairs."""
    index = {name: k for k, name in enumerate(DOCLAYNET_CLASSES)}
    return [((reference.bboxes, np.array([index[label] for label in reference.labels], np.int64)),
             (prediction.bboxes, np.array([index[label] for label in prediction.labels], np.int64), prediction.scores))
            for reference, prediction in synthetic_page_pairs(count, boxes=BOXES)]


def sides(pages: list) -> tuple[SideBoxes, SideBoxes]:
    return (SideBoxes.from_pages([(xyxy, classes, None) for (xyxy, classes), _ in pages]),
            SideBoxes.from_pages([boxes for _, boxes in pages]))


def cpu(function, repeats: int = 1) -> tuple[float, object]:
    """The best CPU time of `repeats` calls, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        times.append(time.process_time() - start)
    return min(times), result


def ours(pages: list, convention: str, mode: str, repeats: int):
    os.environ[map_kernel.KERNEL_ENV] = mode
    reference, prediction = sides(pages)
    return cpu(lambda: summarise(match_pages(reference, prediction, CLASSES, CONVENTIONS[convention]), CONVENTIONS[convention]), repeats)


def coco_agrees(result, oracle: dict) -> float:
    """The largest difference from pycocotools over every figure, per-class value and page value
    (inf when an undefined value is not undefined on both sides)."""
    def gap(a, b):
        if b == -1 or a is None or (isinstance(a, float) and np.isnan(a)):
            return 0.0 if (b == -1) == (a is None or np.isnan(a)) else np.inf
        return abs(a - b)

    gaps = [gap(getattr(result, name), oracle["stats"][name]) for name in STATS]
    gaps += [gap(result.per_class[label][k], values[k]) for label, values in oracle["per_class"].items() for k in (0, 1)]
    gaps += [gap(a, b) for ours_row, theirs in zip(result.pages.tolist(), oracle["pages"]) for a, b in zip(ours_row, theirs)]
    return max(gaps)


def docling_agrees(result, expected: dict) -> bool:
    def same(a, b):
        return a is None if b == -1 else a == b

    names = {str(k): k for k in range(CLASSES)}
    pages_equal = all(same(None if np.isnan(v) else v, page[name])
                      for row, page in zip(result.pages.tolist(), expected["page_evaluations"].values())
                      for v, name in zip(row, ("map", "map_50", "map_75")))
    return (all(same(getattr(result, name), expected[name]) for name in STATS) and pages_equal
            and all(same(result.per_class[names[name]][0], value) for name, value in expected["map_per_class"].items()))


def compare_at(count: int, skip_reference: bool, rounds: int) -> None:
    """Ours and the reference in turn, `rounds` times (the shared machine's load falls on both
    alike), then each convention's agreement with its reference."""
    pages = synthetic_pages(count)
    boxes = sum(len(p[0][1]) + len(p[1][1]) for p in pages)
    print(f"\n{count:,} pages, {boxes:,} boxes (both sides)")
    load_start = time.perf_counter()
    map_kernel.matching.load(), map_kernel.accumulating.load()
    print(f"  loading the two compiled kernels (numba import included): {time.perf_counter() - load_start:.2f} s wall")
    with_reference = not skip_reference and REFERENCE_PYTHON.exists()
    results, ours_seconds, reference_seconds, run = {}, {name: [] for name in CONVENTIONS}, [], None
    for round_number in range(rounds):
        for convention in CONVENTIONS:
            seconds, results[convention] = ours(pages, convention, map_kernel.ALWAYS, 1)
            ours_seconds[convention].append(seconds)
        line = f"  round {round_number + 1}: tore_engine " + ", ".join(f"{name} {seconds[-1]:.3f} s" for name, seconds in ours_seconds.items())
        if with_reference:
            run = timed_docling_reference([docling_case(pages, [str(k) for k in range(CLASSES)])])[0]
            reference_seconds.append(run["cpu_seconds"])
            line += f"; docling-metrics-layout {run['cpu_seconds']:.2f} s (CPU)"
        print(line, flush=True)
    for convention, seconds in ours_seconds.items():
        best, median = min(seconds), statistics.median(seconds)
        print(f"  tore_engine {convention:8s} compiled: {median:.3f} s CPU median (best {best:.3f}; {median / count * 1e3:.3f} ms a page)")
    numpy_seconds, numpy_result = ours(pages, "coco", map_kernel.NUMPY, 1)
    print(f"  tore_engine coco     NumPy path: {numpy_seconds:.2f} s CPU ({numpy_seconds / count * 1e3:.2f} ms a page); "
          f"same figures as compiled: {numpy_result.per_class == results['coco'].per_class and np.array_equal(numpy_result.pages, results['coco'].pages, equal_nan=True)}")
    start = time.process_time()
    oracle = coco_oracle(pages, CLASSES)
    coco_seconds = time.process_time() - start
    print(f"  pycocotools (over all pages, then each page alone): {coco_seconds:.2f} s CPU; "
          f"coco convention's largest difference: {coco_agrees(results['coco'], oracle):.1e}")
    if run is None:
        print(f"  docling-metrics-layout: skipped (no reference environment at {REFERENCE_PYTHON})")
        return
    reference = statistics.median(reference_seconds)
    print(f"  docling-metrics-layout 0.17.0 evaluate_dataset: {reference:.2f} s CPU median (best {min(reference_seconds):.2f}; "
          f"{reference / count * 1e3:.1f} ms a page); docling convention equal: {docling_agrees(results['docling'], run['evaluation'])}")
    print(f"  ratio reference / tore_engine (docling convention, CPU medians): {reference / statistics.median(ours_seconds['docling']):.0f}x; "
          f"pycocotools / tore_engine (coco): {coco_seconds / statistics.median(ours_seconds['coco']):.0f}x")


def _match_chunk(bounds: tuple[int, int]) -> tuple[PageMatches, float]:
    """A worker's part: the matches of pages `first:last` and the CPU time they took."""
    first, last = bounds
    reference, prediction = _LARGE
    start = time.process_time()
    matches = map_kernel.match_pages(_slice(reference, first, last), _slice(prediction, first, last), CLASSES, CONVENTIONS[_CONVENTION])
    return matches, time.process_time() - start


def _slice(side: SideBoxes, first: int, last: int) -> SideBoxes:
    a, b = side.offsets[first], side.offsets[last]
    return SideBoxes(side.offsets[first:last + 1] - a, side.xyxy[a:b], side.classes[a:b], None if side.scores is None else side.scores[a:b])


_LARGE: tuple[SideBoxes, SideBoxes] = (None, None)  # type: ignore[assignment]  # the large set, inherited by forked workers
_CONVENTION = "coco"


def large(count: int) -> None:
    global _LARGE, _CONVENTION
    base = synthetic_pages(1000)
    pages = [base[k % len(base)] for k in range(count)]
    _LARGE = sides(pages)
    print(f"\n{count:,} pages (the 1,000 repeated), {len(_LARGE[0].classes) + len(_LARGE[1].classes):,} boxes")
    os.environ[map_kernel.KERNEL_ENV] = map_kernel.ALWAYS
    map_kernel.matching.load(), map_kernel.accumulating.load()
    for convention in CONVENTIONS:
        _CONVENTION = convention
        matches, seconds = _match_chunk((0, count))
        chunks = [(first, min(first + 5_000, count)) for first in range(0, count, 5_000)]  # tasks as a pool would hand them out
        start = time.perf_counter()
        with ProcessPoolExecutor(max_workers=2) as pool:  # forked: the workers inherit the loaded kernels and the pages
            parts = list(pool.map(_match_chunk, chunks))
        parallel = time.perf_counter() - start
        wall, start = time.perf_counter(), time.process_time()
        merged = PageMatches.merged([part for part, _ in parts])
        merging = time.process_time() - start
        start = time.process_time()
        result = summarise(merged, CONVENTIONS[convention])
        summarising, wall = time.process_time() - start, time.perf_counter() - wall
        print(f"  {convention:8s} matching: {seconds:.2f} s CPU in one process ({seconds / count * 1e6:.1f} us a page), "
              f"{sum(s for _, s in parts):.2f} s CPU in 2 workers, {parallel:.2f} s wall (pool start included); driver: merging "
              f"{merging:.2f} s + summarising {summarising:.2f} s CPU ({wall:.2f} s wall); {len(matches.classes):,} records; "
              f"same records as one process: {_same_records(merged, matches)}; "
              f"map {result.map:.6f}")


def _same_records(a: PageMatches, b: PageMatches) -> bool:
    """The same records, the match bits compared (their table's rows differ with how runs were joined)."""
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip((a.classes, a.scores, a.ranks, *a.bits()), (b.classes, b.scores, b.ranks, *b.bits())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--skip-reference", action="store_true", help="leave out docling-metrics-layout")
    parser.add_argument("--rounds", type=int, default=3, help="ours and the reference in turn, this many times")
    arguments = parser.parse_args(argv)
    print(machine_line())
    compare_at(arguments.pages, arguments.skip_reference, arguments.rounds)
    if arguments.large:
        large(arguments.large)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
