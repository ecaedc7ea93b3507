"""Page composition: running headers and footers, an opening band (title, authors, abstract),
full-width floats, then blocks flowed into one to three columns, with footnotes at the foot of
the first column.

Pages are composed independently (each from its own seed): the filler text does not continue
across pages, which a layout ground truth does not need.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Unpack

import pymupdf

from tore_engine.demo.blocks import (
    Block,
    FigureBlock,
    FormulaBlock,
    ListBlock,
    TableBlock,
    TextBlock,
    TextOptions,
)
from tore_engine.demo.formulas import FormulaMaker
from tore_engine.demo.ink import GREY, Element, FontSpec, Ink
from tore_engine.demo.tables import Table
from tore_engine.demo.text import TextMaker

FLOATS = ("bar-chart", "line-chart", "pie-chart", "diagram", "illustration", "table", "formula")
SHRINKABLE = (TextBlock, ListBlock)
FOOTNOTE_GAP = 3.0
FOOTNOTE_MARKS = "\u00b9\u00b2\u00b3"  # superscript one, two, three (in the built-in fonts' encoding)


@dataclass(frozen=True)
class DocumentStyle:
    """How one document looks: paper, margins, fonts, running heads, and what its pages contain."""

    name: str
    paper: tuple[int, int]
    margins: tuple[float, float, float, float]  # left, top, right, bottom of the body area
    body: FontSpec
    leading: float
    align: str
    heading: FontSpec
    title: FontSpec
    title_align: str
    header: tuple[str, str]  # left and right running head; "{n}" becomes the page number
    footer: tuple[str, str]
    numbered_headings: bool
    filler: dict[str, float]  # weights of the block kinds drawn at random between required ones
    gutter: float = 18.0
    opening: str = "report"  # report (title + subtitle) or paper (title, authors, abstract)


@dataclass(frozen=True)
class PageRecipe:
    columns: int
    required: tuple[str, ...] = ()  # block kinds the page must try to hold
    wide: tuple[str, ...] = ()  # floats spanning all columns, under the opening band
    opening: bool = False
    footnotes: int = 0


@dataclass
class ComposedPage:
    id: str
    width: int
    height: int
    page_no: int
    columns: int
    elements: list[Element] = field(default_factory=list)


class BlockMaker:
    """Makes the blocks of one document; numbers its sections, figures, tables and equations."""

    def __init__(self, style: DocumentStyle) -> None:
        self.style = style
        self.counts = {"section": 0, "subsection": 0, "figure": 0, "table": 0, "equation": 0}

    def _next(self, counter: str) -> int:
        self.counts[counter] += 1
        return self.counts[counter]

    def text(self, text: str, font: FontSpec, width: float, label: str, kind: str, **options: Unpack[TextOptions]) -> TextBlock:
        return TextBlock.of(text, font, font.size * 1.22, width, label, kind, **options)

    def paragraph(self, rng: random.Random, width: float) -> TextBlock:
        style = self.style
        indent = 10.0 if style.align == "justify" else 0.0
        return TextBlock.of(TextMaker(rng).paragraph(rng.randint(3, 7)), style.body, style.leading,
                            width, "Text", "paragraph", align=style.align, indent=indent)

    def heading(self, rng: random.Random, width: float) -> TextBlock:
        text = TextMaker(rng).heading()
        if self.style.numbered_headings:
            if self.counts["section"] == 0 or rng.random() < 0.4:
                self.counts["subsection"] = 0
                text = f"{self._next('section')} {text}"
            else:
                text = f"{self.counts['section']}.{self._next('subsection')} {text}"
        return self.text(text, self.style.heading, width, "Section-header", "heading",
                         space_before=self.style.leading * 0.8)

    def bullet_list(self, rng: random.Random, width: float) -> ListBlock:
        words = TextMaker(rng)
        count = rng.randint(3, 6)
        texts = [words.paragraph(rng.randint(1, 2)) for _ in range(count)]
        numbered = rng.random() < 0.4
        markers = [f"{i + 1}." for i in range(count)] if numbered else [""] * count
        return ListBlock.of(texts, markers, self.style.body, self.style.leading, width,
                            "numbered" if numbered else "bullet")

    def references(self, rng: random.Random, width: float) -> ListBlock:
        words = TextMaker(rng)
        texts = [
            f"{words.person()}, {words.person()}. {words.title()}. {words.title()} "
            f"{rng.randint(3, 40)} ({rng.randint(1995, 2024)}) {rng.randint(1, 300)}-{rng.randint(301, 600)}."
            for _ in range(rng.randint(6, 10))
        ]
        font = FontSpec(self.style.body.name, self.style.body.size * 0.9)
        return ListBlock.of(texts, [f"[{i + 1}]" for i in range(len(texts))], font, font.size * 1.2,
                            width, "reference")

    def caption(self, rng: random.Random, prefix: str, width: float) -> TextBlock:
        font = FontSpec("tiit" if self.style.body.name == "tiro" else "helv", self.style.body.size * 0.85)
        return self.text(f"{prefix}: {TextMaker(rng).sentence()}", font, width, "Caption", "caption")

    def figure(self, rng: random.Random, kind: str, width: float) -> FigureBlock:
        picture_width = min(width, 340.0)
        aspect = {"diagram": 0.32, "pie-chart": 0.45, "illustration": 0.58}.get(kind, 0.6)
        caption = self.caption(rng, f"Figure {self._next('figure')}", width)
        return FigureBlock(kind, (picture_width, picture_width * aspect), caption, width,
                           rng.randrange(2**31), space_before=4.0)

    def table(self, rng: random.Random, width: float) -> TableBlock:
        table = Table.random(rng, TextMaker(rng), width, self.style.body.size * 0.85)
        caption = self.caption(rng, f"Table {self._next('table')}", width)
        return TableBlock(table, caption, width, space_before=4.0)

    def formula(self, rng: random.Random, width: float) -> FormulaBlock:
        formula = FormulaMaker(rng, self.style.body.size * 1.1).make()
        return FormulaBlock(formula, f"({self._next('equation')})", self.style.body, width, space_before=3.0)

    def footnote(self, rng: random.Random, mark: str, width: float) -> TextBlock:
        font = FontSpec(self.style.body.name, self.style.body.size * 0.78)
        return self.text(f"{mark} {TextMaker(rng).paragraph(rng.randint(1, 2))}", font, width,
                         "Footnote", "footnote")

    def make(self, kind: str, rng: random.Random, width: float) -> Block:
        if kind == "paragraph":
            return self.paragraph(rng, width)
        if kind == "heading":
            return self.heading(rng, width)
        if kind == "list":
            return self.bullet_list(rng, width)
        if kind == "references-heading":
            return self.text("References", self.style.heading, width, "Section-header", "heading",
                             space_before=self.style.leading * 0.8)
        if kind == "references":
            return self.references(rng, width)
        if kind == "table":
            return self.table(rng, width)
        if kind == "formula":
            return self.formula(rng, width)
        return self.figure(rng, kind, width)


class PageComposer:
    """Draws one page of a document and returns its ground truth."""

    def __init__(
        self, style: DocumentStyle, maker: BlockMaker, page: pymupdf.Page, rng: random.Random
    ) -> None:
        self.style, self.maker, self.page, self.rng = style, maker, page, rng
        width, height = style.paper
        left, top, right, bottom = style.margins
        self.left, self.right = left, width - right
        self.top, self.bottom = top, height - bottom
        self.elements: list[Element] = []
        self.group = 0

    def _place(self, block: Block, x: float, y: float, column: int) -> float:
        self.group += 1
        self.elements += block.draw(self.page, x, y, column, self.group)
        return y + block.height

    def compose(self, recipe: PageRecipe, number: int) -> list[Element]:
        """Draw the page; the elements come out in reading order."""
        if not recipe.opening:
            self._running_head("Page-header", self.style.header, self.top - 22, number)
            rule = Ink(self.page)  # a rule under the header: drawn, but part of no box
            rule.line([(self.left, self.top - 16), (self.right, self.top - 16)], GREY, 0.5)
            rule.commit()
        y = self.top
        if recipe.opening:
            y = self._opening(y) + self.style.leading * 1.5
        full = self.right - self.left
        for kind in recipe.wide:
            wide = self.maker.make(kind, self.rng, full)
            y = self._place(wide, self.left, y, -1) + self.style.leading * 1.5
        width = (full - self.style.gutter * (recipe.columns - 1)) / recipe.columns
        notes = [self.maker.footnote(self.rng, FOOTNOTE_MARKS[i], width) for i in range(recipe.footnotes)]
        notes_top = self.bottom - sum(n.height + FOOTNOTE_GAP for n in notes) + FOOTNOTE_GAP
        queue = list(recipe.required)
        for column in range(recipe.columns):
            x = self.left + column * (width + self.style.gutter)
            if column == 0 and notes:
                self._fill_column(queue, x, y, notes_top - 5 - self.style.leading, width, column)
                self._footnotes(notes, x, notes_top)
            else:
                self._fill_column(queue, x, y, self.bottom, width, column)
        self._running_head("Page-footer", self.style.footer, self.bottom + 26, number)
        return self.elements

    def _running_head(self, label: str, texts: tuple[str, str], baseline: float, number: int) -> None:
        """The left and right parts of a running header or footer, one element each."""
        font = FontSpec("helv", 8, GREY)
        for text, align in zip(texts, ("left", "right")):
            if not text:
                continue
            text = text.format(n=number)
            x = self.left if align == "left" else self.right - font.width(text)
            ink = Ink(self.page)
            ink.text(x, baseline, text, font)
            ink.commit()
            self.elements.append(Element(label, ink.bounds, align, -1, None))

    def _opening(self, y: float) -> float:
        """The title band of a document's first page; returns its bottom."""
        words, full = TextMaker(self.rng), self.right - self.left
        title = self.maker.text(words.title(), self.style.title, full, "Title", "title",
                                align=self.style.title_align)
        y = self._place(title, self.left, y, -1)
        if self.style.opening == "paper":
            return self._paper_front_matter(words, y)
        subtitle = self.maker.text(words.sentence(), FontSpec("helv", 12, GREY), full, "Text", "subtitle",
                                   align=self.style.title_align)
        return self._place(subtitle, self.left, y + 8, -1)

    def _paper_front_matter(self, words: TextMaker, y: float) -> float:
        """Authors, affiliation and an indented abstract under a paper's title."""
        full = self.right - self.left
        authors = ", ".join(words.person() for _ in range(self.rng.randint(2, 4)))
        affiliation = f"Department of {words.short_label()} Studies, {words.short_label()} Institute"
        front = [
            (authors, FontSpec("tiro", 11), "Text", "authors", 10),
            (affiliation, FontSpec("tiit", 9), "Text", "affiliation", 10),
            ("Abstract", FontSpec("tibo", 10), "Section-header", "heading", 14),
        ]
        for text, font, label, kind, space in front:
            block = self.maker.text(text, font, full, label, kind, align="centre")
            y = self._place(block, self.left, y + space, -1)
        abstract = self.maker.text(words.paragraph(self.rng.randint(5, 7)), FontSpec("tiro", 9), full - 60,
                                   "Text", "abstract", align="justify")
        return self._place(abstract, self.left + 30, y + 6, -1)

    def _footnotes(self, notes: list[TextBlock], x: float, top: float) -> None:
        """The footnotes from `top` down to the foot of the column, under a short rule."""
        rule = Ink(self.page)
        rule.line([(x, top - 5), (x + 50, top - 5)], (0, 0, 0), 0.4)
        rule.commit()
        for note in notes:
            top = self._place(note, x, top, 0) + FOOTNOTE_GAP

    def _fill_column(
        self, queue: list[str], x: float, top: float, bottom: float, width: float, column: int
    ) -> None:
        """Stack blocks until the column is full; a paragraph or list cut by the column end is shortened."""
        y, previous = top, None
        while bottom - y > self.style.leading * 2:
            kind = self._next_kind(queue, previous)
            numbers = dict(self.maker.counts)  # a block that is not placed gives its number back
            block = self.maker.make(kind, self.rng, width)
            gap = 0.0 if y == top else self.style.leading * 0.6 + block.space_before
            room = bottom - y - gap
            orphan = room < block.height + self.style.leading * 4  # no room for text under it
            if isinstance(block, TextBlock) and block.kind == "heading" and orphan:
                self.maker.counts = numbers
                kind, block = "paragraph", self.maker.paragraph(self.rng, width)
            if block.height <= room:
                y = self._place(block, x, y + gap, column)
                if queue and kind == queue[0]:
                    queue.pop(0)
                previous = kind
                continue
            self.maker.counts = numbers
            if kind in FLOATS and y == top:
                if queue and kind == queue[0]:
                    queue.pop(0)  # taller than a whole column: give up on it
                continue
            if not isinstance(block, SHRINKABLE):
                block = self.maker.paragraph(self.rng, width)
            shorter = block.shrink(room)
            if shorter is not None:
                self._place(shorter, x, y + gap, column)
            return

    def _next_kind(self, queue: list[str], previous: str | None) -> str:
        if previous in ("heading", "references-heading"):
            return queue[0] if queue and queue[0] in ("list", "references") else "paragraph"
        if queue and previous is not None and self.rng.random() < 0.55:
            return queue[0]
        kinds = list(self.style.filler)
        return self.rng.choices(kinds, weights=[self.style.filler[k] for k in kinds])[0]
