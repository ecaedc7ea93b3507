"""A page as a Plotly figure: the page image in one or more panes, styled boxes on top, and
pictures laid over a pane (a veil, the agreement categories); zoom shared by every pane.

The builders that know what a box means (`page_overlays` for layouts, the score panels' figures)
give each box its pane, legend group, colour, line and hover (`Box`); this module only lays them
out. Each pane is a subplot whose axes match the first pane's, so a drag zooms every pane at once
and a double-click resets them. The page image is a layout image under the boxes (one per pane,
in the page's own units, so it zooms with them). Boxes of one pane, group and style are one
scatter trace of closed outlines separated by gaps (one shape per box is quadratic,
docs/app.md#page-overlays), and invisible markers at the boxes' centres carry each box's hover. Every trace of a
legend group shares it, so a click on a legend entry shows that group alone in every pane
(`itemclick="toggleothers"`); the legend's entries are traces of their own in the group's colour.
Each trace's `meta` says what it draws (boxes, box hovers, lines,
line ends, legend), each image's `name` whether it is the page or a picture over it. Names, titles and hovers are plain text, escaped here
(`plain_for_plotly`). A page of more boxes than a screen can show draws the largest `MAX_BOXES`
and says so above the panes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from tore_engine.plots.plain_text import plain_for_plotly

ZOOM_HELP = "Drag to zoom (every pane together), double-click to reset; the mode bar pans and downloads the picture as a PNG."
SPACING = 12  # pixels between panes
TITLE_HEIGHT = 24  # pixels above a row of panes for its titles
AXIS_MARGIN = 34  # pixels left of the panes and below them for the axes' numbers
LEGEND_ROW = 22  # pixels of one row of the legend
LEGEND_CHARACTER, LEGEND_SYMBOL = 6.5, 46  # pixels of a legend label's character (about), of its symbol and gaps
MAX_PANE_HEIGHT = 1000
WIDTH = 760  # pixels a row of panes fills: the app's main column on a 1280-pixel screen
MAX_BOXES = 5_000  # boxes drawn in one chart; a page of more draws its largest (a million would be a message of gigabytes)
DASHES = {"solid": "solid", "dash": "dash", "dot": "dot"}
LEGEND_TITLE = "click: show it alone (again: all); double-click: hide it"


@dataclass(frozen=True)
class Box:
    """One box drawn on a pane: `(x1, y1, x2, y2)` in the page's frame (y down), its legend group
    and that group's colour, its line (width, a `DASHES` style, a colour of its own), its fill (an
    opacity, 0: an outline; a colour of its own), its hover (a title and lines of `name: value`, all
    plain text) and what a screen reader calls it."""

    pane: int
    box: tuple[float, float, float, float]
    group: str
    colour: str
    hover_title: str
    hover: dict[str, str]
    description: str
    line_width: float = 1.5
    dash: str = "solid"
    outline: str | None = None  # None: the group's colour
    fill: float = 0.18
    fill_colour: str | None = None  # None: the group's colour
    polygon: tuple[tuple[float, float], ...] | None = None  # a region drawn as its outline; `box` is its bounding box


@dataclass(frozen=True)
class Line:
    """A segment drawn on a pane from `(x1, y1)` to `(x2, y2)`, a dot at its end: a link between two
    boxes, in its legend group's colour and a `DASHES` style."""

    pane: int
    ends: tuple[float, float, float, float]
    group: str
    colour: str
    dash: str = "solid"


@dataclass(frozen=True)
class PaneLayout:
    """One pane: its title and the pictures laid over its page image (`data:` URIs of RGBA images
    the size of the page's frame), in drawing order."""

    title: str
    pictures: Sequence[str] = field(default_factory=tuple)


def _extent(value: float) -> float:
    return value if math.isfinite(value) and value > 0 else 1.0


def pane_size(width: float, height: float, columns: int, width_hint: int) -> tuple[int, int]:
    """A pane's size in pixels: the panes of a row fill `width_hint`, each at most `MAX_PANE_HEIGHT`
    high, in the page's proportions."""
    pane_width = (width_hint - AXIS_MARGIN - SPACING * (columns - 1)) / columns
    pane_height = pane_width * height / width
    if pane_height > MAX_PANE_HEIGHT:
        pane_width, pane_height = MAX_PANE_HEIGHT * width / height, MAX_PANE_HEIGHT
    return max(50, round(pane_width)), max(50, round(pane_height))


def _area(box: Box) -> float:
    x1, y1, x2, y2 = box.box
    area = abs((x2 - x1) * (y2 - y1))
    return area if math.isfinite(area) else 0.0


def rgba(colour: str, alpha: float) -> str:
    """`#rrggbb` with an opacity, as Plotly reads it."""
    red, green, blue = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha:g})"


