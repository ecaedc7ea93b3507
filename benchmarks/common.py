"""Helpers shared by the benchmark scripts (one place, so that no two scripts carry copies):

- the peer, docling-metrics-layout 0.17.0, imported without torch (docs/algorithm.md#the-reference-implementation), and the
  conversion of tore_engine pages into its samples;
- running a command while sampling the proportional set size (PSS) of its whole process tree;
- `tore` run through a small launcher that can move the lazy-reading threshold
  (`tore_engine.formats.lazy.LAZY_BYTES`), for comparing the lazy and whole-file readers;
- the synthetic data sets of `benchmarks/synthetic.py` written once into `benchmarks/_work/`
  (git-ignored) and reused by later runs, in native JSON, JSON Lines and Parquet;
- the machine's state (cores, load average) for the printed reports.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from benchmarks.synthetic import PREDICTION_NAME, REFERENCE_NAME, write_layout_files

REPOSITORY = Path(__file__).resolve().parents[1]
WORK = REPOSITORY / "benchmarks" / "_work"  # git-ignored: generated inputs and outputs
SEED = 0
MB_BYTES = 2**20


# --- the peer -------------------------------------------------------------------------------------


def import_peer_without_torch() -> types.SimpleNamespace:
    """The peer's TORE classes, without running its package initialiser (which imports torch):
    an empty package module pointing at the installed folder stands in for it (docs/algorithm.md#the-reference-implementation)."""
    spec = importlib.util.find_spec("docling_metrics_layout")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("docling-metrics-layout is not installed: .venv/bin/pip install 'docling-metrics-layout==0.17.0'")
    package = types.ModuleType("docling_metrics_layout")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["docling_metrics_layout"] = package
    from docling_metrics_layout.layout_types import BboxResolution, LayoutMetricSample
    from docling_metrics_layout.tore.tore_layout_evaluator import ToreLayoutEvaluator

    return types.SimpleNamespace(Box=BboxResolution, Sample=LayoutMetricSample, Evaluator=ToreLayoutEvaluator)


def peer_taxonomy(classes: list[str], mode: str) -> tuple[dict[int, str], dict[str, int], dict[str, int]]:
    """The peer's category dict (ids 1..n, as it requires) and each side's label -> id. Dual mode
    gives the prediction ids n+1..2n over the union, named as tore_engine names them."""
    reference_ids = {label: k + 1 for k, label in enumerate(classes)}
    if mode == "single":
        return {k + 1: label for k, label in enumerate(classes)}, reference_ids, reference_ids
    prediction_ids = {label: len(classes) + k + 1 for k, label in enumerate(classes)}
    names = {k + 1: f"{REFERENCE_NAME}_{label}" for k, label in enumerate(classes)}
    names.update({len(classes) + k + 1: f"{PREDICTION_NAME}_{label}" for k, label in enumerate(classes)})
    return names, reference_ids, prediction_ids


def peer_samples(peer: types.SimpleNamespace, reference, prediction, reference_ids: dict, prediction_ids: dict) -> list:
    """The peer's samples of two tore_engine layout sets (pages paired by id)."""
    def boxes(page, ids):
        return [peer.Box(category_id=ids[label], bbox=bbox) for label, bbox in zip(page.labels, page.bboxes.tolist())]

    predicted = {page.id: page for page in prediction.pages}
    return [
        peer.Sample(
            id=page.id,
            page_width=math.ceil(page.width),
            page_height=math.ceil(page.height),
            page_resolution_a=boxes(page, reference_ids),
            page_resolution_b=boxes(predicted[page.id], prediction_ids),
        )
        for page in reference.pages
    ]


def peer_samples_from_json(peer: types.SimpleNamespace, reference: dict, prediction: dict) -> tuple[dict[int, str], list]:
    """The peer's category dict and samples of two parsed native layout JSON documents (single
    taxonomy, the reference's class list; pages paired by id), as a user of the peer would build
    them from such files."""
    names, ids, _ = peer_taxonomy(reference["taxonomy"], "single")
    predicted = {page["id"]: page["boxes"] for page in prediction["pages"]}

    def boxes(entries: list[dict]) -> list:
        return [peer.Box(category_id=ids[entry["label"]], bbox=entry["bbox"]) for entry in entries]

    samples = [
        peer.Sample(id=page["id"], page_width=math.ceil(page["width"]), page_height=math.ceil(page["height"]),
                    page_resolution_a=boxes(page["boxes"]), page_resolution_b=boxes(predicted.get(page["id"], [])))
        for page in reference["pages"]
    ]
    return names, samples


def peer_matrices(result) -> dict[str, np.ndarray]:
    """The matrices of the peer's `evaluate_dataset` result, under the keys `tore_matrices` uses."""
    detailed, collapsed = result.matrix_evaluation.detailed, result.matrix_evaluation.collapsed
    return {"confusion": detailed.confusion_matrix, "recall": detailed.recall_matrix,
            "precision": detailed.precision_matrix, "reduced": collapsed.confusion_matrix}


def report_matrices(report: dict) -> dict[str, np.ndarray]:
    """The same matrices from a tore report.json."""
    return {"confusion": np.array(report["matrices"]["confusion"]), "recall": np.array(report["matrices"]["recall"]),
            "precision": np.array(report["matrices"]["precision"]), "reduced": np.array(report["reduced"]["confusion"])}


TOLERANCE = 1e-9


def matrices_agree(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> tuple[bool, float]:
    """docs/algorithm.md#exactness-and-determinism: pixel counts within 1e-9 relative, ratios within 1e-9 absolute.
    Returns (agree, largest |a - b| / max(1, |b|) over the confusion matrix); `b` is the peer's."""
    if a["confusion"].shape != b["confusion"].shape:
        return False, math.inf
    relative = np.abs(a["confusion"] - b["confusion"]) / np.maximum(1, np.abs(b["confusion"]))
    ratios = all(np.abs(a[key] - b[key]).max() <= TOLERANCE for key in ("recall", "precision"))
    reduced = np.all(np.abs(a["reduced"] - b["reduced"]) <= TOLERANCE * np.maximum(1, np.abs(b["reduced"])))
    return bool(relative.max() <= TOLERANCE and ratios and reduced), float(relative.max())


# --- measuring processes --------------------------------------------------------------------------


def tree_pss(pid: int) -> int:
    """Proportional set size in bytes of `pid` and all its descendants: pages shared between the
    driver and its forked workers count once, split between them (a plain RSS sum would count them
    again in every worker)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError):
            continue
    return total


def children_cpu() -> float:
    """User + system seconds of this process's finished (waited-for) children and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Run:
    """One command run: wall and CPU seconds (the process tree's), peak PSS of the tree (bytes,
    0 when not sampled), and what it printed."""

    seconds: float
    cpu_seconds: float
    peak_pss: int
    stdout: str
    stderr: str


def own_pss(pid: int) -> int:
    """Proportional set size in bytes of `pid` alone (0 once it has gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def run_command(command: list[str], *, env: dict | None = None, sample_every: float | None = None, cwd: Path | None = None,
                timeline: list | None = None) -> Run:
    """Run `command` to its end (failing loudly), timing it; with `sample_every`, also sample the
    PSS of its process tree at that interval (seconds) from a thread, and append (seconds since the
    start, PSS of the process itself, PSS of the tree) to `timeline` when given. The orchestrating
    process must run one command at a time for the CPU figure to be this command's alone."""
    cpu = children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    peak = 0

    def sample() -> None:
        nonlocal peak
        while process.poll() is None:
            tree = tree_pss(process.pid)
            peak = max(peak, tree)
            if timeline is not None:
                timeline.append((time.perf_counter() - start, own_pss(process.pid), tree))
            time.sleep(sample_every)

    sampler = threading.Thread(target=sample, daemon=True) if sample_every else None
    if sampler:
        sampler.start()
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - start
    if sampler:
        sampler.join()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])} ... exited with {process.returncode}: {stderr.strip()[-2000:]}")
    return Run(seconds, children_cpu() - cpu, peak, stdout, stderr)


