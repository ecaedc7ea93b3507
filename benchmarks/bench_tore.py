"""Benchmark: tore_engine against docling-metrics-layout 0.17.0 (the reference TORE implementation).

On the same synthetic DocLayNet-like pages (`benchmarks/synthetic.py`: 1025 x 1025, 40 boxes a
side, 17 classes) it times, in one run:

- tore_engine in process (`evaluate_dataset`, workers 1 and 2) and `tore evaluate` as a
  subprocess (process start, file loading and report writing included);
- the peer's `ToreLayoutEvaluator` (concurrency 1 and 2), imported without torch (docs/algorithm.md#the-reference-implementation);
- dual-taxonomy mode, the peer emulated with reference ids 1..17 and prediction ids 18..34 over
  a union dict (on fewer pages: it is about 66x slower);
- the same pages at 4x the pixel count (2050 x 2050, boxes scaled);
- 10,000 pages for tore_engine's peak memory (in process, and `tore evaluate` reading JSON files).

Every measurement runs in its own subprocess, so that peak memory (getrusage maxrss of the process
and of its children, i.e. pool workers) is that measurement's alone. The matrices of both sides
are compared with |a - b| <= 1e-9 * max(1, |b|) (docs/algorithm.md#exactness-and-determinism), and tore_engine's must be
bit-identical for every number of workers.

    .venv/bin/pip install 'docling-metrics-layout==0.17.0'   # see benchmarks/RESULTS.md for torch
    .venv/bin/python -m benchmarks.bench_tore [--pages 200] [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.common import (
    SEED,
    import_peer_without_torch,
    machine_line,
    matrices_agree,
    peer_matrices,
    peer_samples,
    peer_taxonomy,
    report_matrices,
)
from benchmarks.synthetic import synthetic_layouts, write_layout_files


@dataclass
class Spec:
    """One measurement, run in a subprocess of its own."""

    label: str
    side: str  # "tore", "peer" or "cli"
    pages: int
    size: int = 1025
    mode: str = "single"  # "single" or "dual"
    workers: int = 1  # tore_engine workers, the peer's concurrency, or `tore evaluate --workers`
    repeats: int = 3
    matrices: str = ""  # .npz file the subprocess writes its matrices to
    data: str = ""  # folder of reference.json / prediction.json (side "cli")


@dataclass
class Measurement:
    spec: Spec
    seconds: list[float]
    setup_seconds: float  # generating the pages (and, for the peer, converting them)
    baseline_mb: float  # the process's peak RSS before the timed runs
    peak_mb: float  # the process's peak RSS
    children_peak_mb: float  # the largest peak RSS of any child (pool worker, `tore` process)
    cpu_seconds: float  # CPU time (user + system, process and children) per run, mean over runs:
    # unlike wall time, it hardly depends on what else the shared machine is doing
    extra: dict = field(default_factory=dict)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def pages_per_second(self) -> float:
        return self.spec.pages / self.best

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu_seconds / self.spec.pages


# --- inside a measurement subprocess ----------------------------------------------------------------


def _peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def _cpu_seconds() -> float:
    """User + system time of this process and of its finished children."""
    return sum(getattr(resource.getrusage(who), kind) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for kind in ("ru_utime", "ru_stime"))


@dataclass
class Runs:
    """The timed runs of one measurement: wall seconds of each, mean CPU seconds per run, and the
    last run's result."""

    seconds: list[float]
    cpu_seconds: float
    result: object


def _timed(run, repeats: int) -> Runs:
    seconds, result = [], None
    cpu = _cpu_seconds()
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
    return Runs(seconds, (_cpu_seconds() - cpu) / repeats, result)


def _measure_tore(spec: Spec) -> tuple[Runs, float, float, dict]:
    from tore_engine.run.runner import evaluate_dataset

    start = time.perf_counter()
    reference, prediction = synthetic_layouts(spec.pages, SEED, spec.size)
    setup = time.perf_counter() - start
    baseline = _peak_mb(resource.RUSAGE_SELF)
    runs = _timed(lambda: evaluate_dataset(reference, prediction, taxonomy=spec.mode, workers=spec.workers), spec.repeats)
    evaluation = runs.result
    matrices = evaluation.matrices
    np.savez(
        spec.matrices,
        confusion=matrices.full.confusion,
        recall=matrices.full.recall,
        precision=matrices.full.precision,
        reduced=matrices.reduced.confusion,
    )
    return runs, setup, baseline, {"classes": len(matrices.classes), "warnings": len(evaluation.warnings)}


