"""Benchmark: which scanner applies the JSON rules (nesting depth, keys repeated in one object)
below `tore_engine.io.json.KERNEL_MIN_BYTES` (issue 21 item 5).

Candidates, each on native layout JSON files of about 10 KB, 1 MB and just under 8 MiB (synthetic
predictions, `benchmarks/synthetic.py`), each in a fresh process:

- **numpy**: `scan_json(compiled=False)`, the NumPy structure scan (depth by a cumulative sum over
  the structural characters outside strings, repeated keys by sorting fingerprints);
- **stdlib**: a depth check over the brackets outside strings (NumPy), then the standard library's
  `json.loads` with an `object_pairs_hook` that refuses a repeated key (it cannot say where: a
  repeat found would still need a locator);
- **compiled**: `scan_json(compiled=True)`, the Numba scan, once loaded (its load, numba's import
  included, is timed apart in a fresh process: `load`).

Time: CPU time (the machine is shared; a scan is one thread), the best and the median of
`--repeats` calls in one process. Memory: the growth of the
process's peak RSS (`ru_maxrss`) over the calls, above what it was after reading the file and one
call on a tiny text. Processes alternate their order round after round.

    .venv/bin/python -m benchmarks.bench_json_rules [--rounds 3] [--repeats 15]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import WORK
from benchmarks.synthetic import write_layout_files

SIZES = {"10 KB": 3, "1 MB": 300, "8 MiB": 2500}  # pages of synthetic predictions
CANDIDATES = ("numpy", "stdlib", "compiled")


def _refuse_repeats(pairs: list[tuple[str, object]]) -> dict:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise ValueError("a key repeats")
    return mapping


def _bracket_depth(data: bytes) -> int:
    """The deepest nesting of a JSON text: brackets outside strings, summed."""
    from tore_engine.io.json import _string_quotes

    chars = np.frombuffer(data, dtype=np.uint8)
    brackets = np.flatnonzero((chars == 91) | (chars == 93) | (chars == 123) | (chars == 125))
    brackets = brackets[np.searchsorted(_string_quotes(chars), brackets) % 2 == 0]
    opening = (chars[brackets] == 91) | (chars[brackets] == 123)
    return int(np.cumsum(np.where(opening, 1, -1)).max(initial=0))


def _stdlib(data: bytes) -> None:
    from tore_engine.io.json import MAX_JSON_DEPTH

    if _bracket_depth(data) > MAX_JSON_DEPTH:
        raise ValueError("too deep")
    json.loads(data, object_pairs_hook=_refuse_repeats)


def _candidate(name: str) -> Callable[[bytes], object]:
    from tore_engine.io import json_compiled
    from tore_engine.io.json import scan_json

    if name == "compiled":
        json_compiled.kernels.load()
        return lambda data: scan_json(data, "bench.json", compiled=True)
    if name == "numpy":
        return lambda data: scan_json(data, "bench.json", compiled=False)
    return _stdlib


def child(name: str, path: Path, repeats: int) -> dict:
    """One candidate's times and peak memory on one file, in this (fresh) process."""
    data = path.read_bytes()
    if name == "load":
        start = time.process_time()
        _candidate("compiled")(b'{"a": [1]}')
        return {"load_s": time.process_time() - start}
    scan = _candidate(name)
    scan(b'{"a": [1, {"b": 2}]}')
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(repeats):
        start = time.process_time()
        scan(data)
        times.append(time.process_time() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"best_ms": min(times) * 1e3, "median_ms": statistics.median(times) * 1e3, "peak_mb": (peak - before) / 1024}


def run_child(name: str, path: Path, repeats: int) -> dict:
    command = [sys.executable, "-m", "benchmarks.bench_json_rules", "--child", name, str(path), str(repeats)]
    result = subprocess.run(command, capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    return json.loads(result.stdout)


def inputs() -> dict[str, Path]:
    files = {}
    for label, pages in SIZES.items():
        folder = WORK / f"json_rules_{pages}"
        if not (folder / "prediction.json").exists():
            write_layout_files(folder, pages)
        files[label] = folder / "prediction.json"
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_json_rules", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--child", nargs=3, metavar=("CANDIDATE", "FILE", "REPEATS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]), int(args.child[2]))))
        return 0
    files = inputs()
    results: dict[tuple[str, str], list[dict]] = {}
    loads = []
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for round_number in range(args.rounds):
        order = CANDIDATES if round_number % 2 == 0 else CANDIDATES[::-1]
        for label, path in files.items():
            for name in order:
                results.setdefault((label, name), []).append(run_child(name, path, args.repeats))
        loads.append(run_child("load", files["10 KB"], 1)["load_s"])
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print("| file | candidate | best CPU ms (median of rounds) | median CPU ms (median of rounds) | peak RSS growth MB (max of rounds) |")
    print("|---|---|---|---|---|")
    for (label, name), runs in results.items():
        size = files[label].stat().st_size
        best = statistics.median(run["best_ms"] for run in runs)
        median = statistics.median(run["median_ms"] for run in runs)
        peak = max(run["peak_mb"] for run in runs)
        print(f"| {label} ({size:,} B) | {name} | {best:.3f} | {median:.3f} | {peak:.1f} |")
    print(f"compiled scan's load in a fresh process (numba's import, warm cache), CPU: median {statistics.median(loads):.3f} s, best {min(loads):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
