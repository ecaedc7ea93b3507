"""The reports `tore evaluate` writes on request (`--xlsx`, `--html`, `--cells`), as downloads of
the evaluation shown.

Each file is made only when its button is clicked (Streamlit runs the button's callable then, on
its own thread): the workbook of a 100,000-page evaluation takes a while, and most views never ask
for it. The writers write into a temporary folder that is removed as soon as the bytes are read,
whatever happens. File names carry the evaluation's title (the model's name, and the document when
one is chosen), reduced to letters, digits, `.`, `-` and `_`. They never hold the sweep of minimum
scores, as `tore evaluate` without `--sweep`: whether the app had drawn its chart before the click
must not change a file.
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from tore_engine.studio import sections, state
from tore_engine.studio.evaluations import Evaluated
from tore_engine.writers.cells import write_cells
from tore_engine.writers.content import ReportContent
from tore_engine.writers.excel import write_excel
from tore_engine.writers.html import DEFAULT_TITLE, write_html
from tore_engine.writers.outputs import REPORT_FILES

REPORTS_OPEN = state.SECTION("reports")  # the section of the downloads (session state and URL)
MAX_STEM = 80  # characters of a file name's part taken from the title
# report -> (button label, MIME type, what it holds)
REPORTS = {
    "xlsx": ("Excel workbook", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
             "coloured matrices, pages, classes and warnings (tore evaluate --xlsx)"),
    "html": ("HTML report", "text/html", "one self-contained page with the heatmaps and tables (tore evaluate --html)"),
    "cells": ("Cells (CSV)", "text/csv", "every page's pixels in every cell, what the drill-down reads (tore evaluate --cells)"),
}


def file_stem(text: str) -> str:
    """`text` as a safe part of a file name: ASCII letters, digits, `.`, `-`; every other run of
    characters one `_`; no leading or trailing separator (so no hidden file); never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    stem = re.sub(r"[^A-Za-z0-9.-]+", "_", ascii_text).strip("._-")[:MAX_STEM].rstrip("._-")
    return stem or "evaluation"


def file_name(title: str, report: str) -> str:
    """The download's name: `tore_<title>_<the file tore evaluate writes>`, e.g.
    `tore_model_A_simulated_report.xlsx`."""
    return f"tore_{file_stem(title)}_{REPORT_FILES[report]}"


def report_title(title: str) -> str:
    """The HTML report's title: the CLI's, with the evaluation's title after it."""
    return f"{DEFAULT_TITLE}: {title}"


def report_bytes(content: ReportContent, report: str, title: str) -> bytes:
    """One report's file as `tore evaluate` writes it (the HTML report titled `report_title`)."""
    writers: dict[str, Callable[[ReportContent, Path], None]] = {
        "xlsx": write_excel, "html": partial(write_html, title=report_title(title)), "cells": write_cells}
    with tempfile.TemporaryDirectory(prefix="tore_studio_report_") as folder:
        path = Path(folder) / REPORT_FILES[report]
        writers[report](content, path)
        return path.read_bytes()


def _made_when_clicked(evaluated: Evaluated, report: str) -> Callable[[], bytes]:
    return lambda: report_bytes(replace(evaluated.evaluation.report_content(), sweep=None), report, evaluated.title)


def report_downloads(evaluated: Evaluated, key: str) -> None:
    """One download button a report; each file is made when its button is clicked."""
    section = sections.opened("Reports: the files `tore evaluate` writes", REPORTS_OPEN, icon=":material/download:")
    if section is None:
        return
    section.caption("With --xlsx, --html and --cells, of the evaluation shown (of the chosen document's pages only, when one is "
                    "chosen). Each is made when its button is clicked, which takes a while for a large evaluation.")
    for column, (report, (label, mime, holds)) in zip(section.columns(len(REPORTS)), REPORTS.items()):
        column.download_button(label, _made_when_clicked(evaluated, report), file_name=file_name(evaluated.title, report), mime=mime,
                               key=state.DOWNLOAD(report, key), help=holds, on_click="ignore", icon=":material/download:", width="stretch")
