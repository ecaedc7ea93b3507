"""Benchmark: `tore evaluate` with mAP (issue 22) against `tore evaluate --map off` (today's
evaluation), from files, process start included, in interleaved rounds of one process run.

On the synthetic DocLayNet-like pages of `benchmarks/synthetic.py` (seed 0, 1025 x 1025, 40
reference boxes a page and the model's scored predictions, 17 classes; written once into
`benchmarks/_work/data/`), `tore evaluate --workers 2` in each configuration, round after round
(A, B, C, A, B, C, ...), so that the shared machine's load falls on all alike. Wall time and the
CPU time of a run nobody watches, and the peak PSS of the process tree in a second, sampled run
(sampling slows a run: `common.timed_then_sampled`); the medians' ratio against `--map off` is the
measure (issue 40's target: at most 1.15x with mAP on). Checks that the runs' TORE outputs (every
matrix CSV) are byte for byte the same with and without mAP. `--against REV` runs the default
configuration of another commit too (a worktree, PYTHONPATH), in the same rounds, and checks that it
writes the same bytes as this checkout (saved.json, which says when, aside: `common.output_bytes`).

    .venv/bin/python -m benchmarks.bench_map_evaluate [--pages 100000] [--rounds 3] [--against REV]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

from benchmarks.common import (
    MB_BYTES,
    WORK,
    Run,
    load_average,
    machine_line,
    output_bytes,
    synthetic_files,
    timed_then_sampled,
    tore_command,
    tore_environment,
    worktree,
)

MATRIX_CSVS = [f"{prefix}{kind}.csv" for prefix in ("", "trimmed_", "reduced_") for kind in ("confusion", "recall", "precision")]


def interleaved(configurations: dict[str, list[str]], data: Path, rounds: int, workers: int = 2, trees: dict[str, Path] | None = None
                ) -> dict[str, list[Run]]:
    """Each configuration's `tore evaluate` (its extra options), round after round in turn (timed
    alone, its peak PSS from a second, sampled run: `common.timed_then_sampled`); prints each run
    as it ends. Every run writes into its own `_work` folder (the last round's stay). A
    configuration named in `trees` runs that checkout's code (PYTHONPATH) instead of this one's."""
    runs: dict[str, list[Run]] = {name: [] for name in configurations}
    trees = trees or {}
    for round_number in range(rounds):
        for name, options in configurations.items():
            out = WORK / "map_evaluate" / name
            arguments = ["evaluate", str(data / "reference.json"), str(data / "prediction.json"), "--out", str(out), "--workers", str(workers), "-q", *options]
            tree = trees.get(name)
            command = tore_command(arguments) if tree is None else [sys.executable, "-m", "tore_engine", *arguments]
            run = timed_then_sampled(command, env=tore_environment(**({} if tree is None else {"PYTHONPATH": str(tree)})), cwd=tree)
            runs[name].append(run)
            print(f"  round {round_number + 1} {name:22s} wall {run.seconds:6.2f} s, CPU {run.cpu_seconds:6.2f} s, "
                  f"peak PSS {run.peak_pss / MB_BYTES:4.0f} MB (load {load_average()})", flush=True)
    return runs


def summary_table(runs: dict[str, list[Run]], baseline: str) -> str:
    """A Markdown table: median and best wall, median CPU, and the medians' ratios to `baseline`."""
    base_wall = statistics.median(run.seconds for run in runs[baseline])
    base_cpu = statistics.median(run.cpu_seconds for run in runs[baseline])
    lines = ["| configuration | wall, median (best) | CPU, median | peak PSS (MB) | wall / baseline | CPU / baseline |", "|---|---:|---:|---:|---:|---:|"]
    for name, measured in runs.items():
        wall, cpu = statistics.median(run.seconds for run in measured), statistics.median(run.cpu_seconds for run in measured)
        best = min(run.seconds for run in measured)
        peaks = "-".join(f"{value / MB_BYTES:.0f}" for value in sorted({min(run.peak_pss for run in measured), max(run.peak_pss for run in measured)}))
        lines.append(f"| {name} | {wall:.2f} s ({best:.2f} s) | {cpu:.2f} s | {peaks} | {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |")
    return "\n".join(lines)


def same_tore_outputs(first: Path, second: Path) -> bool:
    return all((first / name).read_bytes() == (second / name).read_bytes() for name in MATRIX_CSVS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", help="another commit whose default configuration runs in the same rounds (any git revision)")
    arguments = parser.parse_args(argv)
    print(machine_line())
    data = synthetic_files(arguments.pages)
    configurations = {"--map off (today's)": ["--map", "off"], "mAP coco (default)": [], "--map docling": ["--map", "docling"]}
    with contextlib.ExitStack() as stack:
        trees = {}
        if arguments.against:
            trees[f"default at {arguments.against}"] = stack.enter_context(worktree(arguments.against))
            configurations = {**configurations, f"default at {arguments.against}": []}
        runs = interleaved(configurations, data, arguments.rounds, trees=trees)
    print(summary_table(runs, "--map off (today's)"))
    outputs = [WORK / "map_evaluate" / name for name in configurations]
    print(f"TORE's matrix CSVs identical with and without mAP: {all(same_tore_outputs(outputs[0], other) for other in outputs[1:])}")
    if arguments.against:
        this, other = (output_bytes(WORK / "map_evaluate" / name) for name in ("mAP coco (default)", f"default at {arguments.against}"))
        print(f"every output the same bytes as at {arguments.against}: {bool(this) and this == other}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
