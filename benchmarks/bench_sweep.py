"""Benchmark: the sweep (issue 22 item 3), `tore evaluate --sweep`, against one evaluation, from
files, process start included, in interleaved rounds of one process run (see bench_map_evaluate).

The same synthetic pages (their predictions scored from 0.2 to 1.0, so every point keeps a
different set of boxes). Configurations, round after round: one evaluation and the same with
`--sweep`, with mAP off and with mAP on (the default; the sweep's detection view then reads mAP's
own matching). The measure is `--sweep` over the plain run (target: the 19 points at most 5x one
evaluation); the sweep's own cost is that minus one. A smaller in-process part (`--inside`) times
a worker's batch: the page kernel once, the sweep kernel (all 19 points at once), and 19 runs of
the page kernel, one a point (what sharing the rasterisation saves). `--later` times a sweep asked
for after its evaluation (`Evaluation.sweep()`, the app's operating-point button), in process, 2
workers: the sweep's own run (`runner.sweep_dataset`) against what it was before, the evaluation
made again with its sweep (`evaluate_dataset(..., sweep=True)`), in interleaved rounds, the same
counts asserted.

    .venv/bin/python -m benchmarks.bench_sweep [--pages 100000] [--rounds 3] [--inside 1024] [--later 20000]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np

from benchmarks.bench_map_evaluate import interleaved, summary_table
from benchmarks.common import machine_line, synthetic_files
from benchmarks.synthetic import synthetic_layouts


def inside(pages: int, repeats: int = 5) -> None:
    """CPU µs a page of a worker's batch (256 pages), best of `repeats`: the page kernel once, the
    sweep kernel with Algorithm 1 on its pairs, and the page kernel once a point."""
    from tore_engine.core.layout import page_source
    from tore_engine.core.taxonomy import resolve_taxonomy
    from tore_engine.engine import page_kernel, sweep_kernel
    from tore_engine.engine.preparation import prepare_columns
    from tore_engine.metrics.sweep import POINTS, SweepState, score_levels
    from tore_engine.run.runner import pair_positions

    reference, prediction = synthetic_layouts(pages)
    taxonomy = resolve_taxonomy(reference, prediction)
    matched, _ = pair_positions(reference, prediction)
    batches = []
    for first in range(0, pages, 256):
        chosen = np.arange(first, min(first + 256, pages))
        batches.append(prepare_columns(page_source(reference).part(chosen).columns(), page_source(prediction).part(chosen).columns(),
                                       matched[chosen] - first, taxonomy))
    page_kernel._kernels.load(), sweep_kernel._kernels.load()

    def once(prepared) -> None:
        boxes, pieces, polygon_pages = prepared.kernel_inputs()
        page_kernel.evaluate_arrays(prepared.frames, prepared.offsets, boxes, taxonomy.size, pages, polygon_pages, pieces)

    def swept(prepared) -> None:
        SweepState.from_pairs(*sweep_kernel.sweep_pairs(prepared, score_levels(prepared.scores, len(prepared.scores)), taxonomy.size, pages), taxonomy.size)

    def per_point(prepared) -> None:
        levels = score_levels(prepared.scores, len(prepared.scores))
        for point in range(POINTS):
            once(prepared.kept(levels > point))

    for name, work in (("page kernel, once", once), ("sweep kernel + Algorithm 1 on its pairs, 19 points", swept), ("page kernel once a point, 19 runs", per_point)):
        times = []
        for _ in range(repeats):
            start = time.process_time()
            for prepared in batches:
                work(prepared)
            times.append(time.process_time() - start)
        print(f"  {name}: {min(times) / pages * 1e6:.1f} us a page (CPU, best of {repeats})")


def _sweep_made_with(reference, prediction, min_score: float | None):
    """What a sweep made later cost before `sweep_dataset`: the evaluation again, with its sweep."""
    from tore_engine.run.runner import evaluate_dataset

    return evaluate_dataset(reference, prediction, workers=2, min_score=min_score, sweep=True).sweep_state


def later(pages: int, rounds: int) -> None:
    """Seconds of a sweep made after its evaluation, without and with a minimum score: its own run
    against the evaluation made again with its sweep."""
    import statistics

    from tore_engine.api import load_pair
    from tore_engine.run.runner import evaluate_dataset, pair_positions, sweep_dataset

    folder = synthetic_files(pages)
    reference, prediction = load_pair(folder / "reference.json", folder / "prediction.json")
    for min_score in (None, 0.5):
        made = evaluate_dataset(reference, prediction, workers=2, min_score=min_score)
        convention = made.map_state.convention if made.map_state is not None else None
        matched, _ = pair_positions(reference, prediction)
        ways = {"the sweep's own run": partial(sweep_dataset, reference, prediction, matched, made.taxonomy, workers=2, min_score=min_score,
                                               map_convention=convention),
                "the evaluation again, with its sweep": partial(_sweep_made_with, reference, prediction, min_score)}
        times: dict[str, list[float]] = {name: [] for name in ways}
        states = {}
        for _ in range(rounds):
            for name, way in ways.items():
                start = time.perf_counter()
                states[name] = way()
                times[name].append(time.perf_counter() - start)
        own, again = states.values()
        fields = ("denominator", "row", "column", "numerator")
        assert np.array_equal(own.reduced, again.reduced) and all(
            np.array_equal(getattr(a, name), getattr(b, name)) for a, b in zip(own.counts, again.counts, strict=True) for name in fields
        ), "the two ways differ"
        shown = "; ".join(f"{name} {statistics.median(values):.2f} s" for name, values in times.items())
        print(f"  a sweep made later, {pages:,} pages, minimum score {min_score}: {shown} (medians of {rounds})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inside", type=int, default=1024, help="pages of the in-process part (0: leave it out)")
    parser.add_argument("--later", type=int, default=0, help="pages of a sweep made later, timed alone (0: not timed)")
    arguments = parser.parse_args(argv)
    print(machine_line())
    if arguments.later:
        later(arguments.later, arguments.rounds)
        return 0
    if arguments.inside:
        inside(arguments.inside)
    data = synthetic_files(arguments.pages)
    configurations = {"one evaluation, mAP off": ["--map", "off"], "--sweep, mAP off": ["--map", "off", "--sweep"],
                      "one evaluation (mAP on)": [], "--sweep (mAP on)": ["--sweep"]}
    runs = interleaved(configurations, data, arguments.rounds)
    print(summary_table(runs, "one evaluation, mAP off"))
    print(summary_table({name: runs[name] for name in ("one evaluation (mAP on)", "--sweep (mAP on)")}, "one evaluation (mAP on)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
