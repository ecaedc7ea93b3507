"""Benchmark at the field's scale (issue 13 item 4): `tore evaluate` against docling-metrics-layout
0.17.0 in the same run, from files, process start included.

On the synthetic DocLayNet-like pages of `benchmarks/synthetic.py` (seed 0, 1025 x 1025, 40
reference boxes a page, 17 classes), written once into `benchmarks/_work/data/` (git-ignored) in
native JSON, and from it JSON Lines and Parquet with the formats' own `write` functions:

- **marginal**: the marginal cost of a page, `tore evaluate --workers 2` against the peer's whole
  process (import without torch, `json.load` of both files, its samples, `ToreLayoutEvaluator`
  at concurrency 2), in A/B-alternating rounds; the peer from 200 to 1,000 pages, tore also from
  1,000 to 10,000 pages so that its difference stands above the noise;
- **scale**: 100,000 pages (`--scale-pages`) in native JSON, JSON Lines and Parquet at workers 1 and
  2, wall time and the peak PSS of the whole process tree (sampled every 50 ms), against the peer's
  per-page wall time at 1,000 pages in the same run; then native JSON read whole and on the NumPy
  path once each, for memory and for the identity checks;
- **engine**: `benchmarks/bench_kernel.py --json` (engine CPU µs a page, kernel and NumPy path);
- **jit**: cold compile of both kernels (page kernel and JSON structure scan) in an empty
  NUMBA_CACHE_DIR, warm load, and a 200-page `tore evaluate --workers 2` with a warm cache
  (default and `TORE_PAGE_KERNEL=always`) against the NumPy path (`TORE_PAGE_KERNEL=numpy`),
  alternating;
- **app**: a fresh `tore app` server on the embedded demo, then headless Chromium (Playwright,
  /usr/bin/chromium) until the matrices are drawn;
- **identity**: report.json and every CSV byte for byte equal between the kernel and the NumPy
  path, workers 1 and 2, the lazy and the whole-file readers (and native JSON, JSON Lines and
  Parquet), on every public vector (tests/vectors) and benchmark input; the timed runs' outputs
  are checked too, and tore's matrices against the peer's (the tolerance of docs/algorithm.md#exactness-and-determinism).

Prints each measure with its ratio and target, and writes every number to
`benchmarks/_work/scale_results.json`. Exit code 1 when an identity or agreement check fails.

    .venv/bin/pip install "torch==2.13.0" "docling-metrics-layout==0.17.0"   # the local CPU wheel; never committed
    .venv/bin/python -m benchmarks.bench_scale                 # everything (10-15 min on 2 quiet cores)
    .venv/bin/python -m benchmarks.bench_scale --only marginal,jit --rounds 3
    .venv/bin/python -m benchmarks.bench_scale --quick         # a smoke run: small sizes, one round
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import (
    ALL_LAZY,
    FORMATS,
    MB_BYTES,
    REPOSITORY,
    WHOLE_FILE,
    WORK,
    Run,
    best_median,
    free_port,
    import_peer_without_torch,
    load_average,
    machine_line,
    matrices_agree,
    peer_matrices,
    peer_samples_from_json,
    report_matrices,
    run_command,
    same_outputs,
    synthetic_files,
    timed_then_sampled,
    tore_command,
    tore_environment,
    wait_healthy,
)

SECTIONS = ("marginal", "scale", "engine", "jit", "app", "identity")
VECTORS = REPOSITORY / "tests" / "vectors"  # the public vectors, vendored
MB = MB_BYTES


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- the peer as one process ------------------------------------------------------------------------


def peer_process(data: Path, concurrency: int, matrices: Path) -> dict:
    """Inside the peer's process: what a user of the peer would run on these files, phase by phase."""
    start = time.perf_counter()
    peer = import_peer_without_torch()
    imported = time.perf_counter()
    reference = json.loads((data / "reference.json").read_text(encoding="utf-8"))
    prediction = json.loads((data / "prediction.json").read_text(encoding="utf-8"))
    names, samples = peer_samples_from_json(peer, reference, prediction)
    built = time.perf_counter()
    result = peer.Evaluator(names, concurrency).evaluate_dataset(samples)
    evaluated = time.perf_counter()
    np.savez(matrices, **peer_matrices(result))
    return {"import": imported - start, "load_and_samples": built - imported, "evaluate": evaluated - built,
            "torch_imported": "torch" in sys.modules, "pages": len(samples)}


