"""A page as a Vega-Lite chart: the page image in one or more panes, styled boxes on top, and
pictures laid over a pane (a veil, the agreement categories); zoom shared by every pane.

Why Vega-Lite and not Plotly: a browser runs plotly.js's 4.7 MB script for about 0.7 s, one
main-thread task, before it draws anything; the app's other charts are Vega-Lite already
(`vega_charts`), so a page drawn with it costs a new tab no second chart library.

The builders that know what a box means (`page_overlays` for layouts, the score panels' figures)
give each box its pane, legend group, colour, line and hover (`Box`); this module only lays them
out. The panes are the cells of one facet over shared scales, so ctrl + scroll (or a pinch) zooms
every pane at once, a drag pans, a double-click resets. A click on a legend entry shows that group
alone (shift + click: more), in every pane. Names, titles and hovers travel as data: Vega draws them
as SVG text and its tooltip escapes them, and no expression reads them (pane titles are looked up
by index in a parameter).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Spec = dict[str, Any]
ZOOM = "zoom"  # the interval selection bound to the scales
GROUPS = "groups"  # the point selection bound to the legend
ZOOM_HELP = "Ctrl + scroll (or pinch) to zoom, all panes together; drag to pan; double-click to reset."
SPACING = 12  # pixels between panes
MAX_PANE_HEIGHT = 1000
# pixels a row of panes fills: a chart must fit the app's main column on a 1280-pixel screen (Vega-Lite
# sizes a chart of several panes in pixels; it cannot fill its container)
WIDTH = 740
FADED = 0.12  # opacity of a box whose legend group is not the one clicked
LEGEND_CHARACTER, LEGEND_SYMBOL = 6.5, 30  # pixels of a legend label's character (about), of its symbol and gap


DASHES = {"solid": [1, 0], "dash": [6, 3], "dot": [2, 2]}


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
    pane_width = (width_hint - SPACING * (columns - 1)) / columns
    pane_height = pane_width * height / width
    if pane_height > MAX_PANE_HEIGHT:
        pane_width, pane_height = MAX_PANE_HEIGHT * width / height, MAX_PANE_HEIGHT
    return max(50, round(pane_width)), max(50, round(pane_height))


def _overrides(boxes: Sequence[Box]) -> dict[str, list[str]]:
    """The colours boxes use instead of their group's, for the outline and the fill, each once."""
    return {name: list(dict.fromkeys(colour for box in boxes if (colour := getattr(box, name)) is not None)) for name in ("outline", "fill_colour")}


def _index(colours: list[str], colour: str | None) -> int | None:
    return None if colour is None else colours.index(colour)


def _with_overrides(channel: Spec, field: str, colours: list[str]) -> Spec:
    """A colour channel by legend group, except where a row names a colour of its own (by index:
    the expression holds numbers only, the colours are values)."""
    if not colours:
        return channel
    return {**channel, "condition": [{"test": f"datum.{field} === {index}", "value": colour} for index, colour in enumerate(colours)]}


def _area(box: Box) -> float:
    x1, y1, x2, y2 = box.box
    return abs((x2 - x1) * (y2 - y1))


def _records(panes: Sequence[PaneLayout], boxes: Sequence[Box], lines: Sequence[Line], overrides: dict[str, list[str]]) -> list[Spec]:
    """The chart's rows: each pane's page image and pictures, its boxes, the largest first (so that a
    small box inside a large one is on top and keeps its hover), and its lines."""
    rows: list[Spec] = []
    for index, pane in enumerate(panes):
        rows.append({"pane": index, "kind": "page"})
        rows += [{"pane": index, "kind": "picture", "url": uri, "order": order} for order, uri in enumerate(pane.pictures)]
    for box in sorted(boxes, key=_area, reverse=True):
        x1, y1, x2, y2 = (float(value) for value in box.box)
        rows.append({"pane": box.pane, "kind": "box", "x": x1, "y": y1, "x2": x2, "y2": y2, "group": box.group,
                     "line": box.line_width, "dash": box.dash, "outline": _index(overrides["outline"], box.outline), "fill": box.fill,
                     "fill_colour": _index(overrides["fill_colour"], box.fill_colour), "label": box.description,
                     "tip": {"title": box.hover_title, **box.hover}})
    for line in lines:
        x1, y1, x2, y2 = (float(value) for value in line.ends)
        rows.append({"pane": line.pane, "kind": "line", "x": x1, "y": y1, "x2": x2, "y2": y2, "group": line.group, "dash": line.dash})
    return rows


def _legend_scale(marks: Sequence[Box | Line], extra: dict[str, str]) -> Spec:
    """One colour a legend group, in the order the groups first come, then `extra`'s entries."""
    colours = {mark.group: mark.colour for mark in marks}
    for name, colour in extra.items():
        colours.setdefault(name, colour)
    return {"domain": list(colours), "range": list(colours.values())}