def timed_then_sampled(command: list[str], *, env: dict | None = None, cwd: Path | None = None, sample_every: float = 0.05) -> Run:
    """`command` run twice: timed alone (wall and CPU), then with its tree's PSS sampled (the peak).
    Reading a process's smaps_rollup takes its memory-map lock, which stalls the workers' own
    mmap and munmap: a sampled run of 10,000 turned pages took 0.5 s longer (of 6.5 s), and one of
    100,000 pages with mAP 0.5-1.4 s (of 13), while box runs of 2 s did not change (RESULTS.md)."""
    timed = run_command(command, env=env, cwd=cwd)
    sampled = run_command(command, env=env, cwd=cwd, sample_every=sample_every)
    return replace(timed, peak_pss=sampled.peak_pss)


# `tore` as its console script runs it, with the lazy-reading threshold optionally moved
# (argv[1]: bytes, or "-" for the installed default).
TORE_LAUNCHER = """
import sys
if sys.argv[1] != "-":
    import tore_engine.formats.lazy as lazy
    lazy.LAZY_BYTES = int(sys.argv[1])
from tore_engine.cli import main
sys.exit(main(sys.argv[2:]))
"""
WHOLE_FILE = 2**62  # a threshold no file reaches: every file read whole
ALL_LAZY = 0  # every native JSON / JSON Lines file read as an index


