"""Benchmark: what polygons cost beside boxes, on pages of the same size (benchmarks/RESULTS.md).

The synthetic DocLayNet-like pages of `benchmarks/synthetic.py` (1025 x 1025, 40 boxes a side) in
three forms, with the same regions a page:

- `boxes`: the boxes themselves;
- `as polygons`: each box given as its 4-point polygon (axis-aligned: the box rule at once);
- `rotated`: each box turned about its centre by an angle drawn per box (seeded) in
  [-`--angle`, `--angle`] degrees, a 4-point polygon to two decimals (its bbox the turned
  outline's bounds).

For each it times, in this process and one after another (a noisy machine: compare within a run),
the engine's part of an evaluation: preparing the batch (rounding, clipping, the polygons' pixel
rectangles) and the page kernel's cells (compiled, `TORE_PAGE_KERNEL=always`), and separately the
polygon rasteriser alone; the best and median of `--rounds`. It checks that `as polygons` gives the
boxes' cells bit for bit.

`--whole` times the whole `tore evaluate --workers 2` instead, as a user runs it, on `boxes` and
`rotated` written as native JSON (in `benchmarks/_work/polygons`), round after round in turn (each
run timed alone, its peak PSS from a second, sampled run: `common.timed_then_sampled`); with
`--against REV`, `rotated` also at another commit (a worktree), checking every output is the same
bytes.

    .venv/bin/python -m benchmarks.bench_polygons [--pages 200] [--angle 30] [--rounds 5] [--whole [--against REV]]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import (
    MB_BYTES,
    WORK,
    Run,
    best_median,
    load_average,
    machine_line,
    output_bytes,
    timed_then_sampled,
    tore_command,
    tore_environment,
    worktree,
)
from benchmarks.synthetic import synthetic_page_pairs
from tore_engine.core.layout import LayoutSet, Page, PageColumns
from tore_engine.core.polygons import Polygons
from tore_engine.core.taxonomy import resolve_taxonomy
from tore_engine.engine import page_kernel, polygons
from tore_engine.engine.preparation import prepare_columns
from tore_engine.formats import native


def turned(page: Page, rng: np.random.Generator, angle: float) -> Page:
    """The page with each box turned about its centre by a random angle in [-angle, angle] degrees
    (angle 0: each box as its 4-point polygon)."""
    outlines, bounds = [], []
    for x1, y1, x2, y2 in page.bboxes.tolist():
        theta = math.radians(rng.uniform(-angle, angle)) if angle else 0.0
        centre = np.array([(x1 + x2) / 2, (y1 + y2) / 2])
        corners = np.array([(x1, y1), (x2, y1), (x2, y2), (x1, y2)]) - centre
        turn = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
        # to two decimals, as the synthetic boxes are written: a file of 17-digit numbers costs
        # their reading, not their polygons (each number then goes through Python's `float`)
        points = np.round(corners @ turn.T + centre, 2) if angle else np.array([(x1, y1), (x2, y1), (x2, y2), (x1, y2)])
        outlines.append(points)
        bounds.append([*points.min(axis=0), *points.max(axis=0)])
    return Page(page.id, page.width, page.height, page.labels, np.array(bounds).reshape(-1, 4), page.scores, None, Polygons.of(outlines))


def _plain(page: Page) -> Page:
    return Page(page.id, page.width, page.height, page.labels, page.bboxes, page.scores)


def data_sets(pages: int, angle: float) -> dict[str, tuple[LayoutSet, LayoutSet]]:
    pairs = list(synthetic_page_pairs(pages))
    rng = np.random.default_rng(0)
    as_polygons = [(turned(r, rng, 0), turned(p, rng, 0)) for r, p in pairs]
    forms = {"boxes": [(_plain(r), _plain(p)) for r, p in as_polygons],  # the polygons' bounds: a few synthetic boxes have y2 < y1
             "as polygons": as_polygons,
             "rotated": [(turned(r, rng, angle), turned(p, rng, angle)) for r, p in pairs]}
    return {name: (LayoutSet("gt", PageColumns.from_pages([r for r, _ in form])), LayoutSet("model", PageColumns.from_pages([p for _, p in form])))
            for name, form in forms.items()}


def engine_part(reference: LayoutSet, prediction: LayoutSet) -> Callable[[], tuple]:
    taxonomy = resolve_taxonomy(reference, prediction)
    references, predictions = reference.pages, prediction.pages
    matched = np.arange(len(references))

    def run() -> tuple:
        prepared = prepare_columns(references, predictions, matched, taxonomy)
        boxes, pieces, polygon_pages = prepared.kernel_inputs()
        cells = page_kernel.evaluate_arrays(prepared.frames, prepared.offsets, boxes, taxonomy.size, len(references), polygon_pages, pieces)
        assert cells is not None, "the page kernel declined"
        return cells

    return run


def rasteriser_part(reference: LayoutSet) -> Callable[[], tuple]:
    columns = reference.pages
    outlines = columns.polygons if columns.polygons is not None else Polygons.none(columns.box_count())
    widths = np.repeat(np.ceil(columns.sizes[:, 0]).astype(np.int64), np.diff(columns.offsets))
    heights = np.repeat(np.ceil(columns.sizes[:, 1]).astype(np.int64), np.diff(columns.offsets))
    return lambda: polygons.pixel_pieces(outlines.points, outlines.offsets, widths, heights)


def timed(function: Callable[[], object], rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return best_median(times)


def written(pages: int, angle: float) -> dict[str, Path]:
    """`boxes` and `rotated` as native JSON files, each pair in its folder (written once)."""
    folders = {name: WORK / "polygons" / f"{name}_{pages}_{angle:g}" for name in ("boxes", "rotated")}
    if not all((folder / "prediction.json").exists() for folder in folders.values()):
        sets = data_sets(pages, angle)
        for name, folder in folders.items():
            folder.mkdir(parents=True, exist_ok=True)
            for side, layout in zip(("reference", "prediction"), sets[name]):
                native.write(layout, folder / f"{side}.json")
    return folders


def whole_runs(pages: int, angle: float, rounds: int, against: str | None) -> bool:
    """`tore evaluate --workers 2` on both forms (and on `rotated` at `against`), interleaved; prints
    each run, then the medians against `boxes`. True unless `against`'s outputs differ."""
    folders = written(pages, angle)
    configurations = {"boxes": folders["boxes"], "rotated": folders["rotated"], **({f"rotated at {against}": folders["rotated"]} if against else {})}
    runs: dict[str, list[Run]] = {name: [] for name in configurations}
    with contextlib.ExitStack() as stack:
        trees = {f"rotated at {against}": stack.enter_context(worktree(against))} if against else {}
        for round_number in range(rounds):
            for name, data in configurations.items():
                arguments = ["evaluate", str(data / "reference.json"), str(data / "prediction.json"), "--out", str(WORK / "polygons" / "out" / name),
                             "--workers", "2", "-q"]
                tree = trees.get(name)
                command = tore_command(arguments) if tree is None else [sys.executable, "-m", "tore_engine", *arguments]
                run = timed_then_sampled(command, env=tore_environment(**({} if tree is None else {"PYTHONPATH": str(tree)})), cwd=tree)
                runs[name].append(run)
                print(f"  round {round_number + 1} {name:22s} wall {run.seconds:6.2f} s, CPU {run.cpu_seconds:6.2f} s, "
                      f"peak PSS {run.peak_pss / MB_BYTES:4.0f} MB (load {load_average()})", flush=True)
    base = statistics.median(run.seconds for run in runs["boxes"])
    for name, measured in runs.items():
        wall = statistics.median(run.seconds for run in measured)
        print(f"  {name:<22} wall {wall:6.2f} s median ({min(run.seconds for run in measured):.2f} best), "
              f"CPU {statistics.median(run.cpu_seconds for run in measured):6.2f} s: x{wall / base:.2f} of boxes")
    if not against:
        return True
    this, other = (output_bytes(WORK / "polygons" / "out" / name) for name in ("rotated", f"rotated at {against}"))
    same = bool(this) and this == other
    print(f"  every output the same bytes as at {against}: {same}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--angle", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--whole", action="store_true", help="time the whole `tore evaluate` instead of the engine's part")
    parser.add_argument("--against", help="with --whole: `rotated` also at this commit (any git revision)")
    args = parser.parse_args(argv)
    if args.whole:
        print(machine_line())
        print(f"{args.pages} pages of 1025 x 1025, 40 boxes a side, rotated by up to {args.angle:g} degrees: tore evaluate --workers 2")
        return 0 if whole_runs(args.pages, args.angle, args.rounds, args.against) else 1
    os.environ[page_kernel.KERNEL_ENV] = page_kernel.ALWAYS
    page_kernel.warm()
    polygons.warm()
    sets = data_sets(args.pages, args.angle)
    print(machine_line())
    print(f"{args.pages} pages of 1025 x 1025, 40 boxes a side; rotated by up to {args.angle:g} degrees; best / median of {args.rounds}")
    results = {}
    for name, (reference, prediction) in sets.items():
        run = engine_part(reference, prediction)
        results[name] = run()
        best, median = timed(run, args.rounds)
        rasterise = rasteriser_part(reference)
        pieces = len(rasterise()[0])
        raster = timed(rasterise, args.rounds)[0]
        base = timed(engine_part(*sets["boxes"]), 1)[0] if name != "boxes" else best
        print(f"  {name:<12} engine {best:6.3f} s (median {median:6.3f})   rasteriser alone {raster:6.3f} s (reference side, "
              f"{pieces:,} rectangles)   x{best / base:.2f} of boxes")
    same = all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(results["boxes"][:4], results["as polygons"][:4]))
    print(f"  as polygons gives the boxes' cells bit for bit: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
