"""The reports as downloads (tore_engine.studio.downloads): the files are those `tore evaluate`
writes (the HTML report titled with the model), their names are safe and carry the model's
name, no temporary folder is left, and the Matrices page offers one button a report."""

from __future__ import annotations

import html
import io
import tempfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.cli.helpers import run_cli
from tests.helpers import DEMO
from tests.studio.helpers import _app, _no_exception
from tore_engine.studio import downloads
from tore_engine.writers.html import DEFAULT_TITLE


@pytest.mark.parametrize("title, stem", [
    ("model A (simulated)", "model_A_simulated"),
    ("model B (heron), document picture_classification", "model_B_heron_document_picture_classification"),
    ("../../etc/passwd", "etc_passwd"),
    (".hidden", "hidden"),
    ("modèle ünïcode", "modele_unicode"),
    ("a\x00b\nc/d\\e:f*g?h", "a_b_c_d_e_f_g_h"),
    ("<script>", "script"),
    ("", "evaluation"),
    ("日本語", "evaluation"),
])
def test_file_stems_are_safe(title, stem):
    assert downloads.file_stem(title) == stem


def test_a_long_name_is_cut():
    stem = downloads.file_stem("x" * 500)
    assert stem == "x" * downloads.MAX_STEM


def test_file_names_carry_the_title_and_the_clis_file():
    assert [downloads.file_name("model A (simulated)", report) for report in downloads.REPORTS] == [
        "tore_model_A_simulated_report.xlsx", "tore_model_A_simulated_report.html", "tore_model_A_simulated_cells.csv"]


@pytest.fixture(scope="module")
def cli_reports(tmp_path_factory):
    """What `tore evaluate --xlsx --html --cells` writes for the demo's model A."""
    out = tmp_path_factory.mktemp("cli")
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(out),
                           "--xlsx", "--html", "--cells", "-q")
    assert code == 0, err
    return out


def _report_folders() -> set[str]:
    return {path.name for path in Path(tempfile.gettempdir()).glob("tore_studio_report_*")}


def test_the_files_are_those_tore_evaluate_writes(cli_reports, demo_evaluation):
    before = _report_folders()
    content = demo_evaluation.report_content()
    title = "model A (simulated)"
    assert downloads.report_bytes(content, "cells", title) == (cli_reports / "cells.csv").read_bytes()
    # The HTML report differs only by its title: the CLI's, with the model's name after it.
    cli_html = (cli_reports / "report.html").read_text(encoding="utf-8")
    assert cli_html.count(DEFAULT_TITLE) == 6  # <title>, <h1> and the four figures' titles
    assert downloads.report_bytes(content, "html", title).decode("utf-8") == cli_html.replace(DEFAULT_TITLE, downloads.report_title(title))
    workbook, cli_workbook = (load_workbook(source) for source in (io.BytesIO(downloads.report_bytes(content, "xlsx", title)),
                                                                    cli_reports / "report.xlsx"))
    assert workbook.sheetnames == cli_workbook.sheetnames
    for name in workbook.sheetnames:
        assert [[cell.value for cell in row] for row in workbook[name].iter_rows()] == \
               [[cell.value for cell in row] for row in cli_workbook[name].iter_rows()]
    assert _report_folders() == before


def test_markup_in_the_title_stays_text(demo_evaluation):
    shown = downloads.report_bytes(demo_evaluation.report_content(), "html", "<script>alert(1)</script>").decode("utf-8")
    assert "<script>alert(1)" not in shown and f"<h1>{html.escape(downloads.report_title('<script>alert(1)</script>'))}</h1>" in shown


def test_a_failing_writer_leaves_no_folder(monkeypatch, demo_evaluation):
    before = _report_folders()

    def broken(content, path):
        path.write_bytes(b"half a workbook")
        raise OSError("disk full")

    monkeypatch.setattr(downloads, "write_excel", broken)
    with pytest.raises(OSError):
        downloads.report_bytes(demo_evaluation.report_content(), "xlsx", "model A")
    assert _report_folders() == before


def test_the_matrices_page_offers_each_report():
    at = _app()
    _no_exception(at)
    labels = [label for label, _, _ in downloads.REPORTS.values()]
    assert not {button.proto.label for button in at.get("download_button")} & set(labels)  # drawn once the section is opened
    at = _app(reports_open="1")
    _no_exception(at)
    assert [button.proto.label for button in at.get("download_button")][-3:] == labels


def test_a_download_never_holds_the_sweep_whether_or_not_the_chart_made_it(cli_reports):
    """As `tore evaluate --xlsx --html --cells` (no --sweep): the same file before and after the
    sweep chart made the evaluation's sweep."""
    from tore_engine.api import evaluate_pair
    from tore_engine.studio.evaluations import Evaluated

    pair = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json")
    evaluated = Evaluated("model A (simulated)", pair.reference, pair.prediction, pair.evaluation)
    before = downloads._made_when_clicked(evaluated, "html")()
    pair.evaluation.sweep()  # what the Matrices page's chart does
    assert pair.evaluation.report_content().sweep is not None
    after = downloads._made_when_clicked(evaluated, "html")()
    assert after == before and b"Minimum score sweep" not in after
    expected = (cli_reports / "report.html").read_text(encoding="utf-8").replace(DEFAULT_TITLE, downloads.report_title(evaluated.title))
    assert after.decode("utf-8") == expected