def hover_html(title: str, lines: dict[str, str]) -> str:
    """A box's hover: its title in bold, then `name: value` lines, all escaped."""
    return "<br>".join([f"<b>{plain_for_plotly(title)}</b>", *(f"{plain_for_plotly(name)}: {plain_for_plotly(value)}" for name, value in lines.items())])


def _axis_name(letter: str, pane: int) -> str:
    return letter if pane == 0 else f"{letter}{pane + 1}"


def _box_traces(boxes: Sequence[Box]) -> list[dict[str, Any]]:
    """One outline trace and one hover-marker trace a (pane, group, style), the trace holding the
    largest box first, so that smaller boxes are drawn over larger ones."""
    styles: dict[tuple, list[Box]] = {}
    for box in sorted(boxes, key=_area, reverse=True):
        key = (box.pane, box.group, box.colour, box.line_width, box.dash, box.outline, box.fill, box.fill_colour)
        styles.setdefault(key, []).append(box)
    traces = []
    for (pane, group, colour, line_width, dash, outline, fill, fill_colour), members in styles.items():
        xs: list[float | None] = []
        ys: list[float | None] = []
        for box in members:
            x1, y1, x2, y2 = (float(value) for value in box.box)
            corners = box.polygon or ((x1, y1), (x2, y1), (x2, y2), (x1, y2))
            xs += [float(x) for x, _ in corners] + [float(corners[0][0]), None]
            ys += [float(y) for _, y in corners] + [float(corners[0][1]), None]
        axes = {"xaxis": _axis_name("x", pane), "yaxis": _axis_name("y", pane)}
        name = plain_for_plotly(group)
        filled = {"fill": "toself", "fillcolor": rgba(fill_colour or colour, fill)} if fill > 0 else {}
        traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", line=dict(color=outline or colour, width=line_width, dash=DASHES[dash]),
                           name=name, legendgroup=group, showlegend=False, hoverinfo="skip", meta="boxes", **filled, **axes))
        traces.append(dict(type="scatter",
            x=[(box.box[0] + box.box[2]) / 2 for box in members], y=[(box.box[1] + box.box[3]) / 2 for box in members],
            text=[hover_html(box.hover_title, box.hover) for box in members], hovertemplate="%{text}<extra></extra>",
            customdata=[box.description for box in members], mode="markers", marker=dict(size=12, opacity=0, color=outline or colour),
            name=name, legendgroup=group, showlegend=False, meta="box hovers", **axes))
    return traces


def _line_traces(lines: Sequence[Line]) -> list[dict[str, Any]]:
    """One trace of segments a (pane, group, colour, dash), and its ends' dots."""
    styles: dict[tuple, list[Line]] = {}
    for line in lines:
        styles.setdefault((line.pane, line.group, line.colour, line.dash), []).append(line)
    traces = []
    for (pane, group, colour, dash), members in styles.items():
        axes = {"xaxis": _axis_name("x", pane), "yaxis": _axis_name("y", pane)}
        xs = [value for line in members for value in (line.ends[0], line.ends[2], None)]
        ys = [value for line in members for value in (line.ends[1], line.ends[3], None)]
        traces.append(dict(type="scatter", x=xs, y=ys, mode="lines", line=dict(color=colour, width=2, dash=DASHES[dash]), name=plain_for_plotly(group),
                           legendgroup=group, showlegend=False, hoverinfo="skip", meta="lines", **axes))
        traces.append(dict(type="scatter", x=[line.ends[2] for line in members], y=[line.ends[3] for line in members], mode="markers",
                           marker=dict(size=6, color=colour), legendgroup=group, showlegend=False, hoverinfo="skip", meta="line ends",
                           **axes))
    return traces


def _legend_rows(names: list[str], width_hint: int) -> int:
    """Rows the legend's entries fill, and one for its title."""
    total = sum(len(name) * LEGEND_CHARACTER + LEGEND_SYMBOL for name in names)
    return max(1, math.ceil(total / max(1, width_hint - AXIS_MARGIN))) + 1


def capped(boxes: Sequence[Box], limit: int = MAX_BOXES) -> tuple[list[Box], str | None]:
    """At most `limit` boxes a pane, the largest, and a note saying how many were left out (None: none)."""
    by_pane: dict[int, list[Box]] = {}
    for box in boxes:
        by_pane.setdefault(box.pane, []).append(box)
    if all(len(members) <= limit for members in by_pane.values()):
        return list(boxes), None
    kept = [box for members in by_pane.values() for box in sorted(members, key=_area, reverse=True)[:limit]]
    return kept, f"{max(map(len, by_pane.values())):,} boxes on a pane: the {limit:,} largest of each pane drawn"


