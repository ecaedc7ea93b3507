"""The four demo documents: an annual report, a two-column paper, a user manual and a
three-column newsletter (26 pages), each a style plus one recipe per page."""

from __future__ import annotations

from tore_engine.demo.compose import DocumentStyle, PageRecipe
from tore_engine.demo.ink import FontSpec

LETTER = (612, 792)
A4 = (595, 842)
NAVY = (0.10, 0.20, 0.42)

REPORT = DocumentStyle(
    name="report-a",
    paper=LETTER,
    margins=(72, 76, 72, 72),
    body=FontSpec("helv", 9.5),
    leading=12.5,
    align="left",
    heading=FontSpec("hebo", 12, NAVY),
    title=FontSpec("hebo", 24, NAVY),
    title_align="left",
    header=("Northwind Analytics", "Annual Report 2025"),
    footer=("northwind.example", "Page {n}"),
    numbered_headings=False,
    filler={"paragraph": 6, "heading": 1.3, "list": 0.6},
)
PAPER = DocumentStyle(
    name="paper-b",
    paper=A4,
    margins=(54, 72, 54, 64),
    body=FontSpec("tiro", 9.5),
    leading=11.5,
    align="justify",
    heading=FontSpec("tibo", 10.5),
    title=FontSpec("tibo", 17),
    title_align="centre",
    header=("Journal of Synthetic Document Studies 12 (2025)", "{n}"),
    footer=("", "Preprint, under review"),
    numbered_headings=True,
    filler={"paragraph": 6, "heading": 1.2, "formula": 0.8, "list": 0.3},
    opening="paper",
)
MANUAL = DocumentStyle(
    name="manual-c",
    paper=LETTER,
    margins=(80, 76, 72, 70),
    body=FontSpec("helv", 9.5),
    leading=13,
    align="left",
    heading=FontSpec("hebo", 11),
    title=FontSpec("hebo", 22),
    title_align="left",
    header=("", "X-200 Field Unit - User Guide"),
    footer=("Rev. C, 2025", "{n}"),
    numbered_headings=True,
    filler={"paragraph": 4, "heading": 1.4, "list": 2.0},
)
NEWSLETTER = DocumentStyle(
    name="newsletter-d",
    paper=A4,
    margins=(42, 66, 42, 56),
    body=FontSpec("tiro", 9),
    leading=11,
    align="justify",
    heading=FontSpec("hebo", 11, (0.55, 0.12, 0.12)),
    title=FontSpec("tibo", 30),
    title_align="left",
    header=("THE MERIDIAN GAZETTE", "Issue 7 - Spring 2025"),
    footer=("meridian.example", "page {n}"),
    numbered_headings=False,
    filler={"paragraph": 6, "heading": 1.5, "list": 0.4},
    gutter=12,
)

DOCUMENTS: list[tuple[DocumentStyle, list[PageRecipe]]] = [
    (REPORT, [
        PageRecipe(1, ("illustration",), opening=True),
        PageRecipe(2, ("bar-chart", "list"), footnotes=1),
        PageRecipe(1, ("table", "line-chart")),
        PageRecipe(2, ("pie-chart", "table")),
        PageRecipe(1, ("list", "bar-chart"), footnotes=2),
        PageRecipe(2, ("table", "list")),
        PageRecipe(1, ("line-chart",)),
    ]),
    (PAPER, [
        PageRecipe(2, ("formula",), opening=True, footnotes=1),
        PageRecipe(2, ("formula", "diagram", "formula")),
        PageRecipe(2, ("formula", "line-chart"), wide=("table",)),
        PageRecipe(2, ("bar-chart", "formula", "list"), footnotes=1),
        PageRecipe(2, ("table", "formula"), wide=("line-chart",)),
        PageRecipe(2, ("diagram", "formula")),
        PageRecipe(2, ("table", "list", "formula"), footnotes=1),
        PageRecipe(2, ("references-heading", "references")),
    ]),
    (MANUAL, [
        PageRecipe(1, ("diagram", "list"), opening=True),
        PageRecipe(1, ("list", "table"), footnotes=1),
        PageRecipe(1, ("illustration", "list")),
        PageRecipe(2, ("list", "diagram", "table")),
        PageRecipe(1, ("table", "list")),
        PageRecipe(1, ("list", "diagram")),
    ]),
    (NEWSLETTER, [
        PageRecipe(3, ("list",), opening=True, wide=("illustration",)),
        PageRecipe(3, ("bar-chart", "illustration")),
        PageRecipe(3, ("pie-chart", "list", "table")),
        PageRecipe(3, ("illustration", "line-chart"), footnotes=1),
        PageRecipe(2, ("table", "diagram", "list")),
    ]),
]
