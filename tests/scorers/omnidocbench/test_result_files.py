"""`tore score omnidocbench --out DIR` writes the official v1.6 evaluator's result files
(tore_engine.scorers.omnidocbench.result_files), read here as upstream's result parser reads them
(`skills/scripts/parse_results.py` at upstream commit 9dc1decf: which file for which number, by
which keys) and set against the official rerun's own files of the same demo
(reference_results/v1.6_official_rerun_noCDM). The unmodified parser itself is run too, in its own
venv, when a copy of it is at /tmp/omnidocbench-parser (or OMNIDOCBENCH_PARSER names it, and
OMNIDOCBENCH_PARSER_PYTHON its Python): on our folder and on the official one it must print the
same scores."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import run_cli
from tests.helpers import shared_path
from tests.scorers.omnidocbench.helpers import DEMO, OFFICIAL

OFFICIAL_NAME = "end2end_quick_match"
PARSER_HOME = Path("/tmp/omnidocbench-parser")  # upstream's parser and its own venv, when set up (docs/benchmarks.md#official-result-files)
NAME = "pred_end2end_markdown_quick_match"  # upstream names a run after its prediction folder
# what the parser prints as scores: its label -> (file kind, keys, scale)
PARSER_SCORES = {
    "Overall": ("run_summary", ("notebook_metric_summary", "overall_notebook"), 1.0),
    "Text Edit Distance": ("metric_result", ("text_block", "all", "Edit_dist", "ALL_page_avg"), 1.0),
    "Formula CDM": ("metric_result", ("display_formula", "page", "CDM", "ALL"), 100.0),
    "Formula Edit Distance": ("metric_result", ("display_formula", "all", "Edit_dist", "ALL_page_avg"), 1.0),
    "Table TEDS": ("metric_result", ("table", "page", "TEDS", "ALL"), 100.0),
    "Table TEDS Structure Only": ("metric_result", ("table", "page", "TEDS_structure_only", "ALL"), 100.0),
    "Table Edit Distance": ("metric_result", ("table", "all", "Edit_dist", "ALL_page_avg"), 1.0),
    "Reading Order Edit Distance": ("metric_result", ("reading_order", "all", "Edit_dist", "ALL_page_avg"), 1.0),
}
# what it prints as validation: (file kind, keys)
PARSER_COUNTS = {
    "pages": ("stage_execution", ("page_match", "page_count")),
    "quick_match_timeout_count": ("stage_execution", ("page_match", "fallbacks", "quick_match_timeout", "count")),
    **{f"TEDS {key}": ("stage_execution", ("metrics", "table", "TEDS", key))
       for key in ("sample_count", "timeout_case_count", "error_case_count", "exception_case_count")},
}


ABSENT = object()


def _at(data, keys, default=None):
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("omnidocbench-out")
    code, stdout, stderr = run_cli("score", "omnidocbench", "--json", "--out", str(out),
                                   "--reference", str(shared_path(*DEMO, "OmniDocBench_demo.json")),
                                   "--markdown", str(shared_path(*DEMO, "pred_end2end_markdown")))
    assert code == 0, stderr
    return out, json.loads(stdout)


def _files(folder: Path, name: str) -> dict[str, dict]:
    """The files upstream's parser opens: the metric result must exist, the others are read when present."""
    return {kind: json.loads(path.read_text(encoding="utf-8"))
            for kind in ("metric_result", "run_summary", "stage_execution", "runtime_environment")
            if (path := folder / f"{name}_{kind}.json").exists()}


def test_the_folder_holds_the_four_files_under_upstreams_names(written):
    out, _ = written
    assert sorted(path.name for path in out.iterdir()) == sorted(
        f"{NAME}_{kind}.json" for kind in ("metric_result", "run_summary", "stage_execution", "runtime_environment"))
    # the parser finds the run's name as the first *_metric_result.json, less that suffix
    assert sorted(out.glob("*_metric_result.json"))[0].name.removesuffix("_metric_result.json") == NAME


def test_the_parsers_numbers_are_the_official_runs(written):
    ours = _files(written[0], NAME)
    theirs = _files(shared_path(*OFFICIAL), OFFICIAL_NAME)
    for label, (kind, keys, scale) in PARSER_SCORES.items():
        mine, official = _at(ours[kind], keys), _at(theirs[kind], keys)
        if official is None:
            assert mine is None, label  # Overall and CDM: null in both (CDM was not run upstream either)
        else:
            assert mine * scale == pytest.approx(official * scale, rel=1e-12, abs=1e-12), label
    official_stage = theirs["run_summary"]["stage_execution"]  # the official rerun's stage file is inside its summary
    for label, (kind, keys) in PARSER_COUNTS.items():
        assert _at(ours[kind], keys) == _at(official_stage, keys), label


