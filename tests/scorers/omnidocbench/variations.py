"""Held-out variations of the demo's Markdown predictions (issue 23), generated at test time from the
demo files: merged and split paragraphs, reordered blocks, dropped tables, pipe against HTML tables,
LaTeX tables, inline against display formulas, changed LaTeX delimiters, hallucinated text, empty and
missing pages, alternative file names. `tests/omnidocbench/variation_results.json` holds what the
official evaluator gives on each (see its `_source`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tore_engine.scorers.omnidocbench import soup

_TABLE = re.compile(r"<table.*?</table>", re.DOTALL)


def _paragraphs(text: str) -> list[str]:
    return text.split("\n\n")


def _is_text(paragraph: str) -> bool:
    stripped = paragraph.strip()
    return bool(stripped) and not stripped.startswith(("<", "\\[", "$$", "|", "#", "!"))


def merged_paragraphs(text: str) -> str:
    """Each text paragraph joined to the next text paragraph (pairs)."""
    paragraphs, out, index = _paragraphs(text), [], 0
    while index < len(paragraphs):
        if index + 1 < len(paragraphs) and _is_text(paragraphs[index]) and _is_text(paragraphs[index + 1]):
            out.append(paragraphs[index].rstrip() + " " + paragraphs[index + 1].lstrip())
            index += 2
        else:
            out.append(paragraphs[index])
            index += 1
    return "\n\n".join(out)


def split_paragraphs(text: str) -> str:
    """Text paragraphs over 80 characters cut in two at the space nearest their middle."""
    out = []
    for paragraph in _paragraphs(text):
        middle = paragraph.find(" ", len(paragraph) // 2)
        if _is_text(paragraph) and len(paragraph) > 80 and middle > 0:
            out += [paragraph[:middle], paragraph[middle + 1:]]
        else:
            out.append(paragraph)
    return "\n\n".join(out)


def reordered_blocks(text: str) -> str:
    """Paragraphs in reverse order."""
    return "\n\n".join(reversed(_paragraphs(text)))


def dropped_tables(text: str) -> str:
    return _TABLE.sub("", text)


def _rows(table: str) -> list[list[str]]:
    return [[" ".join(cell.get_text(" ").split()) for cell in row.find_all(("td", "th"))]
            for row in soup.parse(table).find_all("tr")]


def pipe_tables(text: str) -> str:
    """HTML tables written as Markdown pipe tables (spans dropped)."""
    def pipe(match: re.Match) -> str:
        rows = [row for row in _rows(match.group(0)) if row]
        if not rows:
            return ""
        lines = ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]]) + "\n"
    return _TABLE.sub(pipe, text)


def latex_tables(text: str) -> str:
    """HTML tables written as LaTeX tabulars."""
    def tabular(match: re.Match) -> str:
        rows = [row for row in _rows(match.group(0)) if row]
        width = max((len(row) for row in rows), default=1)
        body = " \\\\\n".join(" & ".join(row) for row in rows)
        return f"\\begin{{tabular}}{{{'c' * width}}}\n{body}\n\\end{{tabular}}"
    return _TABLE.sub(tabular, text)


def html_tables(text: str) -> str:
    """Runs of pipe-table lines written as HTML tables."""
    def html(match: re.Match) -> str:
        lines = [line for line in match.group(0).strip().split("\n") if not re.fullmatch(r"[|\s:-]+", line)]
        rows = ["<tr>" + "".join(f"<td>{cell.strip()}</td>" for cell in line.strip().strip("|").split("|")) + "</tr>"
                for line in lines]
        return "<table>" + "".join(rows) + "</table>\n"
    return re.sub(r"(?:^\|.*\|[ \t]*\n?)+", html, text, flags=re.MULTILINE)


def inline_display_swapped(text: str) -> str:
    """Display formulas written inline, inline formulas written as display formulas."""
    text = re.sub(r"\\\((.*?)\\\)", lambda m: "\0" + m.group(1) + "\1", text, flags=re.DOTALL)
    text = re.sub(r"\\\[(.*?)\\\]", lambda m: "$" + " ".join(m.group(1).split()) + "$", text, flags=re.DOTALL)
    return text.replace("\0", "$$").replace("\1", "$$")


def dollar_delimiters(text: str) -> str:
    """`\\[..\\]` as `$$..$$` and `\\(..\\)` as `$..$`."""
    text = re.sub(r"\\\[(.*?)\\\]", lambda m: "$$" + m.group(1) + "$$", text, flags=re.DOTALL)
    return re.sub(r"\\\((.*?)\\\)", lambda m: "$" + m.group(1) + "$", text, flags=re.DOTALL)


def hallucinated(text: str) -> str:
    """A made-up paragraph after the first one and a made-up table at the end."""
    paragraphs = _paragraphs(text)
    invented = "This sentence was never on the page: the model invented it, with 42 numbers and a formula $x^2+1$."
    table = "<table><tr><td>made up</td><td>7</td></tr></table>"
    return "\n\n".join([*paragraphs[:1], invented, *paragraphs[1:], table])


TEXT_VARIATIONS: dict[str, Callable[[str], str]] = {
    "merged_paragraphs": merged_paragraphs, "split_paragraphs": split_paragraphs, "reordered_blocks": reordered_blocks,
    "dropped_tables": dropped_tables, "pipe_tables": pipe_tables, "latex_tables": latex_tables, "html_tables": html_tables,
    "inline_display_swapped": inline_display_swapped, "dollar_delimiters": dollar_delimiters, "hallucinated": hallucinated,
}
VARIATIONS = (*TEXT_VARIATIONS, "empty_and_missing_pages", "alternative_file_names")


def write_variation(name: str, demo: Path, folder: Path) -> Path:
    """The demo predictions in `demo` written to `folder` with variation `name` applied."""
    folder.mkdir(parents=True, exist_ok=True)
    for index, source in enumerate(sorted(demo.glob("*.md"))):
        text = source.read_text(encoding="utf-8")
        target = folder / source.name
        if name in TEXT_VARIATIONS:
            text = TEXT_VARIATIONS[name](text)
        elif name == "empty_and_missing_pages":
            if index % 6 == 1:
                continue  # missing: no file
            if index % 6 == 4:
                text = ""
        elif name == "alternative_file_names":
            stem = source.name[:-3]
            target = folder / [f"{stem}.md", stem.replace(".pdf", "") + ".mmd", stem.replace(".pdf", "") + ".md",
                               f"{stem}.jpg.md"][index % 4]
        target.write_text(text, encoding="utf-8")
    return folder