def run_peer(data: Path, concurrency: int, matrices: Path, sample_every: float | None = None) -> Run:
    command = [sys.executable, "-m", "benchmarks.bench_scale", "--peer-run", str(data), str(concurrency), str(matrices)]
    return run_command(command, env={**os.environ, "TQDM_DISABLE": "1"}, sample_every=sample_every, cwd=REPOSITORY)


# --- tore evaluate ------------------------------------------------------------------------------------


def evaluate_arguments(data: Path, ext: str, out: Path, workers: int, *extra: str) -> list[str]:
    return ["evaluate", str(data / f"reference.{ext}"), str(data / f"prediction.{ext}"), "--out", str(out), "--workers", str(workers), "-q", *extra]


def run_tore(data: Path, out: Path, workers: int, *, ext: str = "json", page_kernel: str | None = None, lazy_bytes: int | None = None,
             memory: bool = False, extra: tuple[str, ...] = ()) -> Run:
    """One `tore evaluate`; with `memory`, its peak PSS from a second, sampled run (`timed_then_sampled`)."""
    if out.exists():
        shutil.rmtree(out)
    command = tore_command(evaluate_arguments(data, ext, out, workers, *extra), lazy_bytes)
    if memory:
        return timed_then_sampled(command, env=tore_environment(page_kernel), cwd=REPOSITORY)
    return run_command(command, env=tore_environment(page_kernel), cwd=REPOSITORY)


def tore_report(out: Path) -> dict[str, np.ndarray]:
    return report_matrices(json.loads((out / "report.json").read_text(encoding="utf-8")))


