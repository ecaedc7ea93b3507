"""Peak memory and throughput of `tore evaluate` on very large layout files.

Writes `--pages` synthetic pages (benchmarks/synthetic.py) as two native layout JSON files, then
runs `tore evaluate` on them in a child process while sampling the memory of its whole process
tree (the driver and its pool workers, as proportional set size, so that pages the forked workers
share with the driver count once). Large files are read as an index whose workers read their own
pages (tore_engine/formats/lazy.py); `--compare-pages` also runs the same command on a smaller set
twice, once read as an index and once with the whole file parsed in the driver, to compare their
throughput. `benchmarks/bench_scale.py` measures the same at issue 13's scale, against the peer.

    .venv/bin/python -m benchmarks.bench_streaming --pages 100000 --compare-pages 20000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ALL_LAZY, WHOLE_FILE, timed_then_sampled, tore_command
from benchmarks.synthetic import write_layout_files


def evaluate(reference: Path, prediction: Path, out: Path, lazy_bytes: int | None, workers: int) -> tuple[float, int]:
    """Wall time of `tore evaluate`, and the peak PSS of its process tree in a second run, sampled
    every 50 ms (`timed_then_sampled`); `lazy_bytes` moves the size from which files are read as an
    index (None: the default)."""
    run = timed_then_sampled(tore_command(["evaluate", str(reference), str(prediction), "--out", str(out), "--workers", str(workers)], lazy_bytes))
    return run.seconds, run.peak_pss


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
            streamed = evaluate(reference, prediction, work / "o1", ALL_LAZY, args.workers)
            in_memory = evaluate(reference, prediction, work / "o2", WHOLE_FILE, args.workers)
            same = (work / "o1" / "report.json").read_bytes() == (work / "o2" / "report.json").read_bytes()
            print(f"{args.compare_pages:,} pages ({size / 2**20:.0f} MB of JSON), {args.workers} workers, identical reports: {same}")
            for name, (seconds, peak) in (("streamed", streamed), ("in memory", in_memory)):
                print(f"  {name:>9}: {seconds:6.1f} s, {args.compare_pages / seconds:6.0f} pages/s, peak {peak / 2**20:6.0f} MB")
            print(f"  streamed throughput / in-memory throughput: {in_memory[0] / streamed[0]:.2f}")
        started = time.perf_counter()
        reference, prediction = write_layout_files(work / "large", args.pages)
        size = reference.stat().st_size + prediction.stat().st_size
        print(f"{args.pages:,} pages written ({size / 2**20:.0f} MB of JSON) in {time.perf_counter() - started:.0f} s")
        seconds, peak = evaluate(reference, prediction, work / "o3", None, args.workers)
        print(f"  tore evaluate, streamed: {seconds:.1f} s, {args.pages / seconds:.0f} pages/s, peak {peak / 2**20:.0f} MB (PSS of the whole process tree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