def tore_command(arguments: list[str], lazy_bytes: int | None = None) -> list[str]:
    """`tore ARGUMENTS...`, with the lazy threshold moved when `lazy_bytes` is given."""
    if lazy_bytes is None:
        return [str(Path(sys.executable).with_name("tore")), *arguments]
    return [sys.executable, "-c", TORE_LAUNCHER, str(lazy_bytes), *arguments]


@functools.cache
def compile_bytecode(tree: Path = REPOSITORY) -> None:
    """Write the package's bytecode, as `pip install` of a wheel does: with PYTHONDONTWRITEBYTECODE
    set (this machine sets it) a checkout's edited modules were compiled from source by every timed
    run, 0.3-0.5 s of a 1,000-page job (benchmarks/RESULTS.md), where the peer's come compiled."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "tore_engine")], check=True, stdout=subprocess.DEVNULL)


def tore_environment(page_kernel: str | None = None, **extra: str) -> dict:
    """The environment of a `tore` run (this checkout's bytecode written first): TORE_PAGE_KERNEL
    set when given (auto, numpy, always)."""
    compile_bytecode()
    environment = {**os.environ, "TQDM_DISABLE": "1", **extra}
    environment.pop("TORE_PAGE_KERNEL", None)
    if page_kernel:
        environment["TORE_PAGE_KERNEL"] = page_kernel
    return environment


DATED = "saved.json"  # says when, and from which files, the evaluation was made: differs from run to run


def output_bytes(folder: Path) -> dict[str, bytes]:
    """Every file `tore evaluate` wrote into `folder` (the CSVs, report.json, the saved evaluation's
    text and arrays) but `DATED`, by name."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file() and path.name != DATED}


def same_outputs(first: Path, second: Path) -> bool:
    a, b = output_bytes(first), output_bytes(second)
    return bool(a) and a == b


# --- data sets --------------------------------------------------------------------------------------


FORMATS = ("json", "jsonl", "parquet")


def synthetic_files(pages: int, formats: tuple[str, ...] = ("json",), folder: Path = WORK / "data") -> Path:
    """The folder of `reference.EXT` and `prediction.EXT` for `pages` synthetic pages (seed 0, 1025 x
    1025, 40 boxes), written on first use: native JSON by `synthetic.write_layout_files`, and from it
    JSON Lines and Parquet with the formats' own `write` functions (the same pages in each).
    A `.complete-EXT` marker says a format was written in full."""
    out = folder / f"synthetic_s{SEED}_n{pages}"
    if not (out / ".complete-json").exists():
        write_layout_files(out, pages, SEED)
        (out / ".complete-json").touch()
    missing = [ext for ext in formats if ext != "json" and not (out / f".complete-{ext}").exists()]
    if missing:
        # a child process: reading 100,000 pages whole costs a few GB, which the orchestrator
        # (whose memory is no part of any measurement, but which runs for long) should not keep
        subprocess.run([sys.executable, "-m", "benchmarks.common", "convert", str(out), *missing], check=True, cwd=REPOSITORY)
    return out


def _convert(out: Path, formats: list[str]) -> None:
    import tore_engine.formats.lazy as lazy
    from tore_engine.formats import jsonl, native, parquet

    lazy.LAZY_BYTES = WHOLE_FILE
    for side in ("reference", "prediction"):
        layout = native.read(out / f"{side}.json")
        for ext in formats:
            {"jsonl": jsonl.write, "parquet": parquet.write}[ext](layout, out / f"{side}.{ext}")
    for ext in formats:
        (out / f".complete-{ext}").touch()


# --- machine state and summaries ---------------------------------------------------------------------


def load_average() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def machine_line() -> str:
    return (f"{platform.node() or 'machine'}: {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"numpy {np.__version__}; load average (1 / 5 / 15 min) {load_average()}")


def best_median(values: list[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["convert"]:
        _convert(Path(argv[1]), argv[2:])
        return 0
    raise SystemExit("usage: python -m benchmarks.common convert FOLDER EXT...")


if __name__ == "__main__":
    raise SystemExit(main())


# --- an app server, for the browser test and the app benchmark ---------------------------------


def free_port() -> int:
    """A loopback port that nothing listens on at the moment."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, limit: float, poll: float) -> None:
    """Return once the Streamlit server at `url` answers its health check (asked every `poll`
    seconds); an error when its `process` ends first or `limit` seconds pass."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(poll)
    raise RuntimeError(f"the app server did not answer at {url} within {limit} s")


APP_SCRIPT = REPOSITORY / "tore_engine" / "studio" / "app.py"


@contextmanager
def served_app(data_root: Path, launcher: tuple[str, ...] = (sys.executable, "-m", "streamlit"), *, env: dict | None = None,
               log=subprocess.DEVNULL, script: Path = APP_SCRIPT) -> Iterator[tuple[str, subprocess.Popen]]:
    """The app (or another Streamlit `script`) served on a free loopback port by `launcher` (followed
    by streamlit's own arguments) with this data root, until the block ends: its URL and its
    process (stderr to `log`)."""
    port = free_port()
    command = [*launcher, "run", str(script), "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
               "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"]
    with _serving(command, port, data_root, env, log) as served:
        yield served


@contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A checkout of `revision` in a temporary folder, its kernels compiled first (numba's cache is
    per source path, so a new folder is a cold cache; before commit "Fork-safe kernels" a server's
    first evaluation could hang when it forked its workers while the warm-up compiled), removed
    afterwards: the other side of an A/B, run with PYTHONPATH set to it."""
    with tempfile.TemporaryDirectory(prefix="bench_ab_") as folder:
        tree = Path(folder) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), revision], cwd=REPOSITORY, check=True)
        try:
            subprocess.run([sys.executable, "-m", "tore_engine.run.warm"], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                           check=True, stdout=subprocess.DEVNULL)
            compile_bytecode(tree)
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPOSITORY, check=True)


@contextmanager
def served_tore_app(data_root: Path, *, log=subprocess.DEVNULL, tree: Path = REPOSITORY, folder: str | None = None
                    ) -> Iterator[tuple[str, subprocess.Popen]]:
    """`served_app` as a user starts it: `tore app [FOLDER]` (what `./run.sh app` runs), from this
    checkout or another `tree` of the repository (a worktree of an older commit, for an A/B)."""
    compile_bytecode(tree)
    port = free_port()
    env = None if tree == REPOSITORY else {"PYTHONPATH": str(tree)}
    with _serving([sys.executable, "-m", "tore_engine", "app", *([folder] if folder else []), "--port", str(port), "--address", "127.0.0.1"],
                  port, data_root, env, log, cwd=tree) as served:
        yield served


@contextmanager
def _serving(command: list[str], port: int, data_root: Path, env: dict | None, log, *, cwd: Path = REPOSITORY
             ) -> Iterator[tuple[str, subprocess.Popen]]:
    environment = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1", "TORE_STUDIO_DATA_ROOT": str(data_root)}
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=log, env=environment)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, limit=60, poll=0.3)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