def _measure_peer(spec: Spec) -> tuple[Runs, float, float, dict]:
    peer = import_peer_without_torch()
    start = time.perf_counter()
    reference, prediction = synthetic_layouts(spec.pages, SEED, spec.size)
    names, reference_ids, prediction_ids = peer_taxonomy(reference.taxonomy, spec.mode)
    samples = peer_samples(peer, reference, prediction, reference_ids, prediction_ids)
    setup = time.perf_counter() - start
    baseline = _peak_mb(resource.RUSAGE_SELF)
    evaluator = peer.Evaluator(names, spec.workers)
    runs = _timed(lambda: evaluator.evaluate_dataset(samples), spec.repeats)
    np.savez(spec.matrices, **peer_matrices(runs.result))
    return runs, setup, baseline, {"classes": len(names) + 1, "torch_imported": "torch" in sys.modules}


def _measure_cli(spec: Spec) -> tuple[Runs, float, float, dict]:
    """`tore evaluate` as a user runs it: a fresh process each time, timed from outside."""
    tore = Path(sys.executable).with_name("tore")
    out = Path(spec.data) / "report"
    data = Path(spec.data)
    command = [str(tore), "evaluate", str(data / "reference.json"), str(data / "prediction.json"), "--out", str(out), "--workers", str(spec.workers)]
    runs = _timed(lambda: subprocess.run(command, check=True, capture_output=True), spec.repeats)
    report = json.loads((out / "report.json").read_text())
    np.savez(spec.matrices, **report_matrices(report))
    return runs, 0.0, _peak_mb(resource.RUSAGE_SELF), {"classes": len(report["matrices"]["confusion"])}


MEASURES = {"tore": _measure_tore, "peer": _measure_peer, "cli": _measure_cli}


def measure_here(spec: Spec) -> Measurement:
    runs, setup, baseline, extra = MEASURES[spec.side](spec)
    return Measurement(
        spec, runs.seconds, setup, baseline, _peak_mb(resource.RUSAGE_SELF), _peak_mb(resource.RUSAGE_CHILDREN), runs.cpu_seconds, extra
    )


# --- the orchestrating process ---------------------------------------------------------------------


def measure(spec: Spec, folder: Path) -> Measurement:
    """Run one measurement in a fresh interpreter and read back what it reports."""
    spec.matrices = str(folder / f"{spec.label.replace(' ', '_').replace('/', '-')}.npz")
    print(f"  {spec.label} ...", end="", flush=True, file=sys.stderr)
    environment = {**os.environ, "TQDM_DISABLE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_tore", "--measure", json.dumps(asdict(spec))],
        check=True,
        capture_output=True,
        text=True,
        env=environment,
    )
    fields = json.loads(done.stdout.strip().splitlines()[-1])
    result = Measurement(Spec(**fields.pop("spec")), **fields)
    print(f" {result.best:.3f} s, {result.pages_per_second:,.1f} pages/s", file=sys.stderr)
    return result


def npz_agree(ours: Path, theirs: Path) -> tuple[bool, float]:
    """`common.matrices_agree` on two saved measurements."""
    return matrices_agree(dict(np.load(ours)), dict(np.load(theirs)))


def bit_identical(first: Path, second: Path) -> bool:
    a, b = np.load(first), np.load(second)
    return all(a[key].tobytes() == b[key].tobytes() for key in a.files)


@dataclass(frozen=True)
class Plan:
    pages: int
    dual_peer_pages: int
    memory_pages: int
    repeats_fast: int
    repeats_peer: int


def plan_for(args: argparse.Namespace) -> Plan:
    if args.quick:
        return Plan(min(args.pages, 50), 5, 1000, 2, 1)
    return Plan(args.pages, 20, 10_000, 5, 3)


