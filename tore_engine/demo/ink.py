"""Drawing on a PDF page while recording the exact extent of everything drawn.

Ground truth must be the tight box of what was drawn, so every primitive goes through `Ink`,
which draws it with PyMuPDF and grows a bounding rectangle by the primitive's own extent: glyph
lines by the font's ascender and descender (the span box PyMuPDF itself reports), strokes by half
their width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import pymupdf

Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in PDF points, origin top-left
Colour = tuple[float, float, float]

BLACK: Colour = (0.0, 0.0, 0.0)
GREY: Colour = (0.45, 0.45, 0.45)


@dataclass(frozen=True)
class FontSpec:
    """A built-in PDF font (PyMuPDF short name: helv, hebo, tiro, tibo, tiit, cour, symb) and size."""

    name: str
    size: float
    colour: Colour = BLACK

    @property
    def ascent(self) -> float:
        return _font(self.name).ascender * self.size

    @property
    def descent(self) -> float:
        return -_font(self.name).descender * self.size

    @property
    def line_height(self) -> float:
        return self.ascent + self.descent

    def width(self, text: str) -> float:
        """Advance width; the built-in fonts have no kerning, so it is a sum over characters."""
        return sum(_advance(self.name, char) for char in text) * self.size


@lru_cache(maxsize=None)
def _font(name: str) -> pymupdf.Font:
    return pymupdf.Font(name)


@lru_cache(maxsize=None)
def _advance(font_name: str, char: str) -> float:
    """Per-character cache: PyMuPDF's text_length costs a call into MuPDF per character."""
    return _font(font_name).text_length(char, 1.0)


def union(boxes: list[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


@dataclass
class Element:
    """One ground-truth region with what the simulated models need to know about it.

    `kind` refines the label (a Picture is a bar chart, a diagram...), `column` is the column it
    sits in (-1 when it spans the page), `group` ties list items of one list and a caption to its
    float, and `lines` holds the text line boxes so that a paragraph can be split at a line.
    """

    label: str
    bbox: Box
    kind: str
    column: int = -1
    group: int | None = None
    lines: list[Box] = field(default_factory=list)


class Ink:
    """One element's drawing: a PyMuPDF shape plus the running union of the drawn extents."""

    def __init__(self, page: pymupdf.Page) -> None:
        self.shape = page.new_shape()
        self.boxes: list[Box] = []

    @property
    def bounds(self) -> Box:
        return union(self.boxes)

    def text(self, x: float, baseline: float, text: str, font: FontSpec) -> Box:
        """Write one line; return its span box (ascender to descender, advance width)."""
        self.shape.insert_text(
            (x, baseline), text, fontname=font.name, fontsize=font.size, color=font.colour
        )
        box = (x, baseline - font.ascent, x + font.width(text), baseline + font.descent)
        self.boxes.append(box)
        return box

    def rect(
        self, box: Box, fill: Colour | None = None, stroke: Colour | None = None, width: float = 0.5
    ) -> None:
        self.shape.draw_rect(pymupdf.Rect(box))
        self.shape.finish(color=stroke, fill=fill, width=width if stroke else 0)
        pad = width / 2 if stroke else 0.0
        self.boxes.append((box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad))

    def line(self, points: list[tuple[float, float]], colour: Colour = BLACK, width: float = 0.5) -> None:
        """A polyline with butt caps and round joins: it extends by at most half its width."""
        self.shape.draw_polyline(points)
        self.shape.finish(color=colour, width=width, lineJoin=1, closePath=False)
        self._grow_by_stroke(points, width)

    def polygon(self, points: list[tuple[float, float]], fill: Colour) -> None:
        self.shape.draw_polyline(points)
        self.shape.finish(color=None, fill=fill, width=0, closePath=True)
        self.boxes.append(union([(x, y, x, y) for x, y in points]))

    def circle(self, centre: tuple[float, float], radius: float, fill: Colour) -> None:
        self.shape.draw_circle(centre, radius)
        self.shape.finish(color=None, fill=fill, width=0)
        x, y = centre
        self.boxes.append((x - radius, y - radius, x + radius, y + radius))

    def sector(
        self, centre: tuple[float, float], radius: float, start_deg: float, sweep_deg: float, fill: Colour
    ) -> None:
        """A pie slice, as a polygon through arc points every degree or so: its extent is exact
        (a Bezier arc would bulge past the sampled points)."""
        cx, cy = centre
        steps = max(2, int(abs(sweep_deg)))
        arc = [
            (
                cx + radius * math.cos(math.radians(start_deg + sweep_deg * i / steps)),
                cy + radius * math.sin(math.radians(start_deg + sweep_deg * i / steps)),
            )
            for i in range(steps + 1)
        ]
        self.shape.draw_polyline([centre, *arc])
        self.shape.finish(color=(1, 1, 1), fill=fill, width=0.6, lineJoin=1, closePath=True)
        self._grow_by_stroke([centre, *arc], 0.6)

    def _grow_by_stroke(self, points: list[tuple[float, float]], width: float) -> None:
        pad = width / 2
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        horizontal = max(ys) - min(ys) < 1e-9
        vertical = max(xs) - min(xs) < 1e-9
        self.boxes.append(
            (
                min(xs) - (0 if horizontal else pad),
                min(ys) - (0 if vertical else pad),
                max(xs) + (0 if horizontal else pad),
                max(ys) + (0 if vertical else pad),
            )
        )

    def commit(self) -> None:
        self.shape.commit()
