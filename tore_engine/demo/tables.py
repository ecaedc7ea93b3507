"""Data tables: a text column and numeric columns, in one of three common rule styles."""

from __future__ import annotations

import random
from dataclasses import dataclass

from tore_engine.demo.ink import BLACK, FontSpec, Ink
from tore_engine.demo.text import TextMaker

STYLES = ("booktabs", "grid", "zebra")


@dataclass
class Table:
    """Cell strings (row 0 is the header), column widths and a rule style, ready to draw."""

    cells: list[list[str]]
    widths: list[float]
    style: str
    body: FontSpec
    header: FontSpec

    @property
    def row_height(self) -> float:
        return self.body.size * 1.7

    @property
    def height(self) -> float:
        return self.row_height * len(self.cells)

    @property
    def width(self) -> float:
        return sum(self.widths)

    @classmethod
    def random(cls, rng: random.Random, words: TextMaker, max_width: float, size: float) -> "Table":
        columns = rng.randint(3, 5)
        header = [words.short_label()] + [str(2021 + i) for i in range(columns - 2)] + ["Change"]
        cells = [header]
        for _ in range(rng.randint(4, 9)):
            numbers = [f"{rng.uniform(1, 999):,.1f}" for _ in range(columns - 2)]
            cells.append([words.heading(2), *numbers, f"{rng.uniform(-20, 30):+.1f}%"])
        body, bold = FontSpec("helv", size), FontSpec("hebo", size)
        natural = cls._natural_widths(cells, body, bold)
        while sum(natural) > max_width and len(natural) > 2:  # drop year columns until it fits
            cells = [row[:1] + row[2:] for row in cells]
            natural = cls._natural_widths(cells, body, bold)
        scale = min(max_width / sum(natural), 1.5)
        return cls(cells, [w * scale for w in natural], rng.choice(STYLES), body, bold)

    @staticmethod
    def _natural_widths(cells: list[list[str]], body: FontSpec, bold: FontSpec) -> list[float]:
        return [
            max((bold if r == 0 else body).width(row[c]) for r, row in enumerate(cells)) + 12
            for c in range(len(cells[0]))
        ]

    def draw(self, ink: Ink, x: float, y: float) -> None:
        """Draw with the top-left corner at (x, y): rules or fills, then the cell texts."""
        height, width, row = self.height, self.width, self.row_height
        if self.style == "zebra":
            ink.rect((x, y, x + width, y + row), fill=(0.82, 0.87, 0.93))
            for r in range(2, len(self.cells), 2):
                ink.rect((x, y + r * row, x + width, y + (r + 1) * row), fill=(0.94, 0.95, 0.97))
        elif self.style == "booktabs":
            for rule_y, weight in ((y, 1.0), (y + row, 0.5), (y + height, 1.0)):
                ink.line([(x, rule_y), (x + width, rule_y)], BLACK, weight)
        else:
            ink.rect((x, y, x + width, y + height), stroke=BLACK, width=0.5)
            for r in range(1, len(self.cells)):
                ink.line([(x, y + r * row), (x + width, y + r * row)], BLACK, 0.4)
            left = x
            for w in self.widths[:-1]:
                left += w
                ink.line([(left, y), (left, y + height)], BLACK, 0.4)
        for r, cells in enumerate(self.cells):
            font = self.header if r == 0 else self.body
            baseline = y + r * row + row / 2 + font.size * 0.35
            left = x
            for c, (text, w) in enumerate(zip(cells, self.widths)):
                if c == 0:
                    ink.text(left + 5, baseline, text, font)
                else:
                    ink.text(left + w - 5 - font.width(text), baseline, text, font)
                left += w
