"""The Overlays navigator (tore_engine.studio.navigator) through AppTest: lowest mAP first opens the
page whose mAP is lowest, steps through the pages in ascending mAP, and each page's line and
scores give its mAP; the order is offered only when the evaluation has mAP."""

from __future__ import annotations

from tests.studio.helpers import _app, _no_exception, open_page
from tore_engine.plots.plain_text import plain_for_markdown


def _line(at) -> str:
    return next(markdown.value for markdown in at.markdown if markdown.value.startswith("Page **"))


def test_lowest_map_first_steps_through_the_pages_in_ascending_map(demo_evaluation):
    page_map = demo_evaluation.pages["map"]
    ascending = page_map.sort_values(kind="stable").index.tolist()  # worked out with pandas: ties in file order, undefined last
    at = _app(page="report-a/p1")
    open_page(at, "overlays").run()
    at.selectbox(key="order").set_value("map").run()
    _no_exception(at)
    line = _line(at)
    assert line.startswith(f"Page **{plain_for_markdown(ascending[0])}**: 1 of 26 in lowest mAP first") and f"mAP {page_map[ascending[0]]:.3f}" in line
    assert at.query_params["page"] == ascending[0] and at.query_params["order"] == "map"
    next(button for button in at.button if button.label == "Next ▶").click().run()
    assert at.query_params["page"] == ascending[1]
    assert next(metric.value for metric in at.metric if metric.label == "mAP of the page") == f"{page_map[ascending[1]]:.3f}"


def test_a_dual_model_has_no_map_order():
    at = _app(model="B", order="map")
    open_page(at, "overlays").run()
    _no_exception(at)
    assert "map" not in at.selectbox(key="order").options and at.selectbox(key="order").value == "file"
    assert "mAP" not in _line(at)
