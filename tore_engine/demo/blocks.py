"""Blocks: the units the page composer stacks in a column. Each knows its height before it is
drawn, and drawing it returns its ground-truth `Element`s (a figure gives a Picture and a
Caption, a list one List-item per item).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import TypedDict, Unpack

import pymupdf

from tore_engine.demo.formulas import Row
from tore_engine.demo.graphics import PICTURES
from tore_engine.demo.ink import Element, FontSpec, Ink, union
from tore_engine.demo.tables import Table
from tore_engine.demo.text import TextMaker


def wrap(text: str, font: FontSpec, width: float, first_indent: float = 0.0) -> list[str]:
    """Greedy line breaking at spaces."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        available = width - (first_indent if not lines else 0.0)
        if current and font.width(candidate) > available:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


class TextOptions(TypedDict, total=False):
    """The optional layout fields of a `TextBlock`."""

    align: str
    indent: float
    space_before: float


@dataclass
class TextBlock:
    """Lines of one font: a paragraph, heading, title, caption or footnote (one Element)."""

    lines: list[str]
    font: FontSpec
    leading: float
    width: float
    label: str
    kind: str
    align: str = "left"  # left, justify, centre
    indent: float = 0.0  # first-line indent
    space_before: float = 0.0

    @classmethod
    def of(
        cls, text: str, font: FontSpec, leading: float, width: float, label: str, kind: str, **options: Unpack[TextOptions]
    ) -> "TextBlock":
        lines = wrap(text, font, width, options.get("indent", 0.0))
        return cls(lines, font, leading, width, label, kind, **options)

    @property
    def height(self) -> float:
        return (len(self.lines) - 1) * self.leading + self.font.line_height

    def shrink(self, max_height: float) -> "TextBlock | None":
        """The first lines that fit in `max_height` (at least two), as a paragraph cut by a column end."""
        count = int((max_height - self.font.line_height) // self.leading) + 1
        if count < 2:
            return None
        return replace(self, lines=self.lines[:count])

    def draw(self, page: pymupdf.Page, x: float, y: float, column: int, group: int) -> list[Element]:
        ink = Ink(page)
        line_boxes = []
        for i, line in enumerate(self.lines):
            baseline = y + self.font.ascent + i * self.leading
            left = x + (self.indent if i == 0 else 0.0)
            if self.align == "centre":
                left = x + (self.width - self.font.width(line)) / 2
            if self.align == "justify" and i < len(self.lines) - 1 and " " in line:
                line_boxes.append(self._justified(ink, line, left, x + self.width, baseline))
            else:
                line_boxes.append(ink.text(left, baseline, line, self.font))
        ink.commit()
        return [Element(self.label, ink.bounds, self.kind, column, group, line_boxes)]

    def _justified(self, ink: Ink, line: str, left: float, right: float, baseline: float) -> tuple:
        words = line.split()
        slack = right - left - sum(self.font.width(w) for w in words)
        gap = slack / (len(words) - 1)
        boxes = []
        for word in words:
            boxes.append(ink.text(left, baseline, word, self.font))
            left += self.font.width(word) + gap
        return union(boxes)


@dataclass
class ListBlock:
    """Bulleted or numbered items with a hanging indent; one List-item Element per item."""

    items: list[tuple[str, list[str]]]  # (marker, wrapped lines); marker "" draws a round bullet
    font: FontSpec
    leading: float
    width: float
    kind: str
    hang: float = 14.0
    space_before: float = 0.0

    @classmethod
    def of(
        cls, texts: list[str], markers: list[str], font: FontSpec, leading: float, width: float, kind: str
    ) -> "ListBlock":
        hang = 14.0 if kind == "bullet" else 18.0
        items = [(m, wrap(t, font, width - hang)) for m, t in zip(markers, texts)]
        return cls(items, font, leading, width, kind, hang)

    @property
    def item_gap(self) -> float:
        return self.leading * 0.35

    def _item_height(self, lines: list[str]) -> float:
        return (len(lines) - 1) * self.leading + self.font.line_height

    @property
    def height(self) -> float:
        items = sum(self._item_height(lines) for _, lines in self.items)
        return items + self.item_gap * (len(self.items) - 1)

    def shrink(self, max_height: float) -> "ListBlock | None":
        """The first whole items that fit."""
        for count in range(len(self.items) - 1, 0, -1):
            shorter = replace(self, items=self.items[:count])
            if shorter.height <= max_height:
                return shorter
        return None

    def draw(self, page: pymupdf.Page, x: float, y: float, column: int, group: int) -> list[Element]:
        elements = []
        for marker, lines in self.items:
            ink = Ink(page)
            first_baseline = y + self.font.ascent
            if marker:
                ink.text(x, first_baseline, marker, self.font)
            else:
                bullet_centre = (x + 4, first_baseline - self.font.size * 0.33)
                ink.circle(bullet_centre, self.font.size * 0.17, self.font.colour)
            boxes = [
                ink.text(x + self.hang, first_baseline + i * self.leading, line, self.font)
                for i, line in enumerate(lines)
            ]
            ink.commit()
            elements.append(Element("List-item", ink.bounds, self.kind, column, group, boxes))
            y += self._item_height(lines) + self.item_gap
        return elements


@dataclass
class FigureBlock:
    """A vector picture centred in the column, with its caption below."""

    kind: str  # a key of graphics.PICTURES
    picture_size: tuple[float, float]
    caption: TextBlock
    width: float
    seed: int
    gap: float = 6.0
    space_before: float = 0.0

    @property
    def height(self) -> float:
        return self.picture_size[1] + self.gap + self.caption.height

    def draw(self, page: pymupdf.Page, x: float, y: float, column: int, group: int) -> list[Element]:
        pw, ph = self.picture_size
        left = x + (self.width - pw) / 2
        ink = Ink(page)
        rng = random.Random(self.seed)
        PICTURES[self.kind](ink, (left, y, left + pw, y + ph), rng, TextMaker(rng))
        ink.commit()
        picture = Element("Picture", ink.bounds, self.kind, column, group)
        return [picture, *self.caption.draw(page, x, y + ph + self.gap, column, group)]


@dataclass
class TableBlock:
    """A table centred in the column, with its caption above."""

    table: Table
    caption: TextBlock
    width: float
    gap: float = 5.0
    space_before: float = 0.0

    @property
    def height(self) -> float:
        return self.caption.height + self.gap + self.table.height

    def draw(self, page: pymupdf.Page, x: float, y: float, column: int, group: int) -> list[Element]:
        caption = self.caption.draw(page, x, y, column, group)
        ink = Ink(page)
        self.table.draw(ink, x + (self.width - self.table.width) / 2, y + self.caption.height + self.gap)
        ink.commit()
        return [*caption, Element("Table", ink.bounds, f"table-{self.table.style}", column, group)]


@dataclass
class FormulaBlock:
    """A display formula centred in the column, its number flush right on the same baseline."""

    formula: Row
    number: str
    font: FontSpec
    width: float
    space_before: float = 0.0

    @property
    def height(self) -> float:
        _, ascent, descent = self.formula.metrics()
        return ascent + descent

    def draw(self, page: pymupdf.Page, x: float, y: float, column: int, group: int) -> list[Element]:
        width, ascent, _ = self.formula.metrics()
        ink = Ink(page)
        baseline = y + ascent
        number_left = x + self.width - self.font.width(self.number)
        left = min(x + (self.width - width) / 2, number_left - 12 - width)  # never touch the number
        self.formula.draw(ink, max(x, left), baseline)
        ink.text(number_left, baseline, self.number, self.font)
        ink.commit()
        return [Element("Formula", ink.bounds, "display", column, group)]


Block = TextBlock | ListBlock | FigureBlock | TableBlock | FormulaBlock
