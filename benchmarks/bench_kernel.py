"""Benchmark: the compiled page kernel (`tore_engine/kernel.py`) against the NumPy path, in one run.

On the synthetic DocLayNet-like pages (`benchmarks/synthetic.py`: 1025 x 1025, 40 reference boxes,
17 classes) in batches of 256 pages, as the runner sends them, it times in CPU seconds:

- **engine**: the pages' cells from their prepared tasks (`dataset.numpy_cells` against
  `kernel.evaluate`): rasterisation, Algorithm 1, each page's cells, the batch's exact counts;
- **evaluate_batch**: the same plus preparing each page (outward rounding, warnings) and splitting
  the results by page, i.e. a worker's whole unit of work;

each the best and the median of `--repeats` runs, in µs a page, after checking that both paths
give the same bits. Then the JIT, in a fresh process with an empty cache folder (the cold compile)
and again with that folder (the warm load), wall and CPU: the page kernel (`kernel.warm`, what
`python -m tore_engine.engine.page_kernel --warm` runs) and the JSON structure scan (`json_kernel`), each also
timed alone inside that process, numba's import apart. `--json` prints all of it as one JSON
object instead (`benchmarks/bench_scale.py` reads it).

    .venv/bin/python -m benchmarks.bench_kernel [--pages 1024] [--repeats 7] [--mode single|dual] [--profile] [--json]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
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
from tore_engine.core import jit
from tore_engine.core.taxonomy import resolve_taxonomy
from tore_engine.engine import page_kernel as kernel
from tore_engine.run.runner import evaluate_batch, numpy_cells, prepare_page

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


# Run in a fresh interpreter with NUMBA_CACHE_DIR set: loads (or compiles into that folder) the three
# kernels one after the other, timing numba's import and each kernel alone.
JIT_CHILD = """
import json, time
def timed(run):
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result
numba_import, numba_cpu, _ = timed(lambda: __import__("numba"))
from tore_engine import json_kernel, kernel
from tore_engine.formats import native_kernel
page, page_cpu, said = timed(kernel.warm)
cached = json_kernel.kernels.is_cached()
scan, scan_cpu, _ = timed(json_kernel.kernels.load)
parser, parser_cpu, _ = timed(native_kernel.kernels.load)
print(json.dumps({"numba_import": numba_import, "numba_import_cpu": numba_cpu, "page_kernel": page, "page_kernel_cpu": page_cpu,
                  "page_kernel_said": said, "json_kernel": scan, "json_kernel_cpu": scan_cpu, "json_kernel_was_cached": cached,
                  "page_parser": parser, "page_parser_cpu": parser_cpu}))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def jit_process(cache: Path, command: list[str] | None = None) -> dict:
    """Wall and CPU seconds of a fresh process loading both kernels with this cache folder (cold
    when it is empty), and what it timed inside; or of `command` (what it printed, as "said")."""
    env = {**os.environ, jit.CACHE_ENV: str(cache), "PYTHONPATH": str(REPOSITORY)}
    env.pop(kernel.KERNEL_ENV, None)
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command or [sys.executable, "-c", JIT_CHILD], env=env, capture_output=True, text=True, check=True)
    times = {"wall": time.perf_counter() - start, "cpu": _children_cpu() - cpu}
    if command:
        return {**times, "said": (done.stderr + done.stdout).strip()}
    return {**times, **json.loads(done.stdout.strip().splitlines()[-1])}


WARM_COMMAND = [sys.executable, "-m", "tore_engine.engine.page_kernel", "--warm"]  # the install step (`./run.sh test` runs it)


def jit_times(runs: int = 1) -> dict[str, list[dict]]:
    """`runs` times each, in a new, empty cache folder: both kernels loaded one after the other,
    timed inside (cold compile, then warm load from the same folder); and the install step
    `python -m tore_engine.engine.page_kernel --warm` as shipped (cold, then warm), with what it said."""
    times: dict[str, list[dict]] = {"cold": [], "warm": [], "warm_command_cold": [], "warm_command_warm": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder) / "numba"
            times["cold"].append(jit_process(cache))
            times["warm"].append(jit_process(cache))
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder) / "numba"
            times["warm_command_cold"].append(jit_process(cache, WARM_COMMAND))
            times["warm_command_warm"].append(jit_process(cache, WARM_COMMAND))
    return times