def _legend_columns(names: list[str], width_hint: int) -> int:
    """As many columns of legend entries as fit the row of panes with the longest name."""
    widest = max((len(name) for name in names), default=1) * LEGEND_CHARACTER + LEGEND_SYMBOL
    return max(1, min(len(names), int(width_hint // widest)))


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
    legend_title: str = "click one to show it alone (shift + click: more)",
    legend_extra: dict[str, str] | None = None,
) -> Spec:
    """The chart: `panes` side by side (`columns` a row; None: all in one row), each the page image
    (`image_uri`; None: a blank page) with its pictures, its boxes and its `lines`. `legend_extra`:
    entries the legend lists beside the marks' groups (name -> colour), for what the pictures paint."""
    width, height = _extent(width), _extent(height)
    columns = columns or len(panes)
    pane_width, pane_height = pane_size(width, height, columns, width_hint)
    position: dict[str, Spec] = {
        "x": {"field": "x", "type": "quantitative", "title": None, "axis": {"labelFontSize": 9},
              "scale": {"domain": [0, width], "nice": False, "zero": False}},
        "x2": {"field": "x2"},
        "y": {"field": "y", "type": "quantitative", "title": None, "axis": {"labelFontSize": 9},
              "scale": {"domain": [0, height], "nice": False, "zero": False, "reverse": True}},
        "y2": {"field": "y2"},
    }
    own = "datum.kind === 'box' || datum.kind === 'line'"  # their own place; the page and the pictures cover the frame
    frame = [{"calculate": f"{own} ? datum.x : 0", "as": "x"}, {"calculate": f"{own} ? datum.x2 : {width}", "as": "x2"},
             {"calculate": f"{own} ? datum.y : 0", "as": "y"}, {"calculate": f"{own} ? datum.y2 : {height}", "as": "y2"}]
    image = {"type": "image", "aspect": False, "align": "left", "baseline": "top", "clip": True}
    page_layer: Spec = {"transform": [{"filter": "datum.kind === 'page'"}], "mark": {**image, **({"url": image_uri} if image_uri else {"opacity": 0})},
                        "encoding": position}
    picture_layer: Spec = {"transform": [{"filter": "datum.kind === 'picture'"}], "mark": {**image, "smooth": False},
                           "encoding": {**position, "url": {"field": "url", "type": "nominal"}, "order": {"field": "order"}}}
    scale = _legend_scale([*boxes, *lines], legend_extra or {})
    colour = {"field": "group", "type": "nominal", "scale": scale,
              "legend": {"title": legend_title, "orient": "bottom", "direction": "horizontal", "columns": _legend_columns(scale["domain"], width_hint),
                         "labelLimit": width_hint - LEGEND_SYMBOL, "titleLimit": width_hint,
                         "symbolType": "square"}}
    overrides = _overrides(boxes)
    dash = {"condition": [{"test": f"datum.dash === '{name}'", "value": pattern} for name, pattern in DASHES.items() if name != "solid"],
            "value": DASHES["solid"]}  # a rule's dash is an encoding
    shown = {"condition": {"param": GROUPS, "value": 1}, "value": FADED}
    box_encoding: Spec = {
        **position,
        "fill": _with_overrides(colour, "fill_colour", overrides["fill_colour"]),
        "stroke": _with_overrides(colour, "outline", overrides["outline"]),
        "fillOpacity": {"field": "fill", "type": "quantitative", "scale": None},
        "strokeWidth": {"field": "line", "type": "quantitative", "scale": None},
        "opacity": shown,
        "description": {"field": "label"},
    }
    tooltip = {"expr": "datum.tip"}
    # Every box in one layer, the largest first, so that a small box inside a large one is on top
    # and keeps its hover; a rect's dash is a property of its mark, not an encoding, so a dashed
    # box's outline is drawn again by a layer of its style: unfilled, it catches the pointer on its
    # line only, never over the boxes inside it.
    box_layers: list[Spec] = [
        {"transform": [{"filter": "datum.kind === 'box'"}], "mark": {"type": "rect", "clip": True, "tooltip": tooltip},
         "encoding": {**box_encoding, "strokeOpacity": {"condition": {"test": "datum.dash === 'solid'", "value": 1}, "value": 0}},
         "params": [
             {"name": ZOOM, "select": {"type": "interval", "encodings": ["x", "y"], "zoom": "wheel![event.ctrlKey]"}, "bind": "scales"},
             {"name": GROUPS, "select": {"type": "point", "fields": ["group"]}, "bind": "legend"},
         ]},
        *({"transform": [{"filter": f"datum.kind === 'box' && datum.dash === '{style}'"}],
           "mark": {"type": "rect", "clip": True, "filled": False, "strokeDash": pattern, "tooltip": tooltip, "aria": False},
           "encoding": {name: box_encoding[name] for name in (*position, "stroke", "strokeWidth", "opacity")}}
          for style, pattern in DASHES.items() if style != "solid"),
    ]
    line_layers: list[Spec] = [
        {"transform": [{"filter": "datum.kind === 'line'"}], "mark": {"type": "rule", "strokeWidth": 2, "clip": True},
         "encoding": {**position, "stroke": colour, "strokeDash": dash, "opacity": shown}},
        {"transform": [{"filter": "datum.kind === 'line'"}], "mark": {"type": "point", "filled": True, "size": 30, "clip": True},
         "encoding": {"x": {**position["x"], "field": "x2"}, "y": {**position["y"], "field": "y2"}, "color": colour, "opacity": shown}},
    ] if lines else []
    return {
        "data": {"values": _records(panes, boxes, lines, overrides)},
        "params": [{"name": "paneTitles", "value": [pane.title for pane in panes]}],
        "transform": frame,
        "facet": {"field": "pane", "type": "ordinal", "title": None,
                  "header": {"labelExpr": "paneTitles[datum.value]", "labelFontSize": 13, "labelLimit": pane_width}},
        "columns": columns,
        "spacing": SPACING,
        "spec": {"width": pane_width, "height": pane_height, "layer": [page_layer, picture_layer, *box_layers, *line_layers]},
        "config": {"view": {"stroke": "#d0d0d0"}},
    }
