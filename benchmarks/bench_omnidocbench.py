"""Benchmark: `tore score omnidocbench --markdown` against the official OmniDocBench v1.6 end-to-end
evaluator (upstream commit 9dc1decf, configs/end2end.yaml without CDM), in one run.

Builds page sets from the demo in ../shared/data/omnidocbench at run time (in a temporary folder):
the demo's 18 pages, and sets of N pages that repeat them under new image names with the held-out
variations of tests/omnidocbench/variations.py applied in turn to the predictions. Each set is
scored by `tore score omnidocbench --json` and by the official evaluator (a separate Python and
checkout, which must be given), and the headline numbers are checked to be equal within 1e-9.

    python -m venv /work/odbenv && /work/odbenv/bin/pip install <the evaluator's pinned requirements>
    .venv/bin/python benchmarks/bench_omnidocbench.py --official-python /work/odbenv/bin/python \
        --official-repo /work/odb_official --pages 18 100 1000

Times are wall-clock and CPU (children included) of each whole command, imports and reading the
files included. The official evaluator runs with its configured 2 page workers and 2 TEDS workers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from tests.scorers.omnidocbench.variations import TEXT_VARIATIONS  # noqa: E402

DEMO = REPOSITORY.parent / "shared" / "data" / "omnidocbench"
HEADLINE = {  # tore key -> path in the official metric_result
    "text_edit": ("text_block", "all", "Edit_dist", "ALL_page_avg"),
    "formula_edit": ("display_formula", "all", "Edit_dist", "ALL_page_avg"),
    "table_teds": ("table", "page", "TEDS", "ALL"),
    "table_teds_s": ("table", "page", "TEDS_structure_only", "ALL"),
    "table_teds_all": ("table", "all", "TEDS", "all"),
    "table_edit": ("table", "all", "Edit_dist", "ALL_page_avg"),
    "reading_order_edit": ("reading_order", "all", "Edit_dist", "ALL_page_avg"),
}
CONFIG = """end2end_eval:
  metrics:
    text_block: {{metric: [Edit_dist]}}
    display_formula: {{metric: [Edit_dist]}}
    table: {{metric: [TEDS, Edit_dist], teds_workers: 2}}
    reading_order: {{metric: [Edit_dist]}}
  dataset:
    dataset_name: end2end_dataset
    ground_truth: {{data_path: {gt}}}
    prediction: {{data_path: {markdown}}}
    match_method: quick_match
    match_workers: 2
    quick_match_truncated_timeout_sec: 300
    match_timeout_sec: 420
    timeout_fallback_max_chunk_span: 10
    timeout_fallback_order_penalty: 0.10
"""


def build(folder: Path, pages: int) -> tuple[Path, Path]:
    """The demo's pages repeated to `pages` pages, predictions varied in turn; the demo itself for 18."""
    reference = json.loads((DEMO / "OmniDocBench_demo.json").read_text(encoding="utf-8"))
    markdown = folder / "markdown"
    markdown.mkdir(parents=True)
    variations = [lambda text: text, *TEXT_VARIATIONS.values()]
    out = []
    for index in range(pages):
        page = json.loads(json.dumps(reference[index % len(reference)]))
        source = page["page_info"]["image_path"]
        name = source if pages == len(reference) else f"copy{index:05d}_{source}"
        page["page_info"]["image_path"] = name
        out.append(page)
        prediction = DEMO / "pred_end2end_markdown" / (source[:-4] + ".md")
        text = prediction.read_text(encoding="utf-8")
        variation = 0 if pages == len(reference) else (index // len(reference)) % len(variations)
        (markdown / (name[:-4] + ".md")).write_text(variations[variation](text), encoding="utf-8")
    gt = folder / "gt.json"
    gt.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    return gt, markdown


def timed(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed:\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def run_tore(gt: Path, markdown: Path) -> tuple[float, float, dict]:
    wall, cpu, done = timed([str(REPOSITORY / ".venv" / "bin" / "tore"), "score", "omnidocbench", "--reference", str(gt),
                             "--markdown", str(markdown), "--json"], REPOSITORY)
    return wall, cpu, json.loads(done.stdout)["end_to_end"]


def run_official(gt: Path, markdown: Path, python: str, repo: Path, folder: Path) -> tuple[float, float, dict]:
    (folder / "end2end.yaml").write_text(CONFIG.format(gt=gt, markdown=markdown), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(folder / "hf")}
    wall, cpu, _ = timed([python, str(repo / "pdf_validation.py"), "--config", "end2end.yaml"], folder, env)
    result = json.loads((folder / "result" / f"{markdown.name}_quick_match_metric_result.json").read_text())
    values = {}
    for key, path in HEADLINE.items():
        value = result
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        values[key] = value
    return wall, cpu, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[18, 1000])
    parser.add_argument("--official-python", required=True, help="the Python of a venv with the evaluator's pins")
    parser.add_argument("--official-repo", type=Path, required=True, help="a checkout of upstream commit 9dc1decf")
    parser.add_argument("--tore-only-above", type=int, default=None, help="skip the official evaluator on larger sets")
    args = parser.parse_args()
    print("pages | tore wall | tore CPU | official wall | official CPU | ratio wall | ratio CPU | equal")
    for pages in args.pages:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            gt, markdown = build(folder, pages)
            tore_wall, tore_cpu, ours = run_tore(gt, markdown)
            if args.tore_only_above is not None and pages > args.tore_only_above:
                print(f"{pages} | {tore_wall:.2f} s | {tore_cpu:.2f} s | - | - | - | - | -", flush=True)
                continue
            official_wall, official_cpu, theirs = run_official(gt, markdown, args.official_python, args.official_repo, folder)
            equal = all((ours[key] is None and theirs[key] in (None, "NaN")) or abs(ours[key] - theirs[key]) <= 1e-9
                        for key in HEADLINE)
            print(f"{pages} | {tore_wall:.2f} s | {tore_cpu:.2f} s | {official_wall:.2f} s | {official_cpu:.2f} s | "
                  f"{official_wall / tore_wall:.1f}x | {official_cpu / tore_cpu:.1f}x | {'yes' if equal else 'NO'}", flush=True)
            if not equal:
                print(json.dumps({"tore": {k: ours[k] for k in HEADLINE}, "official": theirs}, indent=1))


if __name__ == "__main__":
    main()
