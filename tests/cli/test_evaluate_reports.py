"""`tore evaluate --xlsx --html --cells`: the reports land beside report.json, only when asked for,
and a missing Plotly fails before any work."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from tests.helpers import load_shared_json, write_json
from openpyxl import load_workbook

from tore_engine.report import OUTPUT_FILES, REPORT_FILES


def tore(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def paper_files(tmp_path_factory):
    data = load_shared_json("vectors", "tore_paper_example.json")
    folder = tmp_path_factory.mktemp("paper")
    return write_json(folder / "gt.json", data["reference"]), write_json(folder / "model.json", data["prediction"])


def test_reports_are_written_on_request_only(paper_files, tmp_path):
    plain, full = tmp_path / "plain", tmp_path / "full"
    assert tore("evaluate", *map(str, paper_files), "--out", str(plain), "--quiet").returncode == 0
    assert sorted(path.name for path in plain.iterdir()) == sorted(OUTPUT_FILES)
    result = tore("evaluate", *map(str, paper_files), "--out", str(full), "--xlsx", "--html", "--cells", "--quiet")
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in full.iterdir()) == sorted([*OUTPUT_FILES, *REPORT_FILES.values()])  # no staging left
    assert load_workbook(full / "report.xlsx").sheetnames[0] == "Matrices"
    assert (full / "report.html").read_text(encoding="utf-8").count('class="plotly-graph-div"') == 4
    with (full / "cells.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["page", "reference_class", "predicted_class", "pixels", "share_of_cell"]
    report = json.loads((full / "report.json").read_text())
    cells: dict[tuple[str, str], float] = {}
    for _, reference_class, predicted_class, pixels, _ in rows[1:]:  # summed over the pages, each cell of report.json
        cells[reference_class, predicted_class] = cells.get((reference_class, predicted_class), 0.0) + float(pixels)
    classes, confusion = report["classes"], report["matrices"]["confusion"]
    expected = {(classes[i], classes[j]): value for i, row in enumerate(confusion) for j, value in enumerate(row) if value}
    assert cells == pytest.approx(expected, rel=1e-12)


def test_html_without_plotly_fails_before_the_evaluation(paper_files, tmp_path):
    """plotly hidden from the child process: the error names the extra, and --out stays as it was."""
    hide = "import sys; sys.modules['plotly'] = None; from tore_engine.cli import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-c", hide, "evaluate", *map(str, paper_files), "--out", str(tmp_path / "out"), "--html"],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 2 and "'app' extra" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
