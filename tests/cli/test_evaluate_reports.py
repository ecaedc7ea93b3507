"""`tore evaluate --xlsx --html --cells`: the reports land beside report.json, only when asked for,
and a missing Plotly fails before any work."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from openpyxl import load_workbook

from tests.helpers import load_vector, write_json
from tore_engine.results.saved import SAVED_FILES
from tore_engine.writers.outputs import OUTPUT_FILES, REPORT_FILES


def tore(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def paper_files(tmp_path_factory):
    data = load_vector("tore_paper_example.json")
    folder = tmp_path_factory.mktemp("paper")
    return write_json(folder / "gt.json", data["reference"]), write_json(folder / "model.json", data["prediction"])


def test_reports_are_written_on_request_only(paper_files, tmp_path):
    plain, full = tmp_path / "plain", tmp_path / "full"
    assert tore("evaluate", *map(str, paper_files), "--out", str(plain), "--quiet").returncode == 0
    assert sorted(path.name for path in plain.iterdir()) == sorted([*OUTPUT_FILES, *SAVED_FILES])
    result = tore("evaluate", *map(str, paper_files), "--out", str(full), "--xlsx", "--html", "--cells", "--sweep", "--boxes", "--quiet")
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in full.iterdir()) == sorted([*OUTPUT_FILES, *SAVED_FILES, *REPORT_FILES.values()])  # no staging left
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


# Names that attack whoever reads the outputs: formulas for a spreadsheet (OWASP's examples), and for
# a terminal a class that moves the cursor two lines up and erases the line (it would overwrite the
# printed Foreground recall), with a NUL and a newline.
FORMULA_CLASSES = ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)"]
FORMULA_PAGE = "=cmd|' /C calc'!A0"
CURSOR_CLASS = "forged\x1b[2A\x1b[2K\x00\nline"
CURSOR_SHOWN = "forged\\x1b[2A\\x1b[2K\\x00\\nline"
HOSTILE_NAMES = [*FORMULA_CLASSES, CURSOR_CLASS]


def hostile_layout(name: str, narrower: int) -> dict:
    """Two 10 x 4 pages with a 2-pixel-wide box per class; every other box `narrower` on the prediction side."""
    boxes = [{"label": label, "bbox": [2 * i, 0, 2 * i + 2 - narrower * (i % 2), 4]} for i, label in enumerate(HOSTILE_NAMES)]
    pages = [{"id": page_id, "width": 10, "height": 4, "boxes": boxes} for page_id in (FORMULA_PAGE, "plain")]
    return {"name": name, "taxonomy": HOSTILE_NAMES, "pages": pages}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """`tore evaluate --cells` on the hostile names: the output folder and the raw stdout bytes."""
    folder = tmp_path_factory.mktemp("hostile")
    reference, prediction = write_json(folder / "gt.json", hostile_layout("gt", 0)), write_json(folder / "model.json", hostile_layout("model", 1))
    result = subprocess.run([sys.executable, "-m", "tore_engine", "evaluate", str(reference), str(prediction), "--out", str(folder / "out"),
                             "--cells", "--workers", "1"], capture_output=True, timeout=180)
    assert result.returncode == 0, result.stderr
    return folder / "out", result.stdout


def read_rows(path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_formula_names_are_text_in_every_csv(hostile_run):
    """Each CSV read back as a spreadsheet reads it: no name cell starts like a formula (those that did
    have a leading quote), every other cell is a number."""
    out, _ = hostile_run
    shown = {name: "'" + name for name in [*FORMULA_CLASSES, FORMULA_PAGE]}
    csvs = sorted(path.name for path in out.glob("*.csv"))
    assert len(csvs) == 11  # 9 matrices, pages.csv, cells.csv
    for name in csvs:
        rows = read_rows(out / name)
        text_columns = {"pages.csv": 1, "cells.csv": 3}.get(name, 1)
        header, *body = rows
        names = [*(header[1:] if name not in ("pages.csv", "cells.csv") else []), *(cell for row in body for cell in row[:text_columns])]
        assert [cell for cell in names if cell[:1] in "=+-@"] == [], name
        for cell in (cell for row in body for cell in row[text_columns:]):
            float(cell)  # a number (ValueError otherwise)
    full = read_rows(out / "confusion.csv")
    assert full[0] == ["reference \\ prediction", "Background", *(shown[name] for name in FORMULA_CLASSES), CURSOR_CLASS]
    assert [row[0] for row in read_rows(out / "pages.csv")[1:]] == ["'" + FORMULA_PAGE, "plain"]
    cells = read_rows(out / "cells.csv")
    assert {row[0] for row in cells[1:]} == {"'" + FORMULA_PAGE, "plain"}
    assert {row[1] for row in cells[1:]} == {shown[name] for name in FORMULA_CLASSES} | {CURSOR_CLASS}


def test_the_summary_shows_control_characters_escaped(hostile_run):
    """The summary's lines hold no character a terminal acts on (C0, DEL, C1), and the class shows escaped."""
    out, stdout = hostile_run
    lines = stdout.decode("utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 11  # ten lines (mAP's two, the box errors', the warnings', its note, and the app's command): the class name added none
    assert not [character for line in lines for character in line if ord(character) < 0x20 or 0x7F <= ord(character) < 0xA0]
    assert lines[1].startswith("Foreground recall 0.8000, ") and lines[2].startswith("mAP (coco) ")
    assert lines[4].startswith("Box errors (TIDE, IoU 0.5): ")
    assert lines[5].startswith("Lowest F1: ") and f"{CURSOR_SHOWN} 1.000" in lines[5]
    report = json.loads((out / "report.json").read_text(encoding="ascii"))
    assert report["classes"][-1] == CURSOR_CLASS  # the report keeps the exact name
