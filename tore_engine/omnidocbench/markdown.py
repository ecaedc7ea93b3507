"""Reading per-page Markdown predictions into the elements the end-to-end score matches:
text paragraphs, display formulas, tables (as HTML) and code blocks, in page order.

This follows the official parser's rules (omnidocbench.md section 5.1) in simplified form:
HTML tables, Markdown pipe tables and LaTeX `tabular` environments become HTML tables;
`$$...$$` and `\\[...\\]` become display formulas; fenced code becomes code; everything else is
split into paragraphs on blank lines, with images removed. A page whose `<stem>.md` is missing
is an empty prediction.
"""

from __future__ import annotations

import html as html_escape
import re
from dataclasses import dataclass
from pathlib import Path

from tore_engine.errors import InputError
from tore_engine.inputs import read_text
from tore_engine.omnidocbench.reference import Reference
from tore_engine.inputs import inside


@dataclass(frozen=True)
class MarkdownElement:
    kind: str  # "text", "formula", "table" or "code"
    content: str  # paragraph text, LaTeX, table HTML, or code
    position: int  # index in page order (the prediction's reading order)


@dataclass
class MarkdownPredictions:
    """Markdown predictions aligned with a reference: elements per page, in reference order."""

    folder: str
    pages: list[list[MarkdownElement]]
    missing_pages: list[str]  # reference pages without a Markdown file (scored as empty)
    unknown_files: list[str]  # Markdown files matching no reference page


_DOCUMENT_FENCE = re.compile(r"^\s*```(?:markdown|md)[ \t]*\n(.*?)\n```\s*$", re.DOTALL | re.IGNORECASE)
_BLOCKS = re.compile(
    r"(?P<table><table\b.*?</table\s*>)"
    r"|(?P<tabular>\\begin\{tabular\}.*?\\end\{tabular\})"
    r"|\$\$(?P<dollars>.+?)\$\$"
    r"|\\\[(?P<brackets>.+?)\\\]"
    r"|^```[^\n]*\n(?P<code>.*?)^```[ \t]*$",
    re.DOTALL | re.IGNORECASE | re.MULTILINE,
)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|<img\b[^>]*>", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_PIPE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def parse_markdown(text: str) -> list[MarkdownElement]:
    """The elements of one page's Markdown, in order."""
    wrapped = _DOCUMENT_FENCE.match(text)
    if wrapped:
        text = wrapped.group(1)
    pieces: list[tuple[str, str]] = []
    cursor = 0
    for match in _BLOCKS.finditer(text):
        pieces.extend(_paragraphs(text[cursor : match.start()]))
        pieces.append(_block(match))
        cursor = match.end()
    pieces.extend(_paragraphs(text[cursor:]))
    return [MarkdownElement(kind, content, position) for position, (kind, content) in enumerate(pieces)]


def _block(match: re.Match) -> tuple[str, str]:
    if match.group("table"):
        return "table", match.group("table")
    if match.group("tabular"):
        return "table", tabular_to_html(match.group("tabular"))
    if match.group("code") is not None:
        return "code", match.group("code")
    formula = match.group("dollars") if match.group("dollars") is not None else match.group("brackets")
    return "formula", formula.strip()


def _paragraphs(segment: str) -> list[tuple[str, str]]:
    result = []
    for paragraph in _BLANK_LINE.split(_IMAGE.sub("", segment)):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        lines = paragraph.splitlines()
        if len(lines) >= 2 and _PIPE_SEPARATOR.match(lines[1]) and lines[0].count("|") >= 1:
            result.append(("table", pipe_table_to_html(lines)))
        else:
            result.append(("text", paragraph))
    return result


def _html_row(cells: list[str]) -> str:
    return "<tr>" + "".join(f"<td>{html_escape.escape(cell.strip())}</td>" for cell in cells) + "</tr>"


def pipe_table_to_html(lines: list[str]) -> str:
    """A Markdown pipe table as an HTML table (the separator row dropped)."""
    rows = []
    for index, line in enumerate(lines):
        if index == 1:
            continue
        line = line.strip()
        if line.startswith("|"):
            line = line[1:]
        if line.endswith("|"):
            line = line[:-1]
        rows.append(_html_row(line.split("|")))
    return "<table>" + "".join(rows) + "</table>"


_MULTICOLUMN = re.compile(r"\\multicolumn\{(\d+)\}\{[^}]*\}\{(.*)\}", re.DOTALL)
_LATEX_RULES = re.compile(r"\\(?:hline|toprule|midrule|bottomrule|cline\{[^}]*\})")


def tabular_to_html(latex: str) -> str:
    """A LaTeX `tabular` as an HTML table: rows on `\\\\`, cells on `&`, `\\multicolumn` as colspan."""
    body = re.sub(r"^\\begin\{tabular\}(\{[^}]*\})?|\\end\{tabular\}$", "", latex.strip())
    rows = []
    for row in re.split(r"\\\\", _LATEX_RULES.sub("", body)):
        if not row.strip():
            continue
        cells = []
        for cell in row.split("&"):
            spanned = _MULTICOLUMN.search(cell)
            if spanned:
                cells.append(f'<td colspan="{spanned.group(1)}">{html_escape.escape(spanned.group(2).strip())}</td>')
            else:
                cells.append(f"<td>{html_escape.escape(cell.strip())}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def load_markdown_predictions(folder: str | Path, reference: Reference) -> MarkdownPredictions:
    """Read `<image stem>.md` for every reference page from `folder`.

    The `*.md` entry of a page must be a regular file inside the folder: a folder, a pipe, a
    device or a symbolic-link loop of that name is refused with an error (never read, never waited
    on), rather than scored as an empty page, which would lower the scores without a word."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("is not a folder of Markdown files (one <image stem>.md per page)", file=str(folder))
    files = {path.stem: path.name for path in folder.glob("*.md")}
    pages, missing = [], []
    for page in reference.pages:
        name = files.get(page.stem)
        if name is None:
            missing.append(page.id)
            pages.append([])
        else:
            pages.append(parse_markdown(read_text(inside(name, folder, what="Markdown file"))))
    known = {page.stem for page in reference.pages}
    unknown = sorted(name for stem, name in files.items() if stem not in known)
    return MarkdownPredictions(str(folder), pages, missing, unknown)