def engine_times(pages: int, repeats: int, mode: str) -> dict:
    """CPU µs a page of each path, engine alone and evaluate_batch, after checking equal bits."""
    reference, prediction = synthetic_layouts(pages)
    taxonomy = resolve_taxonomy(reference, prediction, mode)
    pairs = list(zip(reference.pages, prediction.pages))
    batches = [pairs[start : start + BATCH] for start in range(0, len(pairs), BATCH)]
    tasks = [[prepare_page(ref, pred, taxonomy)[0] for ref, pred in batch] for batch in batches]
    os.environ[kernel.KERNEL_ENV] = kernel.ALWAYS
    kernel.warm()  # load (or compile) before timing
    k = taxonomy.size
    if not all(_same_bits(kernel.evaluate(batch, k), numpy_cells(batch, k)) for batch in tasks):
        raise SystemExit("the kernel and the NumPy path differ")
    engine = {
        path: _cpu_us_per_page(lambda run=run: [run(batch, k) for batch in tasks], pages, repeats)
        for path, run in (("numpy", numpy_cells), ("kernel", kernel.evaluate))
    }
    whole = {}
    for path in (kernel.NUMPY, kernel.ALWAYS):
        os.environ[kernel.KERNEL_ENV] = path
        whole["numpy" if path == kernel.NUMPY else "kernel"] = _cpu_us_per_page(lambda: [evaluate_batch(batch, taxonomy) for batch in batches], pages, repeats)
    os.environ.pop(kernel.KERNEL_ENV)
    return {"pages": pages, "mode": mode, "classes": k, "repeats": repeats, "same_bits": True, "engine": engine, "evaluate_batch": whole,
            "taxonomy": taxonomy, "batches": batches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_kernel", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=4 * BATCH, help="synthetic pages (default 1024)")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of each path (default 7)")
    parser.add_argument("--mode", choices=["single", "dual"], default="single", help="taxonomy mode (default single)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of the NumPy path's evaluate_batch")
    parser.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    parser.add_argument("--jit-runs", type=int, default=1, help="cold compiles and warm loads, each in a fresh process (default 1)")
    args = parser.parse_args(argv)

    times = engine_times(args.pages, args.repeats, args.mode)
    engine, whole, taxonomy, batches = times["engine"], times["evaluate_batch"], times.pop("taxonomy"), times.pop("batches")
    times["jit"] = jit_times(args.jit_runs)
    if args.json:
        print(json.dumps(times))
    else:
        print(f"{args.pages} pages ({args.mode}, {times['classes']} classes), batches of {BATCH}, {args.repeats} runs; same bits: yes")
        print("| CPU µs/page | NumPy best | NumPy median | kernel best | kernel median | speed-up (medians) |")
        print("|---|---:|---:|---:|---:|---:|")
        print(_row("engine (cells from prepared pages)", engine["numpy"], engine["kernel"]))
        print(_row("evaluate_batch (with preparing pages)", whole["numpy"], whole["kernel"]))
        for key, name in (("warm_command_cold", "`python -m tore_engine.engine.page_kernel --warm`, empty cache"), ("warm_command_warm", "the same, warm cache")):
            for run in times["jit"][key]:
                print(f"JIT {name}: {run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU; it said: {' / '.join(run['said'].splitlines())}")
        for name, run in [(name, run) for key, name in (("cold", "cold compile (empty cache)"), ("warm", "warm load")) for run in times["jit"][key]]:
            print(f"JIT {name}: {run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU for the whole process; inside it (wall / CPU) numba's "
                  f"import {run['numba_import']:.2f} / {run['numba_import_cpu']:.2f} s, the page kernel {run['page_kernel']:.2f} / "
                  f"{run['page_kernel_cpu']:.2f} s ({run['page_kernel_said'].split(' in ')[0]}), the JSON kernel {run['json_kernel']:.2f} / "
                  f"{run['json_kernel_cpu']:.2f} s ({'loaded' if run['json_kernel_was_cached'] else 'compiled'})")

    if args.profile:
        os.environ[kernel.KERNEL_ENV] = kernel.NUMPY
        profile = cProfile.Profile()
        profile.runcall(lambda: [evaluate_batch(batch, taxonomy) for batch in batches])
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