class Checks:
    """Identity and agreement checks: each a line, failures counted."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.failed = 0

    def same(self, what: str, folders: list[Path]) -> None:
        ok = all(same_outputs(folders[0], other) for other in folders[1:])
        self.failed += not ok
        self.lines.append(f"{what}: {'identical' if ok else 'DIFFER'} ({len(folders)} outputs, every file but saved.json)")

    def agree(self, what: str, ours: dict, theirs: dict) -> None:
        ok, worst = matrices_agree(ours, theirs)
        self.failed += not ok
        self.lines.append(f"{what}: {'agree' if ok else 'DIFFER'} (max |a-b|/max(1,|b|) = {worst:.1e})")


# --- measures ------------------------------------------------------------------------------------------


def measure_marginal(plan: argparse.Namespace, checks: Checks, results: dict) -> None:
    """A/B-alternating rounds: tore and the peer on the same files, sizes ascending, who goes first
    swapping every round."""
    peer_sizes, tore_sizes = plan.peer_sizes, plan.tore_sizes
    data = {n: synthetic_files(n) for n in sorted(set(peer_sizes) | set(tore_sizes))}
    out = WORK / "out" / "marginal"
    times: dict[str, dict[int, list[Run]]] = {"tore": {n: [] for n in tore_sizes}, "peer": {n: [] for n in peer_sizes}}
    inside: list[dict] = []
    for round_ in range(plan.rounds):
        for n in sorted(data):
            sides = ["tore", "peer"] if round_ % 2 == 0 else ["peer", "tore"]
            for side in sides:
                if n not in times[side]:
                    continue
                if side == "tore":
                    run = run_tore(data[n], out / f"tore_{n}", 2)
                else:
                    run = run_peer(data[n], 2, out / f"peer_{n}.npz")
                    inside.append({"pages": n, **json.loads(run.stdout.strip().splitlines()[-1])})
                times[side][n].append(run)
                _log(f"  marginal round {round_ + 1}: {side} {n:,} pages {run.seconds:.2f} s (load {load_average()})")
    for n in peer_sizes:
        if n in tore_sizes:
            checks.agree(f"tore evaluate --workers 2 vs peer (concurrency 2), {n:,} pages", tore_report(out / f"tore_{n}"), dict(np.load(out / f"peer_{n}.npz")))
    if any(entry["torch_imported"] for entry in inside):
        checks.failed += 1
        checks.lines.append("the peer imported torch: FAIL (it must run without, docs/algorithm.md#the-reference-implementation)")
    results["marginal"] = {
        side: {str(n): {"wall": [r.seconds for r in runs], "cpu": [r.cpu_seconds for r in runs]} for n, runs in sizes.items()}
        for side, sizes in times.items()
    }
    results["marginal"]["peer_inside"] = inside


def marginal_per_page(results: dict, side: str, low: int, high: int, key: str = "wall") -> tuple[float, float]:
    """(from medians, from bests) seconds a page between `low` and `high` pages."""
    runs = results["marginal"][side]
    a, b = runs[str(low)][key], runs[str(high)][key]
    return (statistics.median(b) - statistics.median(a)) / (high - low), (min(b) - min(a)) / (high - low)


def measure_scale(plan: argparse.Namespace, checks: Checks, results: dict) -> None:
    n = plan.scale_pages
    data = synthetic_files(n, FORMATS)
    sizes = {ext: sum((data / f"{side}.{ext}").stat().st_size for side in ("reference", "prediction")) for ext in FORMATS}
    out = WORK / "out" / "scale"
    configs = [(ext, workers) for ext in FORMATS for workers in (1, 2)]
    runs: dict[str, list[Run]] = {f"{ext} w{w}": [] for ext, w in configs}
    for round_ in range(plan.scale_rounds):
        for ext, workers in configs if round_ % 2 == 0 else configs[::-1]:
            run = run_tore(data, out / f"{ext}_w{workers}", workers, ext=ext, memory=True)
            runs[f"{ext} w{workers}"].append(run)
            _log(f"  scale round {round_ + 1}: {ext} w{workers} {n:,} pages {run.seconds:.1f} s, {run.peak_pss / MB:.0f} MB (load {load_average()})")
    extra = {}
    if not plan.quick_scale:
        for label, kwargs in (("json whole-file w2", {"lazy_bytes": WHOLE_FILE}), ("json numpy w2", {"page_kernel": "numpy"})):
            run = run_tore(data, out / label.replace(" ", "_"), 2, memory=True, **kwargs)
            extra[label] = run
            _log(f"  scale: {label} {n:,} pages {run.seconds:.1f} s, {run.peak_pss / MB:.0f} MB (load {load_average()})")
    folders = [out / f"{ext}_w{w}" for ext, w in configs] + [out / label.replace(" ", "_") for label in extra]
    checks.same(f"{n:,} pages: native JSON, JSON Lines, Parquet x workers 1, 2" + (", native read whole, NumPy path" if extra else ""), folders)
    results["scale"] = {
        "pages": n, "bytes": sizes,
        "runs": {label: [{"wall": r.seconds, "cpu": r.cpu_seconds, "peak_pss": r.peak_pss} for r in rs] for label, rs in runs.items()},
        "extra": {label: {"wall": r.seconds, "cpu": r.cpu_seconds, "peak_pss": r.peak_pss} for label, r in extra.items()},
    }
    if "marginal" not in results or str(plan.peer_reference_pages) not in results["marginal"]["peer"]:
        # the peer's per-page cost at 1,000 pages in the same run, when the marginal measure did not run
        peer_data = synthetic_files(plan.peer_reference_pages)
        walls = [run_peer(peer_data, 2, out / "peer.npz").seconds for _ in range(plan.rounds)]
        results.setdefault("marginal", {"tore": {}, "peer": {}})["peer"][str(plan.peer_reference_pages)] = {"wall": walls, "cpu": []}


def measure_engine(plan: argparse.Namespace, results: dict) -> None:
    command = [sys.executable, "-m", "benchmarks.bench_kernel", "--json", "--pages", str(plan.engine_pages), "--repeats", str(plan.engine_repeats),
               "--jit-runs", str(plan.jit_runs)]
    done = run_command(command, env={**os.environ}, cwd=REPOSITORY)
    results["engine"] = json.loads(done.stdout.strip().splitlines()[-1])
    _log(f"  engine: kernel median {statistics.median(results['engine']['engine']['kernel']):.1f} µs/page (load {load_average()})")


def measure_jit(plan: argparse.Namespace, checks: Checks, results: dict) -> None:
    """The 200-page `tore evaluate` with a warm cache against the NumPy path; the cold/warm JIT
    numbers come with the engine measure (bench_kernel)."""
    if "engine" not in results:
        from benchmarks.bench_kernel import jit_times

        results["engine"] = {"jit": jit_times(plan.jit_runs)}
    warm = run_command([sys.executable, "-m", "tore_engine.engine.page_kernel", "--warm"],
                       env=tore_environment(), cwd=REPOSITORY)  # the default cache folder, as a user's runs use it
    _log(f"  jit: {warm.stdout.strip()}")
    data = synthetic_files(plan.jit_pages)
    out = WORK / "out" / "jit"
    modes = ["auto", "always", "numpy"]
    runs: dict[str, list[Run]] = {mode: [] for mode in modes}
    for round_ in range(plan.jit_rounds):
        for mode in modes if round_ % 2 == 0 else modes[::-1]:
            runs[mode].append(run_tore(data, out / mode, 2, page_kernel=mode))
    checks.same(f"{plan.jit_pages} pages, tore evaluate --workers 2: default, kernel always, NumPy path", [out / mode for mode in modes])
    results["jit_evaluate"] = {mode: {"wall": [r.seconds for r in rs], "cpu": [r.cpu_seconds for r in rs]} for mode, rs in runs.items()}
    _log(f"  jit: 200 pages auto {statistics.median(results['jit_evaluate']['auto']['wall']):.2f} s, numpy "
         f"{statistics.median(results['jit_evaluate']['numpy']['wall']):.2f} s (load {load_average()})")


# The app: a fresh `tore app` server, headless Chromium until the Matrices page has drawn its heatmap.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
HEATMAP_DRAWN = "[data-testid=stPlotlyChart] .js-plotly-plot .nsewdrag"  # what tests/studio/test_browser.py waits for


def measure_app(plan: argparse.Namespace, results: dict) -> None:
    if not CHROMIUM.exists():
        results["app"] = {"skipped": f"no Chromium at {CHROMIUM}"}
        return
    from playwright.sync_api import sync_playwright

    rounds = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            for _ in range(plan.app_rounds):
                port = free_port()
                url = f"http://127.0.0.1:{port}"
                started = time.monotonic()
                server = subprocess.Popen(tore_command(["app", "--port", str(port), "--address", "127.0.0.1"]), cwd=WORK,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=tore_environment())
                try:
                    wait_healthy(url, server, limit=120, poll=0.05)
                    healthy = time.monotonic()
                    context = browser.new_context(viewport={"width": 1500, "height": 1900})
                    page = context.new_page()
                    opened = time.monotonic()
                    page.goto(url)
                    page.wait_for_selector(HEATMAP_DRAWN, timeout=300_000)
                    drawn = time.monotonic()
                    context.close()
                finally:
                    server.terminate()
                    server.wait(timeout=30)
                rounds.append({"server_start_to_healthy": healthy - started, "open_to_matrices_drawn": drawn - opened,
                               "server_start_to_matrices_drawn": drawn - started})
                _log(f"  app: server {healthy - started:.2f} s, open to drawn {drawn - opened:.2f} s (load {load_average()})")
        finally:
            browser.close()
    results["app"] = {"rounds": rounds}


def _vector_inputs() -> list[tuple[str, Path, tuple[str, ...]]]:
    """The public vectors as files: (name, folder, extra options)."""
    if not VECTORS.is_dir():
        return []
    inputs = []
    for stem, name in (("tore_paper_example", "paper example"), ("tore_public_pages", "public pages")):
        document = json.loads((VECTORS / f"{stem}.json").read_text(encoding="utf-8"))
        folder = WORK / "data" / stem
        folder.mkdir(parents=True, exist_ok=True)
        for side in ("reference", "prediction"):
            (folder / f"{side}.json").write_text(json.dumps(document[side]), encoding="utf-8")
        inputs += [(f"{name} (single)", folder, ()), (f"{name} (dual)", folder, ("--taxonomy", "dual"))]
    return inputs


def measure_identity(plan: argparse.Namespace, checks: Checks, results: dict) -> None:
    """Every input through kernel/NumPy x workers 1/2 x lazy/whole-file, compared byte for byte;
    the synthetic inputs also as JSON Lines (lazy and whole) and Parquet."""
    inputs = _vector_inputs() + [(f"synthetic {n:,} pages", synthetic_files(n, FORMATS), ()) for n in plan.identity_sizes]
    out = WORK / "out" / "identity"
    counted = 0
    for name, data, extra in inputs:
        folders = []
        for page_kernel in ("always", "numpy"):
            for workers in (1, 2):
                for reader, lazy_bytes in (("whole", WHOLE_FILE), ("lazy", ALL_LAZY)):
                    folder = out / f"{data.name}{'_'.join(('',) + extra)}" / f"{page_kernel}_w{workers}_{reader}"
                    run_tore(data, folder, workers, page_kernel=page_kernel, lazy_bytes=lazy_bytes, extra=extra)
                    folders.append(folder)
        if name.startswith("synthetic"):
            for ext, lazy_bytes in (("jsonl", WHOLE_FILE), ("jsonl", ALL_LAZY), ("parquet", None)):
                folder = out / data.name / f"{ext}_{lazy_bytes}"
                run_tore(data, folder, 2, ext=ext, lazy_bytes=lazy_bytes)
                folders.append(folder)
        checks.same(f"{name}: kernel/NumPy x workers 1/2 x lazy/whole-file" + (" + JSON Lines (lazy, whole), Parquet" if name.startswith("synthetic") else ""), folders)
        counted += len(folders)
        _log(f"  identity: {name} done (load {load_average()})")
    results["identity"] = {"inputs": [name for name, _, _ in inputs], "runs": counted}


# --- the report -----------------------------------------------------------------------------------------


def _fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} µs"


def summary(plan: argparse.Namespace, results: dict) -> list[str]:
    """The measures table: tore, peer, ratio, target, met."""
    rows = ["| measure | tore | peer | ratio | target | met |", "|---|---|---|---|---|---|"]

    def met(ok: bool) -> str:
        return "yes" if ok else "**no**"

    if "marginal" in results and results["marginal"].get("tore"):
        low, high = plan.peer_sizes[0], plan.peer_sizes[-1]
        peer_median, peer_best = marginal_per_page(results, "peer", low, high)
        t_low, t_high = plan.tore_sizes[-2], plan.tore_sizes[-1]
        tore_median, tore_best = marginal_per_page(results, "tore", t_low, t_high)
        tore_small, _ = marginal_per_page(results, "tore", low, high)
        ratio = peer_median / tore_median
        rows.append(f"| i2-speed: marginal wall cost a page, `--workers 2` (medians of {plan.rounds}; bests in brackets) | "
                    f"{_fmt_ms(tore_median)} ({_fmt_ms(tore_best)}) over {t_low:,} → {t_high:,}; {_fmt_ms(tore_small)} over {low:,} → {high:,} | "
                    f"{_fmt_ms(peer_median)} ({_fmt_ms(peer_best)}) over {low:,} → {high:,} | {ratio:.0f}x ({peer_best / tore_best:.0f}x) | ≥ 100x | {met(ratio >= 100)} |")
        peer_cpu, _ = marginal_per_page(results, "peer", low, high, "cpu")
        tore_cpu, _ = marginal_per_page(results, "tore", t_low, t_high, "cpu")
        rows.append(f"| (the same in CPU time, process tree) | {_fmt_ms(tore_cpu)} | {_fmt_ms(peer_cpu)} | {peer_cpu / tore_cpu:.0f}x | | |")
        for n in plan.peer_sizes:
            inside = [entry for entry in results["marginal"]["peer_inside"] if entry["pages"] == n]
            if inside:
                phases = {key: statistics.median(entry[key] for entry in inside) for key in ("import", "load_and_samples", "evaluate")}
                rows.append(f"| (inside the peer's process, {n:,} pages, medians: import without torch; `json.load` + samples; "
                            f"`evaluate_dataset`) | | {phases['import']:.2f} s; {phases['load_and_samples']:.2f} s; {phases['evaluate']:.2f} s "
                            f"({_fmt_ms(phases['evaluate'] / n)} a page) | | | |")
    if "scale" in results:
        scale = results["scale"]
        n = scale["pages"]
        peer_walls = results["marginal"]["peer"][str(plan.peer_reference_pages)]["wall"]
        peer_page = statistics.median(peer_walls) / plan.peer_reference_pages
        for label, runs in scale["runs"].items():
            wall = [r["wall"] for r in runs]
            page = statistics.median(wall) / n
            peak = max(r["peak_pss"] for r in runs) / MB
            target = f"≥ 100x; ≤ 400 MB | {met(peer_page / page >= 100)}; {met(peak <= 400)}" if label == "json w2" else "(the targets are native JSON's at w2) |"
            rows.append(f"| {n:,} pages, {label}: wall a page (median of {len(wall)}, best {_fmt_ms(min(wall) / n)}); peak PSS of the tree | "
                        f"{_fmt_ms(page)}; {peak:.0f} MB | {_fmt_ms(peer_page)} a page at {plan.peer_reference_pages:,} pages | {peer_page / page:.0f}x | "
                        f"{target} |")
        for workers in (1, 2):
            native = statistics.median([r["wall"] for r in scale["runs"][f"json w{workers}"]])
            for ext in ("jsonl", "parquet"):
                other = statistics.median([r["wall"] for r in scale["runs"][f"{ext} w{workers}"]])
                target = f"≥ 1.00x | {met(other <= native)}" if workers == 2 else "(the target is at w2) |"
                rows.append(f"| {ext} at least as fast as native JSON, workers {workers} (medians) | {other:.1f} s vs {native:.1f} s | | "
                            f"{native / other:.2f}x | {target} |")
        for label, run in scale["extra"].items():
            rows.append(f"| ({n:,} pages, {label}, one run) | {run['wall']:.1f} s, {_fmt_ms(run['wall'] / n)} a page; {run['peak_pss'] / MB:.0f} MB | | | | |")
    if "engine" in results and "engine" in results["engine"]:
        engine = results["engine"]
        kernel_best, kernel_median = best_median(engine["engine"]["kernel"])
        numpy_median = statistics.median(engine["engine"]["numpy"])
        rows.append(f"| engine only, CPU µs a page ({engine['pages']} pages, {engine['repeats']} runs: median, best) | {kernel_median:.1f}, {kernel_best:.1f} µs | "
                    f"(NumPy path {numpy_median:.1f} µs) | {numpy_median / kernel_median:.1f}x the NumPy path | ≤ 40 µs | {met(kernel_median <= 40)} |")
        whole_kernel, whole_numpy = (statistics.median(engine["evaluate_batch"][path]) for path in ("kernel", "numpy"))
        rows.append(f"| (evaluate_batch, a worker's whole unit, median) | {whole_kernel:.1f} µs | (NumPy path {whole_numpy:.1f} µs) | "
                    f"{whole_numpy / whole_kernel:.1f}x | | |")
    if "engine" in results and "jit" in results["engine"]:
        jit = results["engine"]["jit"]
        cold, warm = jit["cold"], jit["warm"]

        def stat(runs: list[dict], key: str) -> str:
            values = [r[key] for r in runs]
            return f"{statistics.median(values):.2f}" + (f" (best {min(values):.2f})" if len(values) > 1 else "")

        compile_cpu = statistics.median([r["page_kernel_cpu"] + r["json_kernel_cpu"] + r["page_parser_cpu"] for r in cold])
        compile_wall = statistics.median([r["page_kernel"] + r["json_kernel"] + r["page_parser"] for r in cold])
        for key, name in (("warm_command_cold", "empty cache"), ("warm_command_warm", "warm cache")):
            if key not in jit:
                continue
            wall = statistics.median([r["wall"] for r in jit[key]])
            verdict = f"≤ 5 s | {met(wall <= 5)} |" if key == "warm_command_cold" else "| |"
            rows.append(f"| JIT: the install step `python -m tore_engine.engine.page_kernel --warm` as shipped (three kernels in two processes), {name}, "
                        f"whole process, wall; CPU ({len(jit[key])} runs) | {stat(jit[key], 'wall')} s; {stat(jit[key], 'cpu')} s | | | {verdict}")
        rows.append(f"| (the three kernels compiled one after the other in one process, empty NUMBA_CACHE_DIR, median of {len(cold)}) | "
                    f"{compile_wall:.2f} s wall, {compile_cpu:.2f} s CPU (page kernel {stat(cold, 'page_kernel_cpu')} + JSON scan "
                    f"{stat(cold, 'json_kernel_cpu')} + page parser {stat(cold, 'page_parser_cpu')} s CPU); whole process {stat(cold, 'wall')} s wall | | | | |")
        rows.append(f"| JIT warm load (numba's import apart) | page kernel {stat(warm, 'page_kernel')} s, JSON scan {stat(warm, 'json_kernel')} s, "
                    f"page parser {stat(warm, 'page_parser')} s wall; numba's import {stat(warm, 'numba_import')} s; whole process {stat(warm, 'wall')} s wall, "
                    f"{stat(warm, 'cpu')} s CPU | | | | |")
    if "jit_evaluate" in results:
        runs = results["jit_evaluate"]
        medians = {mode: statistics.median(r["wall"]) for mode, r in runs.items()}
        bests = {mode: min(r["wall"]) for mode, r in runs.items()}
        cpu = {mode: statistics.median(r["cpu"]) for mode, r in runs.items()}
        for mode in ("auto", "always"):
            ratio = medians[mode] / medians["numpy"]
            rows.append(f"| {plan.jit_pages}-page `tore evaluate --workers 2`, warm cache, TORE_PAGE_KERNEL={mode} vs numpy (medians of {len(runs[mode]['wall'])}; "
                        f"bests; CPU) | {medians[mode]:.3f} s ({bests[mode]:.3f}; {cpu[mode]:.2f} s CPU) | NumPy path {medians['numpy']:.3f} s "
                        f"({bests['numpy']:.3f}; {cpu['numpy']:.2f} s CPU) | {ratio:.2f}x | "
                        + (f"≤ 1.3x | {met(ratio <= 1.3)} |" if mode == "auto" else "(not the default: the kernel forced on a small job) | |"))
    if "app" in results and "rounds" in results["app"]:
        rounds = results["app"]["rounds"]
        for key, name in (("server_start_to_healthy", "server start → healthy"), ("open_to_matrices_drawn", "open in the browser → matrices drawn"),
                          ("server_start_to_matrices_drawn", "server start → matrices drawn")):
            best, median = best_median([r[key] for r in rounds])
            rows.append(f"| app's first evaluation on the demo, a fresh server each time, Playwright + Chromium: {name} ({len(rounds)} runs) | "
                        f"median {median:.2f} s, best {best:.2f} s | | | (measure) | |")
    return rows


def plan_for(args: argparse.Namespace) -> argparse.Namespace:
    quick = args.quick
    return argparse.Namespace(
        rounds=args.rounds or (1 if quick else 5),
        peer_sizes=[50, 200] if quick else [200, 1000],
        tore_sizes=[50, 200, 1000] if quick else [200, 1000, 10_000],
        peer_reference_pages=200 if quick else 1000,
        scale_pages=args.scale_pages or (2000 if quick else 100_000),
        scale_rounds=args.scale_rounds or (1 if quick else 2),
        quick_scale=quick,
        engine_pages=256 if quick else 1024,
        engine_repeats=2 if quick else 7,
        jit_runs=1 if quick else 3,
        jit_pages=200,
        jit_rounds=2 if quick else 7,
        app_rounds=1 if quick else 3,
        identity_sizes=[200] if quick else [200, 1000, 10_000],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated measures (default all: {','.join(SECTIONS)})")
    parser.add_argument("--rounds", type=int, help="A/B rounds of the marginal measure (default 5)")
    parser.add_argument("--scale-pages", type=int, help="pages of the scale measure (default 100,000)")
    parser.add_argument("--scale-rounds", type=int, help="runs of each scale configuration (default 2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes, one round each")
    parser.add_argument("--results", type=Path, default=WORK / "scale_results.json", help="where to write every number (JSON)")
    parser.add_argument("--peer-run", nargs=3, help=argparse.SUPPRESS)  # internal: DATA CONCURRENCY MATRICES
    args = parser.parse_args(argv)
    if args.peer_run:
        data, concurrency, matrices = args.peer_run
        print(json.dumps(peer_process(Path(data), int(concurrency), Path(matrices))))
        return 0
    sections = [name for name in args.only.split(",") if name]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown measures: {', '.join(sorted(unknown))}")
    plan = plan_for(args)
    results: dict = {"started": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC", "machine_start": machine_line(), "load": {}}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPOSITORY).stdout.strip()
    results["commit"] = commit
    changed = subprocess.run(["git", "status", "--short", "--", "tore_engine"], capture_output=True, text=True, cwd=REPOSITORY).stdout.split("\n")
    results["engine_files_changed_in_tree"] = [line[3:] for line in changed if line.strip() and not line[3:].startswith("tore_engine/studio/")]
    print(f"{results['started']}, commit {commit}, {results['machine_start']}", flush=True)
    if results["engine_files_changed_in_tree"]:
        print(f"uncommitted engine changes in the tree (measured as they are): {', '.join(results['engine_files_changed_in_tree'])}")
    checks = Checks()
    for name in sections:
        before = load_average()
        _log(f"{name} (load {before})")
        if name == "marginal":
            measure_marginal(plan, checks, results)
        elif name == "scale":
            measure_scale(plan, checks, results)
        elif name == "engine":
            measure_engine(plan, results)
        elif name == "jit":
            measure_jit(plan, checks, results)
        elif name == "app":
            measure_app(plan, results)
        elif name == "identity":
            measure_identity(plan, checks, results)
        results["load"][name] = {"before": before, "after": load_average()}
    results["machine_end"] = machine_line()
    results["checks"] = checks.lines
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"finished: {results['machine_end']}")
    print("load average (1 / 5 / 15 min) before and after each measure: "
          + "; ".join(f"{name} {load['before']} → {load['after']}" for name, load in results["load"].items()) + "\n")
    print("\n".join(summary(plan, results)) + "\n")
    print("\n".join(f"- {line}" for line in checks.lines))
    print(f"\nevery number: {args.results}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