def test_overall_is_null_and_says_why(written):
    summary = _files(written[0], NAME)["run_summary"]["notebook_metric_summary"]
    assert summary["overall_notebook"] is None
    assert "CDM is not computed" in summary["overall_notebook_reason"]
    assert summary["metrics"]["display_formula_CDM"]["raw"] is None and "CDM" in summary["metrics"]["display_formula_CDM"]["reason"]


def test_every_key_of_the_official_files_is_there(written):
    """Same names and keys: every key path of the official rerun's files is in ours (ours add a few
    that say what differs), and the page denominators and the notebook summary's numbers are its."""
    ours = _files(written[0], NAME)
    theirs = _files(shared_path(*OFFICIAL), OFFICIAL_NAME)

    def paths(data, prefix=()):
        if isinstance(data, dict):
            for key, value in data.items():
                yield (*prefix, key)
                yield from paths(value, (*prefix, key))

    for kind in theirs:
        missing = [path for path in paths(theirs[kind]) if _at(ours[kind], path, ABSENT) is ABSENT]
        assert not missing, (kind, missing[:5])
    assert ours["run_summary"]["page_denominators"] == theirs["run_summary"]["page_denominators"]
    for metric, row in theirs["run_summary"]["notebook_metric_summary"]["metrics"].items():
        for key, value in row.items():
            mine = ours["run_summary"]["notebook_metric_summary"]["metrics"][metric][key]
            assert mine == (value if value is None or isinstance(value, str) else pytest.approx(value, rel=1e-12)), (metric, key)
    runtime = ours["runtime_environment"]
    assert set(runtime) >= {"system", "system_packages", "python_packages", "external_tools", "texlive"}
    assert ours["run_summary"]["runtime_environment"] == runtime and ours["run_summary"]["stage_execution"] == ours["stage_execution"]


def test_the_json_output_is_unchanged_by_out(written):
    _, printed = written
    assert printed["end_to_end"]["text_edit"] == pytest.approx(0.3356214754013134, abs=1e-12) and printed["end_to_end"]["overall"] is None


def _scores_section(text: str) -> str:
    return re.search(r"## Scores\n(.*?)\n\n", text, re.S).group(1)


def test_the_unmodified_official_parser_reads_them(written):
    parser = os.environ.get("OMNIDOCBENCH_PARSER", str(PARSER_HOME / "parse_results.py"))
    if not Path(parser).is_file():
        pytest.skip(f"upstream's result parser not found: put skills/scripts/parse_results.py of commit 9dc1decf at {parser} "
                    "(and a venv beside it, python3 -m venv venv), or set OMNIDOCBENCH_PARSER")
    default_python = PARSER_HOME / "venv" / "bin" / "python"
    python = os.environ.get("OMNIDOCBENCH_PARSER_PYTHON", str(default_python) if default_python.is_file() else sys.executable)
    runs = [subprocess.run([python, parser, str(folder)], capture_output=True, text=True, timeout=60, check=True).stdout
            for folder in (written[0], shared_path(*OFFICIAL))]
    assert _scores_section(runs[0]) == _scores_section(runs[1])
    assert "- pages: 18" in runs[0] and "TEDS samples/timeouts/errors/exceptions: 10 / 0 / 0 / 0" in runs[0]


def test_out_without_markdown_is_refused(tmp_path):
    code, stdout, stderr = run_cli("score", "omnidocbench", "--out", str(tmp_path / "out"),
                                   "--reference", str(shared_path(*DEMO, "OmniDocBench_demo.json")))
    assert code == 2 and stdout == "" and "--markdown" in stderr
    assert not (tmp_path / "out").exists()


def test_a_number_that_is_not_finite_is_written_as_null(tmp_path):
    from tore_engine.scorers.omnidocbench.result_files import write_result_files

    write_result_files({"x_metric_result.json": {"table": {"all": {"TEDS": {"all": float("nan")}}, "counts": [1, float("inf")]}}}, tmp_path)
    assert json.loads((tmp_path / "x_metric_result.json").read_text()) == {"table": {"all": {"TEDS": {"all": None}}, "counts": [1, None]}}
