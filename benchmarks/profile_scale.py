"""Where the time and the memory of a large `tore evaluate` go, phase by phase.

Runs `tore evaluate` on the synthetic pages of `benchmarks/bench_scale.py` (written once into
benchmarks/_work/data) three times:

1. alone, sampling the PSS of the driver and of the whole process tree every 50 ms: the memory
   timeline (one line a second) and the peaks;
2. under py-spy (a sampling profiler: unlike cProfile it does not inflate Python-heavy code), all
   processes, active samples only: CPU seconds per phase, the driver's and the workers' apart;
3. under py-spy with `--idle`: the driver's main thread in wall-clock seconds per phase (reading,
   waiting for the workers, assembling, writing the report).

py-spy is not a dependency of the project: install it anywhere (`python3 -m venv /tmp/tools &&
/tmp/tools/bin/pip install py-spy`) and pass `--py-spy /tmp/tools/bin/py-spy`.

    .venv/bin/python -m benchmarks.profile_scale [--pages 100000] [--format json] [--workers 2] [--py-spy PATH]
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_scale import evaluate_arguments
from benchmarks.common import (
    FORMATS,
    MB_BYTES,
    REPOSITORY,
    WORK,
    load_average,
    run_command,
    synthetic_files,
    tore_command,
    tore_environment,
)

RATE = 200  # py-spy samples a second

# (phase, markers): the first phase with a marker among a stack's function names wins.
WORKER_PHASES = [
    ("worker: read + decode its pages: msgspec decode", ("decode_json",)),
    ("worker: read + decode its pages: columns builder", ("add_pages",)),
    ("worker: read + decode its pages: pread", ("FileRanges._texts",)),
    ("worker: read + decode its pages: Page objects, other", ("FileRanges.columns", "PageBatch.pairs", "PageColumns.__getitem__")),
    ("worker: prepare pages, batch-wide (preparation.prepare_columns)", ("prepare_columns",)),
    ("worker: prepare pages: pixel extents", ("PixelExtents.from_boxes",)),
    ("worker: prepare pages: box warnings", ("_box_warnings",)),
    ("worker: prepare pages: class indices, other", ("prepare_page",)),
    ("worker: NumPy path (pages before the kernel is loaded)", ("numpy_cells",)),
    ("worker: loading the kernel (numba)", ("Kernels.load", "Kernels._jitted", "_load", "ready")),
    ("worker: kernel: its input arrays", ("_inputs",)),
    ("worker: kernel: compiled call and finishing", ("_run",)),
    ("worker: rest of evaluate_batch (splitting by page)", ("evaluate_batch",)),
    ("worker: splitting the results into PageOutcome objects", ("_outcome",)),
    ("worker: pickling results back", ("_sendback_result",)),
    ("worker: receiving its tasks", ("Queue.get",)),
    ("worker: watchdog thread", ("_poll_parent", "_watch_parent")),
    ("worker: evaluate_task's own lines (native code py-spy shows no frame for)", ("evaluate_task",)),
]
DRIVER_PHASES = [
    ("driver: loading numba and the JSON kernel", ("Kernels.load", "Kernels._jitted", "Kernels.is_cached", "prepared", "ready")),
    ("driver: read: JSON structure scan (compiled)", ("scan_json",)),
    ("driver: read: msgspec decode (the index, or whole pages below 64 MB)", ("decode_json",)),
    ("driver: read: index builder, or columns builder below 64 MB", ("IndexBuilder.add", "ColumnsBuilder.add", "add_pages")),
    ("driver: read: reading the file", ("read_bytes",)),
    ("driver: read: other (item spans, checks, pairing)", ("load_pair",)),
    ("driver: pool: receiving results (unpickling)", ("_ExecutorManagerThread",)),
    ("driver: pool: waiting for the workers", ("wait",)),
    ("driver: pool: making and sending tasks", ("_run_batches", "_batches", "Queue._feed")),
    ("driver: assembling the evaluation", ("_assemble", "evaluate_dataset")),
    ("driver: report.json (warnings as JSON)", ("to_json",)),
    ("driver: report.json (encoding)", ("report_text", "build_report")),
    ("driver: pages.csv", ("_write_pages_csv",)),
    ("driver: other CSVs, staging", ("write_outputs", "StagedOutput.save")),
    ("driver: imports", ("_find_and_load",)),
]


def _classify(stack: str) -> tuple[str, str]:
    """(process kind, phase) of one py-spy raw stack."""
    processes = len(re.findall(r'(?:^|;)process \d+:', stack))
    names = [re.sub(r" \(.*\)$", "", frame) for frame in stack.split(";") if not frame.startswith("process ")]
    kind, phases = ("worker", WORKER_PHASES) if processes > 1 else ("driver", DRIVER_PHASES)
    for phase, markers in phases:
        if any(name == m or name.endswith("." + m) or name.startswith(m + ".") for name in names for m in markers):
            return kind, phase
    return kind, f"{kind}: other (interpreter start, forking)" if len(names) <= 1 else f"{kind}: other"


def py_spy(spy: str, command: list[str], idle: bool, unclassified: collections.Counter | None = None) -> collections.Counter:
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "raw.txt"
        options = ["record", "--subprocesses", "-r", str(RATE), "-f", "raw", "-o", str(raw)] + (["--idle"] if idle else [])
        subprocess.run([spy, *options, "--", *command], check=True, capture_output=True, env=tore_environment(), cwd=REPOSITORY)
        counts: collections.Counter = collections.Counter()
        for line in raw.read_text().splitlines():
            stack, _, samples = line.rpartition(" ")
            if idle and (stack.count("process ") > 1 or not re.search(r';<module> \(', stack)):
                continue  # --idle: the driver's main thread only
            kind, phase = _classify(stack)
            counts[kind, phase] += int(samples)
            if unclassified is not None and phase.endswith(": other"):
                unclassified[re.sub(r" \(([^()]*/)?", " (", stack.split('";', 1)[-1])[-400:]] += int(samples)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--format", choices=FORMATS, default="json")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="the py-spy executable (default: py-spy on PATH)")
    parser.add_argument("--show-other", type=int, default=0, metavar="N", help="also print the N largest unclassified stacks")
    args = parser.parse_args(argv)
    data = synthetic_files(args.pages, (args.format,) if args.format != "json" else ("json",))
    out = WORK / "out" / "profile"
    command = tore_command(evaluate_arguments(data, args.format, out, args.workers))
    print(f"{args.pages:,} pages, {args.format}, --workers {args.workers}; load average {load_average()}")

    timeline: list = []
    run = run_command(command, env=tore_environment(), sample_every=0.05, cwd=REPOSITORY, timeline=timeline)
    print(f"\nalone: {run.seconds:.1f} s wall, {run.cpu_seconds:.1f} s CPU, peak PSS {run.peak_pss / MB_BYTES:.0f} MB (tree); "
          f"driver peak {max(own for _, own, _ in timeline) / MB_BYTES:.0f} MB; load average {load_average()}")
    print("memory timeline (s: driver PSS / tree PSS, MB):")
    shown, line = -1, []
    for seconds, own, tree in timeline:
        if int(seconds) != shown:
            shown = int(seconds)
            line.append(f"{seconds:.0f}: {own / MB_BYTES:.0f}/{tree / MB_BYTES:.0f}")
    print("  " + ", ".join(line))

    if not args.py_spy:
        print("\nno py-spy: pass --py-spy PATH for the CPU and wall profiles")
        return 0
    unclassified: collections.Counter = collections.Counter()
    cpu = py_spy(args.py_spy, command, idle=False, unclassified=unclassified)
    total = sum(cpu.values())
    print(f"\nCPU by phase (py-spy, active samples of every process at {RATE}/s; {total / RATE:.1f} s sampled):")
    print("| phase | CPU s | share |\n|---|---:|---:|")
    for kind in ("driver", "worker"):
        for (k, phase), samples in sorted(cpu.items(), key=lambda item: -item[1]):
            if k == kind:
                print(f"| {phase} | {samples / RATE:.2f} | {100 * samples / total:.1f} % |")
    if args.show_other:
        print("\nlargest unclassified stacks (samples, stack tail):")
        for stack, samples in unclassified.most_common(args.show_other):
            print(f"  {samples} {stack}")
    wall = py_spy(args.py_spy, command, idle=True)
    total = sum(wall.values())
    print(f"\nthe driver's main thread in wall-clock time (py-spy --idle; {total / RATE:.1f} s):")
    print("| phase | wall s | share |\n|---|---:|---:|")
    for (_, phase), samples in sorted(wall.items(), key=lambda item: -item[1]):
        print(f"| {phase} | {samples / RATE:.2f} | {100 * samples / total:.1f} % |")
    print(f"\nload average at the end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