def run_all(plan: Plan, folder: Path) -> tuple[dict[str, Measurement], list[str]]:
    n = plan.pages
    data, memory_data = folder / "data", folder / "memory_data"
    write_layout_files(data, n, SEED)
    write_layout_files(memory_data, plan.memory_pages, SEED)
    specs = [
        Spec("tore w1", "tore", n, workers=1, repeats=plan.repeats_fast),
        Spec("tore w2", "tore", n, workers=2, repeats=plan.repeats_fast),
        Spec("tore evaluate w1", "cli", n, workers=1, repeats=plan.repeats_fast, data=str(data)),
        Spec("tore evaluate w2", "cli", n, workers=2, repeats=plan.repeats_fast, data=str(data)),
        Spec("peer c1", "peer", n, workers=1, repeats=plan.repeats_peer),
        Spec("peer c2", "peer", n, workers=2, repeats=plan.repeats_peer),
        Spec("tore dual w1", "tore", n, mode="dual", workers=1, repeats=plan.repeats_fast),
        Spec("tore dual w2", "tore", n, mode="dual", workers=2, repeats=plan.repeats_fast),
        Spec("tore dual small", "tore", plan.dual_peer_pages, mode="dual", workers=1, repeats=plan.repeats_fast),
        Spec("peer dual c1", "peer", plan.dual_peer_pages, mode="dual", workers=1, repeats=1),
        Spec("peer dual c2", "peer", plan.dual_peer_pages, mode="dual", workers=2, repeats=1),
        Spec("tore 4x w1", "tore", n, size=2050, workers=1, repeats=plan.repeats_fast),
        Spec("tore 4x w2", "tore", n, size=2050, workers=2, repeats=plan.repeats_fast),
        Spec("tore memory w1", "tore", plan.memory_pages, workers=1, repeats=1),
        Spec("tore memory w2", "tore", plan.memory_pages, workers=2, repeats=1),
        Spec("tore evaluate memory w2", "cli", plan.memory_pages, workers=2, repeats=1, data=str(memory_data)),
    ]
    results = {spec.label: measure(spec, folder) for spec in specs}
    return results, check_matrices(results)


def check_matrices(results: dict[str, Measurement]) -> list[str]:
    """Which comparisons hold; raises nothing, so that a mismatch is reported with the numbers."""
    def path(label: str) -> Path:
        return Path(results[label].spec.matrices)

    lines = []
    for ours, theirs in [("tore w1", "peer c1"), ("tore w1", "peer c2"), ("tore evaluate w2", "peer c1"), ("tore dual small", "peer dual c1"), ("tore dual small", "peer dual c2")]:
        agree, worst = npz_agree(path(ours), path(theirs))
        lines.append(f"{ours} vs {theirs}: {'agree' if agree else 'DIFFER'} (max |a-b|/max(1,|b|) = {worst:.2e})")
    for first, second in [("tore w1", "tore w2"), ("tore dual w1", "tore dual w2"), ("tore w1", "tore evaluate w1"), ("tore 4x w1", "tore 4x w2"), ("tore memory w1", "tore memory w2"), ("tore memory w1", "tore evaluate memory w2")]:
        lines.append(f"{first} vs {second}: {'bit-identical' if bit_identical(path(first), path(second)) else 'NOT bit-identical'}")
    torch = [label for label, m in results.items() if m.extra.get("torch_imported")]
    lines.append(f"peer runs that imported torch: {', '.join(torch) or 'none'}")
    return lines


# --- report ------------------------------------------------------------------------------------------


