"""Benchmark: `tore evaluate` with mAP (issue 22) against `tore evaluate --map off` (today's
evaluation), from files, process start included, in interleaved rounds of one process run.

On the synthetic DocLayNet-like pages of `benchmarks/synthetic.py` (seed 0, 1025 x 1025, 40
reference boxes a page and the model's scored predictions, 17 classes; written once into
`benchmarks/_work/data/`), `tore evaluate --workers 2` in each configuration, round after round
(A, B, C, A, B, C, ...), so that the shared machine's load falls on all alike. Wall time and the
CPU time of the process tree; the medians' ratio against `--map off` is the measure (target: at
most 1.5x with mAP on). Checks that the runs' TORE outputs (every matrix CSV) are byte for byte
the same with and without mAP, and that repeated runs write the same report.json.

    .venv/bin/python -m benchmarks.bench_map_evaluate [--pages 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from benchmarks.common import WORK, Run, load_average, machine_line, run_command, synthetic_files, tore_command, tore_environment

MATRIX_CSVS = [f"{prefix}{kind}.csv" for prefix in ("", "trimmed_", "reduced_") for kind in ("confusion", "recall", "precision")]


def interleaved(configurations: dict[str, list[str]], data: Path, rounds: int, workers: int = 2) -> dict[str, list[Run]]:
    """Each configuration's `tore evaluate` (its extra options), round after round in turn; prints
    each run as it ends. Every run writes into its own `_work` folder (the last round's stay)."""
    runs: dict[str, list[Run]] = {name: [] for name in configurations}
    for round_number in range(rounds):
        for name, options in configurations.items():
            out = WORK / "map_evaluate" / name
            command = tore_command(["evaluate", str(data / "reference.json"), str(data / "prediction.json"), "--out", str(out),
                                    "--workers", str(workers), "-q", *options])
            run = run_command(command, env=tore_environment())
            runs[name].append(run)
            print(f"  round {round_number + 1} {name:22s} wall {run.seconds:6.2f} s, CPU {run.cpu_seconds:6.2f} s (load {load_average()})", flush=True)
    return runs


def summary_table(runs: dict[str, list[Run]], baseline: str) -> str:
    """A Markdown table: median and best wall, median CPU, and the medians' ratios to `baseline`."""
    base_wall = statistics.median(run.seconds for run in runs[baseline])
    base_cpu = statistics.median(run.cpu_seconds for run in runs[baseline])
    lines = ["| configuration | wall, median (best) | CPU, median | wall / baseline | CPU / baseline |", "|---|---:|---:|---:|---:|"]
    for name, measured in runs.items():
        wall, cpu = statistics.median(run.seconds for run in measured), statistics.median(run.cpu_seconds for run in measured)
        best = min(run.seconds for run in measured)
        lines.append(f"| {name} | {wall:.2f} s ({best:.2f} s) | {cpu:.2f} s | {wall / base_wall:.2f}x | {cpu / base_cpu:.2f}x |")
    return "\n".join(lines)


def same_tore_outputs(first: Path, second: Path) -> bool:
    return all((first / name).read_bytes() == (second / name).read_bytes() for name in MATRIX_CSVS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    arguments = parser.parse_args(argv)
    print(machine_line())
    data = synthetic_files(arguments.pages)
    configurations = {"--map off (today's)": ["--map", "off"], "mAP coco (default)": [], "--map docling": ["--map", "docling"]}
    runs = interleaved(configurations, data, arguments.rounds)
    print(summary_table(runs, "--map off (today's)"))
    outputs = [WORK / "map_evaluate" / name for name in configurations]
    print(f"TORE's matrix CSVs identical with and without mAP: {all(same_tore_outputs(outputs[0], other) for other in outputs[1:])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
