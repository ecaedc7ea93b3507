"""Benchmark: the compiled page kernel (`tore_engine/kernel.py`) against the NumPy path, in one run.

On the synthetic DocLayNet-like pages (`benchmarks/synthetic.py`: 1025 x 1025, 40 reference boxes,
17 classes) in batches of 256 pages, as the runner sends them, it times in CPU seconds:

- **engine**: the pages' cells from their prepared tasks (`dataset.numpy_cells` against
  `kernel.evaluate`): rasterisation, Algorithm 1, each page's cells, the batch's exact counts;
- **evaluate_batch**: the same plus preparing each page (outward rounding, warnings) and splitting
  the results by page, i.e. a worker's whole unit of work;

each the best and the median of `--repeats` runs, in µs a page, after checking that both paths
give the same bits. Then the JIT: `python -m tore_engine.kernel --warm` in a fresh process with an
empty cache folder (the cold compile) and again with that folder (the warm load), wall and CPU.

    .venv/bin/python -m benchmarks.bench_kernel [--pages 1024] [--repeats 7] [--mode single|dual] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.synthetic import synthetic_layouts
from tore_engine import jit, kernel
from tore_engine.dataset import evaluate_batch, numpy_cells, prepare_page
from tore_engine.taxonomy import resolve_taxonomy

BATCH = 256  # the runner's largest batch (dataset._batch_size)
REPOSITORY = Path(__file__).resolve().parents[1]


def _same_bits(compiled: kernel.Cells, expected: kernel.Cells) -> bool:
    arrays = all(a.dtype == b.dtype and a.tobytes() == b.tobytes() for a, b in zip(compiled[:4], expected[:4]))
    fields = ("denominator", "row", "column", "numerator")
    return arrays and all(np.array_equal(getattr(compiled[4], f), getattr(expected[4], f)) for f in fields)


def _cpu_us_per_page(run: Callable[[], object], pages: int, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append((time.process_time() - start) / pages * 1e6)
    return times


def _row(name: str, numpy_times: list[float], kernel_times: list[float]) -> str:
    best, median = min(kernel_times), statistics.median(kernel_times)
    return (
        f"| {name} | {min(numpy_times):.1f} | {statistics.median(numpy_times):.1f} | {best:.1f} | {median:.1f} "
        f"| {statistics.median(numpy_times) / median:.1f}x |"
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _warm(cache: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of `python -m tore_engine.kernel --warm` with this cache folder, and
    what it said."""
    env = {**os.environ, jit.CACHE_ENV: str(cache), "PYTHONPATH": str(REPOSITORY)}
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tore_engine.kernel", "--warm"], env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, _children_cpu() - cpu, (done.stderr + done.stdout).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_kernel", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=4 * BATCH, help="synthetic pages (default 1024)")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of each path (default 7)")
    parser.add_argument("--mode", choices=["single", "dual"], default="single", help="taxonomy mode (default single)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of the NumPy path's evaluate_batch")
    args = parser.parse_args(argv)

    reference, prediction = synthetic_layouts(args.pages)
    taxonomy = resolve_taxonomy(reference, prediction, args.mode)
    pairs = list(zip(reference.pages, prediction.pages))
    batches = [pairs[start : start + BATCH] for start in range(0, len(pairs), BATCH)]
    tasks = [[prepare_page(ref, pred, taxonomy)[0] for ref, pred in batch] for batch in batches]
    os.environ[kernel.KERNEL_ENV] = kernel.ALWAYS
    kernel.warm()  # load (or compile) before timing
    k = taxonomy.size
    if not all(_same_bits(kernel.evaluate(batch, k), numpy_cells(batch, k)) for batch in tasks):
        raise SystemExit("the kernel and the NumPy path differ")

    engine = {
        path: _cpu_us_per_page(lambda: [run(batch, k) for batch in tasks], args.pages, args.repeats)
        for path, run in (("numpy", numpy_cells), ("kernel", kernel.evaluate))
    }
    whole = {}
    for path in (kernel.NUMPY, kernel.ALWAYS):
        os.environ[kernel.KERNEL_ENV] = path
        whole[path] = _cpu_us_per_page(lambda: [evaluate_batch(batch, taxonomy) for batch in batches], args.pages, args.repeats)
    print(f"{args.pages} pages ({args.mode}, {k} classes), batches of {BATCH}, {args.repeats} runs; same bits: yes")
    print("| CPU µs/page | NumPy best | NumPy median | kernel best | kernel median | speed-up (medians) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(_row("engine (cells from prepared pages)", engine["numpy"], engine["kernel"]))
    print(_row("evaluate_batch (with preparing pages)", whole[kernel.NUMPY], whole[kernel.ALWAYS]))

    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "numba"
        for name in ("cold compile (empty cache)", "warm load"):
            wall, cpu, said = _warm(cache)
            reported = re.search(r"(compiled|loaded) in ([0-9.]+) s", said)
            print(f"JIT {name}: {wall:.2f} s wall, {cpu:.2f} s CPU for the whole process; the kernel reports {reported.group(1)} in {reported.group(2)} s")

    if args.profile:
        os.environ[kernel.KERNEL_ENV] = kernel.NUMPY
        profile = cProfile.Profile()
        profile.runcall(lambda: [evaluate_batch(batch, taxonomy) for batch in batches])
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
