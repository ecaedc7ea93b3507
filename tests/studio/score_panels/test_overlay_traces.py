"""The traces the score panels' overlays share (score_panels.overlay_traces): outlined boxes with their
hover on the box centres."""

from __future__ import annotations

from tore_engine.studio.score_panels.overlay_traces import outlined_boxes


def test_outlined_boxes_put_the_hover_on_centres_in_the_outlines_pane_and_group():
    outline, centres = outlined_boxes([(0, 0, 10, 20)], ["hover"], marker_size=12, corner_hover=False,
                                      line=dict(color="#2ca02c"), name="gold", column=2, legendgroup="g")
    assert outline.hoverinfo == "skip"
    assert (list(centres.x), list(centres.y), list(centres.text)) == ([5.0], [10.0], ["hover"])
    assert (centres.xaxis, centres.yaxis, centres.legendgroup, centres.marker.color, centres.showlegend) == ("x2", "y2", "g", "#2ca02c", False)
    assert centres.marker.opacity == 0
