"""An evaluation as one self-contained HTML file to send (`tore evaluate --html`): the app's
interactive heatmaps (built by `tore_engine.plots.heatmaps`, plotly.js inlined once, so the file
opens without network access) and the per-class, per-page and warnings tables.

Class names, page ids and messages come from the input unchecked, so everything written into the
page is `html.escape`d; inside the figures, Plotly draws labels through its own subset of HTML
(`<b>`, `<a href>`, `<span style>`), and the figure builders escape every label and title they are
given (`studio.plain_text.plain_for_plotly`), so they are passed here as plain text. Needs Plotly,
imported only here (the `app` extra).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command
from tore_engine.metrics.matrices import MatrixSet
from tore_engine.metrics.sweep import SWEEP_COLUMNS
from tore_engine.writers.content import ReportContent
from tore_engine.writers.matrix_form import heatmap_classes
from tore_engine.writers.summary import map_lines, pairing_note, sweep_line
from tore_engine.writers.tables import (
    SUPPORT_NOTE,
    UNDEFINED_NOTE,
    WARNING_COLUMNS,
    ap_note,
    warning_rows,
)

DEFAULT_TITLE = "TORE report"
PLOTLY_MISSING = f"the HTML report needs Plotly: install the 'app' extra ({install_command('app')})"
FIGURE_CONFIG = {"displaylogo": False}
DUAL_NOTE = (
    "Dual taxonomy: rows are the reference's classes, columns the prediction's, so the diagonal means nothing. "
    "Read the recall matrix row by row (where each reference class goes) and the precision matrix column by column "
    "(what each predicted class is made of); the zero-trimmed view keeps only the reference x prediction block."
)
TABLE_ROW_LIMIT = 5_000  # rows a table shows; beyond, the CSVs and report.json have them all
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f4f8; position: sticky; top: 0; }
.note { color: #555; }
"""
Formatter = Callable[[object], str]


def _ratio(value: object) -> str:
    return f"{value:.4f}"


def _pixels(value: object) -> str:
    return f"{value:,.3f}"


def _count(value: object) -> str:
    return f"{value:,}"


PER_CLASS_FORMATS: tuple[Formatter | None, ...] = (None, _ratio, _ratio, _ratio, _pixels, _ratio, _ratio)  # the last two: AP, AR@100
PAGE_FORMATS: tuple[Formatter | None, ...] = (None, _count, _ratio, _ratio, _ratio, _ratio, _ratio, _ratio)  # the last three: mAP's
SWEEP_FORMATS: tuple[Formatter | None, ...] = (_ratio, None, None, _ratio, _ratio, _ratio, None, _ratio, _ratio, _ratio, _ratio, None)
WARNING_FORMATS: tuple[Formatter | None, ...] = (None, _count, None, None)


def require_plotly() -> ModuleType:
    """The app's figure builders, or an `InputError` naming the extra to install (the CLI calls
    this before evaluating, so that a missing Plotly does not fail after the whole run)."""
    try:
        from tore_engine.plots import heatmaps as figures
    except ImportError:
        raise InputError(PLOTLY_MISSING) from None
    return figures


def _figures(figures: ModuleType, content: ReportContent, title: str) -> list[tuple[str, list]]:
    """(heading, figures) as the app shows them: the full matrix in single mode, the trimmed
    reference x prediction block in dual mode (where the diagonal means nothing), then the
    reduced view; beyond `HEATMAP_CLASS_LIMIT` classes, those with the most pixels (`heatmap_classes`)."""
    matrices = content.matrices
    single = matrices.mode == "single"
    view, label = ("full", "full") if single else ("trimmed", "zero-trimmed")

    def heatmaps(view_matrices: MatrixSet, view_label: str, outline: bool) -> list:
        shown, note = heatmap_classes(view_matrices)
        return [
            figures.matrix_heatmap(shown, metric, outline_diagonal=outline, title=f"{metric} ({view_label}, {matrices.mode} taxonomy): {title}", note=note)
            for metric in ("recall", "precision")
        ]

    return [
        (f"Matrices ({label})", heatmaps(getattr(matrices, view), label, single)),
        ("Reduced 2x2 (Background / Foreground)", heatmaps(matrices.reduced, "reduced 2x2", True)),
    ]