def measurement_table(results: dict[str, Measurement]) -> str:
    rows = [
        "| measurement | pages | page size | best s (of n) | median s | pages/s | CPU ms/page | setup s | peak RSS MB: before runs / process / largest child |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, m in results.items():
        rows.append(
            f"| {label} | {m.spec.pages:,} | {m.spec.size}x{m.spec.size} | {m.best:.3f} ({len(m.seconds)}) | "
            f"{statistics.median(m.seconds):.3f} | {m.pages_per_second:,.1f} | {m.cpu_ms_per_page:.2f} | {m.setup_seconds:.2f} | "
            f"{m.baseline_mb:.0f} / {m.peak_mb:.0f} / {m.children_peak_mb:.0f} |"
        )
    return "\n".join(rows)


def targets_table(results: dict[str, Measurement]) -> str:
    def rate(*labels: str) -> float:
        return max(results[label].pages_per_second for label in labels)

    single = rate("tore w1", "tore w2") / rate("peer c1", "peer c2")
    dual = rate("tore dual w1", "tore dual w2") / rate("peer dual c1", "peer dual c2")
    def cpu(label: str) -> float:
        return results[label].cpu_ms_per_page

    pixels = min(results[f"tore 4x w{w}"].best / results[f"tore w{w}"].best for w in (1, 2))
    memory = {w: results[f"tore memory w{w}"] for w in (1, 2)}
    cli_memory = results["tore evaluate memory w2"].children_peak_mb  # the `tore` process (or a worker)
    memory_text = "; ".join(
        f"in process, workers={w}: process {m.peak_mb:.0f} MB, largest worker {m.children_peak_mb:.0f} MB" for w, m in memory.items()
    ) + f"; `tore evaluate --workers 2` from JSON files: {cli_memory:.0f} MB"
    memory_met = all(m.peak_mb < 300 for m in memory.values()) and cli_memory < 300
    cli = min(results["tore evaluate w1"].best, results["tore evaluate w2"].best)
    rows = [
        "| target | measured | met |",
        "|---|---|---|",
        f"| single taxonomy >= 30x the peer's pages/s (best configuration of each) | {single:.1f}x ({rate('tore w1', 'tore w2'):,.0f} vs {rate('peer c1', 'peer c2'):,.1f} pages/s) | {'yes' if single >= 30 else 'NO'} |",
        f"| (CPU time, one process each: peer c1 / tore w1) | {cpu('peer c1') / cpu('tore w1'):.1f}x ({cpu('tore w1'):.2f} vs {cpu('peer c1'):.2f} ms/page) | |",
        f"| dual taxonomy >= 300x the emulated peer (per-page rates) | {dual:.0f}x ({rate('tore dual w1', 'tore dual w2'):,.0f} vs {rate('peer dual c1', 'peer dual c2'):,.2f} pages/s) | {'yes' if dual >= 300 else 'NO'} |",
        f"| (CPU time: peer dual c1 / tore dual w1) | {cpu('peer dual c1') / cpu('tore dual w1'):.0f}x ({cpu('tore dual w1'):.2f} vs {cpu('peer dual c1'):.0f} ms/page) | |",
        f"| 4x the pixels per page < 1.5x the time | {pixels:.2f}x (best of workers 1 and 2) | {'yes' if pixels < 1.5 else 'NO'} |",
        f"| (CPU time: tore 4x w1 / tore w1) | {cpu('tore 4x w1') / cpu('tore w1'):.2f}x | |",
        f"| peak memory < 300 MB for {memory[1].spec.pages:,} pages | {memory_text} | {'yes' if memory_met else 'NO'} |",
        f"| `tore evaluate` on {results['tore evaluate w1'].spec.pages} pages, process start included, well under 1 s | {cli:.3f} s | {'yes' if cli < 1 else 'NO'} |",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_tore", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200, help="pages of the main comparison (default 200)")
    parser.add_argument("--quick", action="store_true", help="a fast smoke run: at most 50 pages, 5 dual peer pages, 1,000 memory pages")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement, in a subprocess
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(asdict(measure_here(Spec(**json.loads(args.measure))))))
        return 0
    plan = plan_for(args)
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"{started:%Y-%m-%d %H:%M} UTC, {machine_line()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_tore_") as folder:
        results, checks = run_all(plan, Path(folder))
    print(f"finished: {machine_line()}\n")
    print(measurement_table(results) + "\n")
    print("\n".join(f"- {line}" for line in checks) + "\n")
    print(targets_table(results))
    return 0 if all("DIFFER" not in line and "NOT" not in line for line in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
