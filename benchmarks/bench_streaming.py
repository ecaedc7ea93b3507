"""Peak memory and throughput of `tore evaluate` on very large layout files.

Writes `--pages` synthetic pages (benchmarks/synthetic.py) as two native layout JSON files, then
runs `tore evaluate` on them in a child process while sampling the memory of its whole process
tree (the driver and its pool workers, as proportional set size, so that pages the forked workers
share with the driver count once). Large files are read page by page
(tore_engine/jsonstream.py); `--compare-pages` also runs the same command on a smaller set twice,
once streamed and once with the whole file parsed in memory, to compare their throughput.

    .venv/bin/python -m benchmarks.bench_streaming --pages 100000 --compare-pages 20000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.synthetic import write_layout_files
from tore_engine.jsonstream import LARGE_FILE_BYTES

# Run the CLI in a child with a chosen threshold for reading files lazily.
CHILD = """
import sys
import tore_engine.jsonstream as jsonstream
from tore_engine.cli import main
jsonstream.LARGE_FILE_BYTES = int(sys.argv[1])
sys.exit(main(sys.argv[2:]))
"""


def _tree_pss(pid: int) -> int:
    """Proportional set size of `pid` and all its descendants: pages shared between the driver and
    its forked workers are counted once, split between them (a plain RSS sum counts them again in
    every worker)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError):
            continue
    return total


def run_measured(command: list[str]) -> tuple[float, int]:
    """Wall time and the peak memory (PSS) of the process tree, sampled every 50 ms."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0

    def sample() -> None:
        nonlocal peak
        while process.poll() is None:
            peak = max(peak, _tree_pss(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, stderr = process.communicate()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"tore evaluate failed: {stderr}")
    return time.perf_counter() - start, peak


def evaluate(reference: Path, prediction: Path, out: Path, large_file_bytes: int, workers: int) -> tuple[float, int]:
    return run_measured(
        [sys.executable, "-c", CHILD, str(large_file_bytes), "evaluate", str(reference), str(prediction), "--out", str(out), "--workers", str(workers)]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--compare-pages", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        if args.compare_pages:
            reference, prediction = write_layout_files(work / "compare", args.compare_pages)
            size = reference.stat().st_size + prediction.stat().st_size
            streamed = evaluate(reference, prediction, work / "o1", 0, args.workers)
            in_memory = evaluate(reference, prediction, work / "o2", 2**62, args.workers)
            same = (work / "o1" / "report.json").read_bytes() == (work / "o2" / "report.json").read_bytes()
            print(f"{args.compare_pages:,} pages ({size / 2**20:.0f} MB of JSON), {args.workers} workers, identical reports: {same}")
            for name, (seconds, peak) in (("streamed", streamed), ("in memory", in_memory)):
                print(f"  {name:>9}: {seconds:6.1f} s, {args.compare_pages / seconds:6.0f} pages/s, peak {peak / 2**20:6.0f} MB")
            print(f"  streamed throughput / in-memory throughput: {in_memory[0] / streamed[0]:.2f}")
        started = time.perf_counter()
        reference, prediction = write_layout_files(work / "large", args.pages)
        size = reference.stat().st_size + prediction.stat().st_size
        print(f"{args.pages:,} pages written ({size / 2**20:.0f} MB of JSON) in {time.perf_counter() - started:.0f} s")
        seconds, peak = evaluate(reference, prediction, work / "o3", LARGE_FILE_BYTES, args.workers)
        print(f"  tore evaluate, streamed: {seconds:.1f} s, {args.pages / seconds:.0f} pages/s, peak {peak / 2**20:.0f} MB (PSS of the whole process tree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