def _cell(value: object, formatter: Formatter | None) -> str:
    if value is None:
        return "<td></td>"
    if formatter is None:
        return f"<td>{html.escape(str(value))}</td>"
    return f'<td class="number">{formatter(value)}</td>'


def _table(headers: Sequence[str], rows: Sequence[tuple], formats: Sequence[Formatter | None], what: str) -> str:
    """A table of at most `TABLE_ROW_LIMIT` rows, saying how many were left out."""
    head = "".join(f"<th>{html.escape(header)}</th>" for header in headers)
    body = "\n".join("<tr>" + "".join(_cell(value, formatter) for value, formatter in zip(row, formats)) + "</tr>" for row in rows[:TABLE_ROW_LIMIT])
    cut = f'<p class="note">The first {TABLE_ROW_LIMIT:,} of {len(rows):,} {what}; the CSVs and report.json have them all.</p>' if len(rows) > TABLE_ROW_LIMIT else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>{cut}"


def _summary(content: ReportContent) -> str:
    matrices = content.matrices
    recall, precision = matrices.foreground
    return " ".join([
        *(f"{note}." for note in filter(None, [pairing_note(content.paired_pages, len(content.page_ids))])),
        f"{matrices.mode} taxonomy, {len(matrices.classes)} classes (Background included), {len(content.page_ids):,} pages, "
        f"{content.pixels:,} pixels. Foreground recall {recall:.4f}, precision {precision:.4f}.",
        *(f"{line}." for line in map_lines(content.map, content.map_reason)),
        *([sweep_line(content.sweep) + "."] if content.sweep is not None else []),
    ])


def _sections(content: ReportContent) -> list[str]:
    """The tables, each under its heading."""
    sections = []
    if content.matrices.per_class is not None:
        sections += ["<h2>Per class</h2>", _table(content.per_class_columns(), content.per_class_rows(), PER_CLASS_FORMATS, "classes"),
                     *(f'<p class="note">{html.escape(note)}</p>' for note in (SUPPORT_NOTE, UNDEFINED_NOTE, *([ap_note(content.map)] if content.map else [])))]  # unscored boxes: said above
    if content.sweep is not None:
        sections += ["<h2>Minimum score sweep</h2>", '<p class="note">Each minimum score as a run with --min-score: TORE\'s recall, '
                     "precision and F1 (best: the highest F1); beside them mAP's AP and the detection precision, recall and F1 at IoU 0.50.</p>",
                     _table(SWEEP_COLUMNS, content.sweep.rows(), SWEEP_FORMATS, "rows")]
    sections += ["<h2>Pages</h2>", '<p class="note">Per page: the reduced view\'s Foreground recall, precision and F1'
                 + (", and the page's mAP, mAP50 and mAP75 (blank: no reference box)" if content.map is not None else "") + ".</p>",
                 _table(content.page_columns(), content.page_rows(), PAGE_FORMATS, "pages")]
    rows = warning_rows(content.warnings)
    sections += ["<h2>Warnings</h2>", _table(WARNING_COLUMNS, rows, WARNING_FORMATS, "warnings") if rows else "<p>No warnings.</p>"]
    return sections


def report_html(content: ReportContent, title: str = DEFAULT_TITLE) -> str:
    """The whole page. Figure ids are numbered, so the same content gives the same bytes."""
    builders = require_plotly()
    from plotly.offline import get_plotlyjs

    figure_sections, number = [], 0
    for heading, figures in _figures(builders, content, title):
        divs = []
        for figure in figures:
            divs.append(figure.to_html(full_html=False, include_plotlyjs=False, config=FIGURE_CONFIG, div_id=f"figure-{number}"))
            number += 1
        figure_sections += [f"<h2>{html.escape(heading)}</h2>", f'<div class="figures">{"".join(divs)}</div>']
    name = html.escape(title)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{name}</title><style>{STYLE}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{name}</h1>",
        f"<p>{html.escape(_summary(content))}</p>",
        *([f'<p class="note">{html.escape(DUAL_NOTE)}</p>'] if content.matrices.mode == "dual" else []),
        *figure_sections,
        *_sections(content),
        "</body></html>",
        "",
    ])


def write_html(content: ReportContent, path: Path, title: str = DEFAULT_TITLE) -> None:
    """Write the report to `path` (the caller stages and moves it into place)."""
    path.write_text(report_html(content, title), encoding="utf-8")
