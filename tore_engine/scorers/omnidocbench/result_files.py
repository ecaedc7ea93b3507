"""The files the official OmniDocBench v1.6 end-to-end evaluator writes into its result folder,
made from `tore score omnidocbench --markdown` (docs/benchmarks.md#official-result-files), so that
the tools that read an official run (the upstream result parser, `skills/scripts/parse_results.py`,
and the leaderboard notebook) read this one.

For a run named `<save name>` (the prediction folder's name, then `_quick_match`, as upstream names
it) they are `<save name>_metric_result.json` (each element's `all`, `group` and `page` results, the
table's TEDS `metric_debug`, the `match_debug`), `<save name>_run_summary.json` (`save_name`,
`runtime_environment`, `stage_execution`, `page_denominators`, `notebook_metric_summary` with the
leaderboard's `overall_notebook`), `<save name>_stage_execution.json` and
`<save name>_runtime_environment.json`, with upstream's names and keys.

What differs from an official run is said in the files, in keys upstream does not have (its readers
look keys up by name, so they pass over them): the evaluator (`runtime_environment.evaluator`); no
time limits (upstream's timeouts are null, no fallback ever taken, one worker); no external tool run
(`external_tools` and `texlive` say "not run"); Overall null because formula CDM is not computed
(`notebook_metric_summary.overall_notebook_reason`).
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import platform
import re
import sys
from pathlib import Path
from typing import Any

DISTRIBUTION = "tore-studio"  # the package tore_engine is installed as
MATCH_METHOD = "quick_match"  # upstream's name of the matcher, the end of its run names
FILE_KINDS = ("metric_result", "run_summary", "stage_execution", "runtime_environment")
NOTEBOOK_SOURCE = "tools/generate_result_tables.ipynb#cell-2"  # where upstream's summary says its formula comes from
CDM_REASON = ("formula CDM is not computed by tore (it renders each formula with pdflatex and compares the images, "
              "which needs TeX Live and ImageMagick); Overall = ((1 - text edit) * 100 + CDM * 100 + table TEDS * 100) / 3 "
              "needs it, and the formula edit distance is never put in its place")
NOT_RUN = "not run: tore does not compute formula CDM, the only metric that needs it"
EXTERNAL_TOOLS = ("pdflatex", "kpsewhich", "tlmgr", "ghostscript", "magick", "convert", "identify", "latexmlc")
FALLBACKS = ("quick_match_timeout", "page_timeout")  # upstream's fallbacks of the page matcher; tore never takes one
TEDS_SAMPLE_KEYS = ("timeout", "error", "exception")  # kinds of failed TEDS samples upstream counts


def save_name(markdown_folder: str | Path) -> str:
    """Upstream's run name: the prediction folder's name, then `_quick_match`."""
    return f"{Path(markdown_folder).resolve().name}_{MATCH_METHOD}"


def file_names(name: str) -> tuple[str, ...]:
    return tuple(f"{name}_{kind}.json" for kind in FILE_KINDS)


def result_files(end_to_end: dict[str, Any], pages: int, name: str) -> dict[str, dict[str, Any]]:
    """Each official file's name and content, from the `end_to_end` object of a `tore score
    omnidocbench --markdown` result on `pages` pages."""
    metric_result = {element: dict(result) for element, result in end_to_end["official"].items()}
    metric_result["table"]["metric_debug"] = {"TEDS": _teds_debug(end_to_end["tables_scored"])}
    metric_result["match_debug"] = {
        "workers": 1,
        "page_count": pages,
        "quick_match_truncated_timeout_sec": None,
        "match_timeout_sec": None,
        "text_match_fallback_pages": {fallback: [] for fallback in FALLBACKS},
        "text_match_fallback_counts": {fallback: 0 for fallback in FALLBACKS},
        "note": "tore runs the quick match to its end on every page: no time limit, no fallback",
    }
    stage_execution = {
        "page_match": {
            "workers": 1,
            "page_count": pages,
            "quick_match_truncated_timeout_sec": None,
            "match_timeout_sec": None,
            "fallbacks": {fallback: {"count": 0, "cases": []} for fallback in FALLBACKS},
        },
        "metrics": {"table": {"TEDS": {key: value for key, value in _teds_debug(end_to_end["tables_scored"]).items() if key != "stage"}}},
    }
    runtime_environment = _runtime_environment()
    run_summary = {
        "save_name": name,
        "runtime_environment": runtime_environment,
        "stage_execution": stage_execution,
        "page_denominators": end_to_end["page_denominators"],
        "notebook_metric_summary": _notebook_summary(metric_result, end_to_end["page_denominators"]),
    }
    contents = (metric_result, run_summary, stage_execution, runtime_environment)
    return dict(zip(file_names(name), contents))


def write_result_files(files: dict[str, dict[str, Any]], folder: Path) -> None:
    """Write each file as upstream does (4-space indent), ASCII (every string of the input escaped),
    a number that is not finite as null (upstream's readers take NaN as no number too)."""
    for file_name, content in files.items():
        (folder / file_name).write_text(json.dumps(_finite(content), indent=4, allow_nan=False) + "\n", encoding="ascii")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def _teds_debug(samples: int) -> dict[str, Any]:
    debug: dict[str, Any] = {"stage": "TEDS", "workers": 1, "timeout_sec": None, "sample_count": samples}
    for kind in TEDS_SAMPLE_KEYS:
        debug[f"{kind}_case_count"] = 0
        debug[f"{kind}_cases"] = []
    return debug


def _at(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _notebook_summary(metric_result: dict[str, Any], denominators: dict[str, Any]) -> dict[str, Any]:
    """Upstream's `notebook_metric_summary`: the leaderboard's five numbers (raw, and in the notebook's
    scale: TEDS and CDM in percent), each with its page count, and Overall (null without CDM)."""
    rows = (  # name, path in the metric result, path in the denominators, in percent
        ("text_block_Edit_dist", ("text_block", "all", "Edit_dist", "ALL_page_avg"), ("text_block", "Edit_dist"), False),
        ("display_formula_CDM", ("display_formula", "page", "CDM", "ALL"), ("display_formula", "CDM"), True),
        ("table_TEDS", ("table", "page", "TEDS", "ALL"), ("table", "TEDS"), True),
        ("table_TEDS_structure_only", ("table", "page", "TEDS_structure_only", "ALL"), ("table", "TEDS_structure_only"), True),
        ("reading_order_Edit_dist", ("reading_order", "all", "Edit_dist", "ALL_page_avg"), ("reading_order", "Edit_dist"), False),
    )
    metrics = {}
    for name, path, denominator, percent in rows:
        raw = _at(metric_result, *path)
        metrics[name] = {"raw": raw, "page_denominator": _at(denominators, *denominator, "ALL"),
                         "notebook_value": raw * 100.0 if percent and raw is not None else raw}
    metrics["display_formula_CDM"]["reason"] = CDM_REASON
    return {"source": NOTEBOOK_SOURCE, "metrics": metrics, "overall_notebook": None, "overall_notebook_reason": CDM_REASON}


def _package_versions() -> dict[str, str]:
    """tore's version and the installed versions of what it runs on and scores with (its
    requirements and its `scores` extra's), as upstream lists its project's dependencies."""
    versions = {DISTRIBUTION: _version(DISTRIBUTION)}
    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        requirements = []
    for requirement in requirements:
        name, _, marker = requirement.partition(";")
        if marker and marker.strip() != 'extra == "scores"':
            continue
        name = re.split(r"[\s<>=!~\[(]", name.strip(), maxsplit=1)[0]
        versions[name] = _version(name)
    return versions


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unavailable"


def _runtime_environment() -> dict[str, Any]:
    """Upstream's runtime report with its keys: the Python and system tore ran on, the packages it
    used; the external tools and TeX files of CDM not run or read."""
    not_read = {"path": "", "version": "unavailable", "date": "", "header": "", "status": NOT_RUN}
    return {
        "system": {
            "platform": platform.platform(),
            "python_version": sys.version.replace("\n", " "),
            "python_executable": sys.executable,
            "python_prefix": sys.prefix,
            "conda_env": "",
            "conda_prefix": "",
            "libc": " ".join(part for part in platform.libc_ver() if part),
            "uname": " ".join(platform.uname()),
            "os_release": {},
        },
        "system_packages": {"package_manager": NOT_RUN, "tracked_packages": {}},
        "python_packages": _package_versions(),
        "external_tools": {tool: {"path": tool, "returncode": None, "output": NOT_RUN} for tool in EXTERNAL_TOOLS},
        "texlive": {"cjk_font_family": None, "cjk_sty": dict(not_read), "cjk_font_fd": dict(not_read)},
        "evaluator": {
            "name": "tore score omnidocbench",
            "version": _version(DISTRIBUTION),
            "reproduces": "the official OmniDocBench v1.6 end-to-end evaluator (quick_match), formula CDM aside",
        },
    }
