"""What the three score overlays draw alike: a group of boxes as one outline trace
(`page_figures.outline_trace`) and, in the same pane, colour and legend group, invisible markers at
the boxes' centres that carry each box's hover anywhere near its middle (an outline has it only on
its corners). Pure Plotly, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from tore_engine.plots.page_overlays import outline_trace

HOVER_TEMPLATE = "%{text}<extra></extra>"


def outlined_boxes(
    boxes: Sequence[Sequence[float]], hovers: Sequence[str], *, marker_size: int, corner_hover: bool = True, **outline: Any
) -> list[go.Scatter]:
    """The boxes' outline trace (`outline` are `outline_trace`'s options: line, name, fill_colour,
    column, legendgroup, showlegend) and their centre markers; a legend click hides both.
    Without `corner_hover`, only the centres carry the hover."""
    trace = outline_trace(boxes, hovers if corner_hover else None, **outline)
    centres = go.Scatter(
        x=[(box[0] + box[2]) / 2 for box in boxes], y=[(box[1] + box[3]) / 2 for box in boxes], text=list(hovers),
        mode="markers", marker=dict(size=marker_size, opacity=0, color=trace.line.color), name=trace.name,
        legendgroup=trace.legendgroup, showlegend=False, hovertemplate=HOVER_TEMPLATE, xaxis=trace.xaxis, yaxis=trace.yaxis,
    )
    return [trace, centres]
