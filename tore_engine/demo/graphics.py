"""Vector pictures for the demo pages: bar, line and pie charts, flow diagrams and landscape
illustrations. Each function fills the area it is given (roughly: the tight box is whatever
`Ink` recorded) and uses a seeded `random.Random` for its data.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from tore_engine.demo.ink import BLACK, GREY, Box, Colour, FontSpec, Ink
from tore_engine.demo.text import TextMaker

PALETTE: tuple[Colour, ...] = (
    (0.16, 0.38, 0.62),
    (0.89, 0.47, 0.16),
    (0.30, 0.62, 0.33),
    (0.77, 0.24, 0.27),
    (0.55, 0.42, 0.70),
    (0.55, 0.55, 0.55),
)
GRID: Colour = (0.85, 0.85, 0.85)
TICK_FONT = FontSpec("helv", 6.5, GREY)
LABEL_FONT = FontSpec("helv", 7.5)


def _value_axis(ink: Ink, plot: Box, top_value: float, ticks: int = 4) -> None:
    """Horizontal grid lines with their values on the left, and the two axis lines."""
    x0, y0, x1, y1 = plot
    for i in range(ticks + 1):
        y = y1 - (y1 - y0) * i / ticks
        label = f"{top_value * i / ticks:.0f}"
        if i:
            ink.line([(x0, y), (x1, y)], GRID, 0.4)
        ink.text(x0 - 3 - TICK_FONT.width(label), y + 2.2, label, TICK_FONT)
    ink.line([(x0, y1), (x1, y1)], BLACK, 0.6)
    ink.line([(x0, y0), (x0, y1)], BLACK, 0.6)


def bar_chart(ink: Ink, area: Box, rng: random.Random, words: TextMaker) -> None:
    x0, y0, x1, y1 = area
    groups = rng.randint(3, 6)
    series = rng.randint(1, 3)
    values = [[rng.uniform(10, 95) for _ in range(series)] for _ in range(groups)]
    plot = (x0 + 22, y0 + 12, x1 - 4, y1 - 12)
    _value_axis(ink, plot, 100)
    slot = (plot[2] - plot[0]) / groups
    bar = slot * 0.7 / series
    for g, group in enumerate(values):
        left = plot[0] + g * slot + slot * 0.15
        for s, value in enumerate(group):
            top = plot[3] - (plot[3] - plot[1]) * value / 100
            ink.rect((left + s * bar, top, left + (s + 1) * bar, plot[3]), fill=PALETTE[s])
        label = str(2019 + g) if rng.random() < 0.5 else words.short_label()[:8]
        centre = plot[0] + (g + 0.5) * slot
        ink.text(centre - TICK_FONT.width(label) / 2, y1 - 3, label, TICK_FONT)
    ink.text(x0, y0 + 6, "Index (2019 = 100)", TICK_FONT)


def line_chart(ink: Ink, area: Box, rng: random.Random, words: TextMaker) -> None:
    x0, y0, x1, y1 = area
    points = rng.randint(6, 12)
    plot = (x0 + 22, y0 + 14, x1 - 4, y1 - 12)
    _value_axis(ink, plot, 80)
    for s in range(rng.randint(1, 3)):
        level = rng.uniform(15, 60)
        path = []
        for i in range(points):
            level = min(78.0, max(3.0, level + rng.gauss(0, 7)))
            x = plot[0] + (plot[2] - plot[0]) * i / (points - 1)
            path.append((x, plot[3] - (plot[3] - plot[1]) * level / 80))
        ink.line(path, PALETTE[s], 1.2)
        for point in path:
            ink.circle(point, 1.6, PALETTE[s])
        legend_x = plot[2] - 60
        ink.rect((legend_x, y0 + 1 + 8 * s, legend_x + 8, y0 + 5 + 8 * s), fill=PALETTE[s])
        ink.text(legend_x + 11, y0 + 6 + 8 * s, words.short_label(), TICK_FONT)
    first_year = rng.randint(2005, 2012)
    for i in range(0, points, 2):
        x = plot[0] + (plot[2] - plot[0]) * i / (points - 1)
        label = str(first_year + i)
        ink.text(x - TICK_FONT.width(label) / 2, y1 - 3, label, TICK_FONT)


def pie_chart(ink: Ink, area: Box, rng: random.Random, words: TextMaker) -> None:
    x0, y0, x1, y1 = area
    radius = min((x1 - x0) * 0.3, (y1 - y0) / 2 - 2)
    centre = (x0 + radius + 2, (y0 + y1) / 2)
    shares = [rng.uniform(1, 5) for _ in range(rng.randint(3, 6))]
    total = sum(shares)
    start = -90.0
    for i, share in enumerate(shares):
        sweep = 360 * share / total
        ink.sector(centre, radius, start, sweep, PALETTE[i])
        start += sweep
    legend_x = centre[0] + radius + 14
    for i, share in enumerate(shares):
        y = centre[1] - 6 * len(shares) + 12 * i
        ink.rect((legend_x, y, legend_x + 7, y + 7), fill=PALETTE[i])
        label = f"{words.short_label()} ({100 * share / total:.0f}%)"
        ink.text(legend_x + 11, y + 6.5, label, LABEL_FONT)


def flow_diagram(ink: Ink, area: Box, rng: random.Random, words: TextMaker) -> None:
    """Labelled boxes joined by arrows, in one row."""
    x0, y0, x1, y1 = area
    count = rng.randint(3, 4)
    gap = 18.0
    width = (x1 - x0 - gap * (count - 1)) / count
    height = min(40.0, (y1 - y0) * 0.6)
    top = (y0 + y1) / 2 - height / 2
    fill = PALETTE[rng.randrange(len(PALETTE))]
    red, green, blue = fill
    pale = (0.75 + 0.25 * red, 0.75 + 0.25 * green, 0.75 + 0.25 * blue)
    for i in range(count):
        left = x0 + i * (width + gap)
        ink.rect((left, top, left + width, top + height), fill=pale, stroke=fill, width=0.8)
        label = words.short_label()
        ink.text(left + (width - LABEL_FONT.width(label)) / 2, top + height / 2 + 2.5, label, LABEL_FONT)
        if i:
            tip = left - 1
            ink.line([(left - gap + 1, top + height / 2), (tip - 5, top + height / 2)], BLACK, 0.8)
            middle = top + height / 2
            ink.polygon([(tip, middle), (tip - 6, middle - 3), (tip - 6, middle + 3)], BLACK)
    note = words.short_label().lower() + " path"
    ink.text(x0, y1 - 2, note, TICK_FONT)


def illustration(ink: Ink, area: Box, rng: random.Random, words: TextMaker) -> None:
    """A flat landscape 'photo': sky, sun, hills, trees, a framed rectangle."""
    x0, y0, x1, y1 = area
    ink.rect(area, fill=(0.78, 0.88, 0.97))
    horizon = y0 + (y1 - y0) * rng.uniform(0.5, 0.65)
    sun = (x0 + (x1 - x0) * rng.uniform(0.6, 0.85), y0 + (y1 - y0) * 0.22)
    ink.circle(sun, (y1 - y0) * 0.09, (0.98, 0.84, 0.35))
    for shade in (0.55, 0.42):
        peaks = [(x0, horizon)]
        for i in range(1, 6):
            peaks.append((x0 + (x1 - x0) * i / 6, horizon - (y1 - y0) * rng.uniform(0.05, 0.3)))
        peaks.append((x1, horizon))
        ink.polygon(peaks, (shade, shade + 0.12, shade + 0.05))
    ink.rect((x0, horizon, x1, y1), fill=(0.45, 0.68, 0.36))
    for _ in range(rng.randint(3, 7)):
        tx = rng.uniform(x0 + 10, x1 - 10)
        ty = rng.uniform(horizon + 8, y1 - 4)
        size = rng.uniform(6, 14)
        ink.polygon([(tx, ty - 2 * size), (tx - size / 2, ty), (tx + size / 2, ty)], (0.18, 0.42, 0.22))
    ink.rect(area, stroke=(0.3, 0.3, 0.3), width=0.8)


PICTURES: dict[str, Callable[[Ink, Box, random.Random, TextMaker], None]] = {
    "bar-chart": bar_chart,
    "line-chart": line_chart,
    "pie-chart": pie_chart,
    "diagram": flow_diagram,
    "illustration": illustration,
}
CHARTS = ("bar-chart", "line-chart", "pie-chart")
