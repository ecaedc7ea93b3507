"""Benchmark: TIDE's box outcomes and error types (issue 38) against what they must not slow down
and against tidecv itself, on the synthetic DocLayNet-like pages of `benchmarks/synthetic.py`.

1. `tore evaluate --map coco --workers 2` of this checkout (box outcomes and `errors` included)
   against the same command of a checkout without them (`--baseline`, e.g. `git worktree add
   /tmp/base <commit before>`), from files, process start included, in interleaved rounds (target:
   at most 1.2x at 100,000 pages); `--boxes` adds a run writing boxes.csv.
2. On the first `--tidecv-pages` pages: tidecv 1.0.1 in its own environment (its data made, its
   evaluation, its main and special errors: `tests/vectors/tide/tidecv_reference.py --timed`)
   against the product's same work on the same boxes in memory (`match_outcomes` and `summarise`,
   the kernel loaded first), and whether the figures agree within 1e-9 (target: at least 20x).

    .venv/bin/python -m benchmarks.bench_box_outcomes --baseline /tmp/base [--pages 100000] [--rounds 3]
        [--tidecv /tmp/tidecv-venv/bin/python] [--tidecv-pages 1000] [--boxes]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.bench_map_evaluate import summary_table
from benchmarks.common import WORK, Run, load_average, machine_line, run_command, synthetic_files, tore_environment

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_SCRIPT = ROOT / "tests" / "vectors" / "tide" / "tidecv_reference.py"


def evaluate_command(data: Path, out: Path, *options: str) -> list[str]:
    """`tore evaluate` of the checkout the command runs in (its folder is the working directory)."""
    return [sys.executable, "-m", "tore_engine", "evaluate", str(data / "reference.json"), str(data / "prediction.json"),
            "--out", str(out), "--workers", "2", "-q", "--map", "coco", *options]


def interleaved(data: Path, baseline: Path, rounds: int, boxes: bool) -> dict[str, list[Run]]:
    configurations = {"before (no box outcomes)": (baseline, ()), "with box outcomes": (ROOT, ())}
    if boxes:
        configurations["with --boxes"] = (ROOT, ("--boxes",))
    runs: dict[str, list[Run]] = {name: [] for name in configurations}
    for round_number in range(rounds):
        for name, (checkout, options) in configurations.items():
            out = WORK / "box_outcomes" / name.split()[0]
            run = run_command(evaluate_command(data, out, *options), env=tore_environment(), cwd=checkout)
            runs[name].append(run)
            print(f"  round {round_number + 1} {name:26s} wall {run.seconds:6.2f} s, CPU {run.cpu_seconds:6.2f} s (load {load_average()})", flush=True)
    return runs


def case_of_files(data: Path, pages: int) -> tuple[dict, object, object]:
    """The first `pages` pages' boxes as the evaluation hands them to TIDE: the case (tidecv's
    input) and the two sides' columns (the product's)."""
    from tests.vectors.tide.cases import case_of_source, case_sides

    sliced = WORK / "box_outcomes" / f"first_{pages}"
    sliced.mkdir(parents=True, exist_ok=True)
    for side in ("reference", "prediction"):
        layout = json.loads((data / f"{side}.json").read_text())
        layout["pages"] = layout["pages"][:pages]
        (sliced / f"{side}.json").write_text(json.dumps(layout))
    case = case_of_source({"reference": str(sliced / "reference.json"), "prediction": str(sliced / "prediction.json"), "format": "tore"})
    return case, *case_sides(case)


def against_tidecv(data: Path, pages: int, tidecv: str) -> str:
    from tore_engine.metrics import box_kernel
    from tore_engine.metrics.box_outcomes import match_outcomes, summarise

    case, reference, prediction = case_of_files(data, pages)
    box_kernel.outcomes.load()
    ours = []
    for _ in range(5):
        start = time.perf_counter()
        summary = summarise(match_outcomes(reference, prediction), int(max(reference.classes.max(), prediction.classes.max())) + 1)
        ours.append(time.perf_counter() - start)
    run = subprocess.run([tidecv, str(REFERENCE_SCRIPT), "--timed"], input=json.dumps([case]), capture_output=True, text=True, check=True)
    theirs = json.loads(run.stdout)[0]
    agree = abs(summary.ap50 - theirs["ap"] / 100) <= 1e-9 and all(
        abs(summary.dap[name] - value / 100) <= 1e-9 for name, value in theirs["main"].items()) and all(
        abs(summary.dap_special[name] - value / 100) <= 1e-9 for name, value in theirs["special"].items())
    median = statistics.median(ours)
    boxes = len(reference.classes) + len(prediction.classes)
    return (f"| {pages:,} pages, {boxes:,} boxes | tidecv 1.0.1: {theirs['seconds']:.2f} s | ours (median of 5): {median * 1000:.1f} ms "
            f"| **{theirs['seconds'] / median:.0f}x** | figures agree within 1e-9: {'yes' if agree else 'NO'} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a checkout of the project without box outcomes")
    parser.add_argument("--boxes", action="store_true", help="also time runs writing boxes.csv")
    parser.add_argument("--tidecv", default="/tmp/tidecv-venv/bin/python", help="the Python that has tidecv 1.0.1 ('' to skip)")
    parser.add_argument("--tidecv-pages", type=int, default=1000)
    args = parser.parse_args(argv)
    print(machine_line())
    if args.tidecv:
        print(against_tidecv(synthetic_files(args.tidecv_pages), args.tidecv_pages, args.tidecv), flush=True)
    if args.baseline:
        runs = interleaved(synthetic_files(args.pages), args.baseline, args.rounds, args.boxes)
        print(summary_table(runs, "before (no box outcomes)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
