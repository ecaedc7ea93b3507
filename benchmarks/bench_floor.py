"""The floor under `tore evaluate` on this machine (issue 40): what any run of the same work pays,
measured in the same run as tore's own times, so that each of them reads against it.

- **reading**: the two files' bytes read into memory (the page cache warm, as tore's runs find it);
- **kernel**: TORE's page kernel alone on the pages' prepared tasks (`bench_kernel.engine_times`'s
  median CPU µs a page over `--kernel-pages` synthetic pages), spread over 2 cores;
- **floor**: the two added, for each size of `--pages`;

then `tore evaluate --workers 2` on the same files (`benchmarks/synthetic.py`, seed 0), with
`--map off` and with the default mAP, each `--repeats` times (medians), and each one's multiple of
the floor.

    python -m benchmarks.bench_floor [--pages 1000 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from benchmarks.bench_kernel import engine_times
from benchmarks.common import WORK, load_average, machine_line, run_command, synthetic_files, tore_command

CORES = 2


def reading_seconds(folder: Path, repeats: int) -> float:
    """The median time to read both files' bytes into memory."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for side in ("reference", "prediction"):
            (folder / f"{side}.json").read_bytes()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_floor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each tore command (default 3)")
    parser.add_argument("--kernel-pages", type=int, default=1_024, help="pages the kernel is timed on (default 1024)")
    args = parser.parse_args(argv)
    print(machine_line())
    kernel_us = statistics.median(engine_times(args.kernel_pages, 5, "single")["engine"]["kernel"])
    print(f"page kernel alone: {kernel_us:.1f} CPU µs a page (median of 5 runs over {args.kernel_pages:,} pages), {CORES} cores")
    print("| pages | reading | kernel | floor | `--map off` | x floor | default mAP | x floor |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pages in args.pages:
        folder = synthetic_files(pages)
        reading = reading_seconds(folder, args.repeats)
        kernel = pages * kernel_us / 1e6 / CORES
        floor = reading + kernel
        walls = {}
        for name, options in (("off", ["--map", "off"]), ("map", [])):
            command = tore_command(["evaluate", str(folder / "reference.json"), str(folder / "prediction.json"), "--out",
                                    str(WORK / "out" / f"floor_{pages}_{name}"), "--workers", str(CORES), "-q", *options])
            walls[name] = statistics.median(run_command(command).seconds for _ in range(args.repeats))
        print(f"| {pages:,} | {reading:.3f} s | {kernel:.3f} s | {floor:.3f} s | {walls['off']:.2f} s | {walls['off'] / floor:.1f}x "
              f"| {walls['map']:.2f} s | {walls['map'] / floor:.1f}x |", flush=True)
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