def page_chart(
    panes: Sequence[PaneLayout],
    boxes: Sequence[Box],
    width: float,
    height: float,
    image_uri: str | None,
    *,
    lines: Sequence[Line] = (),
    columns: int | None = None,
    width_hint: int = WIDTH,
    legend_title: str = LEGEND_TITLE,
    legend_extra: dict[str, str] | None = None,
    note: str | None = None,
) -> go.Figure:
    """The figure: `panes` side by side (`columns` a row; None: all in one row), each the page image
    (`image_uri`; None: a blank page) with its pictures, its boxes and its `lines`. `legend_extra`:
    entries the legend lists beside the marks' groups (name -> colour), for what the pictures paint.
    `note`: a line above the panes (what was left out)."""
    width, height = _extent(width), _extent(height)
    columns = columns or max(1, len(panes))
    rows = math.ceil(len(panes) / columns)
    pane_width, pane_height = pane_size(width, height, columns, width_hint)
    boxes, cap_note = capped(boxes)
    note = "; ".join(text for text in (note, cap_note) if text) or None
    traces = _box_traces(boxes) + _line_traces(lines)
    marks: list[Box | Line] = [*boxes, *lines]
    entries = {mark.group: (mark.colour, isinstance(mark, Line)) for mark in marks[::-1]}  # the first mark of a group names it
    entries = {group: entries[group] for group in dict.fromkeys(mark.group for mark in marks)}
    entries |= {name: (colour, False) for name, colour in (legend_extra or {}).items() if name not in entries}
    for name, (colour, is_line) in entries.items():
        symbol = dict(mode="lines", line=dict(color=colour, width=2)) if is_line else dict(mode="markers", marker=dict(symbol="square", size=12, color=colour))
        traces.append(dict(type="scatter", x=[None], y=[None], name=plain_for_plotly(name), legendgroup=name, hoverinfo="skip", meta="legend", **symbol))
    legend_shown = list(entries)
    legend_rows = _legend_rows(legend_shown, width_hint)
    top = TITLE_HEIGHT + (LEGEND_ROW if note else 0)
    bottom = AXIS_MARGIN + LEGEND_ROW * legend_rows
    plot_width = columns * pane_width + (columns - 1) * SPACING
    plot_height = rows * pane_height + (rows - 1) * (SPACING + TITLE_HEIGHT)
    layout: dict[str, Any] = {}
    annotations = []
    images = []
    for index, pane in enumerate(panes):
        row, column = divmod(index, columns)
        left = column * (pane_width + SPACING)
        upper = row * (pane_height + SPACING + TITLE_HEIGHT)
        x_domain = [left / plot_width, (left + pane_width) / plot_width]
        y_domain = [1 - (upper + pane_height) / plot_height, 1 - upper / plot_height]
        suffix = "" if index == 0 else str(index + 1)
        layout[f"xaxis{suffix}"] = dict(domain=x_domain, range=[0, width], anchor=_axis_name("y", index), showgrid=False, zeroline=False,
                                        tickfont=dict(size=9), **({} if index == 0 else {"matches": "x"}))
        layout[f"yaxis{suffix}"] = dict(domain=y_domain, range=[height, 0], anchor=_axis_name("x", index), showgrid=False, zeroline=False,
                                        tickfont=dict(size=9), showticklabels=column == 0, **({} if index == 0 else {"matches": "y"}))
        annotations.append(dict(text=plain_for_plotly(pane.title), xref="paper", yref="paper", x=x_domain[0], y=y_domain[1], xanchor="left",
                                yanchor="bottom", showarrow=False, font=dict(size=13)))
        place = dict(xref=_axis_name("x", index), yref=_axis_name("y", index), x=0, y=0, sizex=width, sizey=height, xanchor="left",
                     yanchor="top", sizing="stretch", layer="below")
        if image_uri is not None:
            images.append(dict(source=image_uri, name="page", **place))
        # plotly.js joins a subplot's images on (xref, x, sizex, yref, y, sizey): a second image at the
        # same place would not be drawn, so each picture is wider by a billionth of the page per layer
        images += [dict(source=picture, name="picture", **{**place, "sizex": width * (1 + 1e-9 * (order + 1))})
                   for order, picture in enumerate(pane.pictures)]
    if note:
        annotations.append(dict(text=plain_for_plotly(note), xref="paper", yref="paper", x=0, y=1, yshift=TITLE_HEIGHT, xanchor="left",
                                yanchor="bottom", showarrow=False, font=dict(size=12, color="#b00020")))
    return go.Figure(traces, layout=dict(
        **layout, images=images, annotations=annotations,
        width=plot_width + AXIS_MARGIN + 10, height=plot_height + top + bottom,
        margin=dict(l=AXIS_MARGIN, r=10, t=top, b=bottom, autoexpand=False),
        legend=dict(orientation="h", x=0, xanchor="left", y=0, yref="container", yanchor="bottom", itemclick="toggleothers",
                    itemdoubleclick="toggle", groupclick="togglegroup", title=dict(text=plain_for_plotly(legend_title), side="top")),
        dragmode="zoom", hovermode="closest", hoverdistance=40, plot_bgcolor="white", showlegend=True,
        meta={"chart": "page", "panes": [pane.title for pane in panes], **({"note": note} if note else {})},
    ))
