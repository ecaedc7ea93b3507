"""The OmniDocBench panel's figure builders (scorers.omnidocbench.figures), without Streamlit: per-class
AP bars, attribute bars, and a page's matched, unmatched and not evaluated boxes."""

from __future__ import annotations

from tests.helpers import figure_json, page_box_colours, page_legend, page_rows, valid_plotly
from tore_engine.plots.palette import class_color
from tore_engine.scorers.omnidocbench.box_matches import (
    MATCHED,
    NOT_EVALUATED,
    UNMATCHED,
    MatchedBox,
    PageMatches,
)
from tore_engine.scorers.omnidocbench.figures import (
    STATUS_NAMES,
    STATUS_STYLES,
    attribute_bars,
    page_match_overlay,
    per_class_ap_bars,
)


def _bars(spec: dict) -> list[tuple[str, float | None, str]]:
    spec = figure_json(spec)
    bar = spec["data"][0]
    return [(label, None if value is None or value != value else value, text)
            for label, value, text in zip(spec["layout"]["meta"]["classes"], bar["x"], bar["text"])]


def test_per_class_ap_bars_leave_a_missing_class_empty_and_say_n_a():
    spec = valid_plotly(per_class_ap_bars({"title": 0.5, "table": None}))
    assert _bars(spec) == [("title", 0.5, "0.500"), ("table (n/a)", None, "n/a")]  # no bar where there is no score


def test_attribute_bars_label_each_value_with_its_page_count():
    spec = valid_plotly(attribute_bars({"book": 0.25, "note": None}, {"book": 2, "note": 1}, metric="mAP"))
    assert _bars(spec) == [("book (2 p.)", 0.25, "0.250"), ("note (1 p.)", None, "n/a")]


def test_page_match_overlay_marks_matched_unmatched_and_not_evaluated_boxes():
    page = PageMatches(
        "p.jpg", 100.0, 200.0, None,
        reference=[MatchedBox("title", "title", (0, 0, 10, 10), None, 0),
                   MatchedBox("text_block", "text", (0, 20, 10, 30), None, None),
                   MatchedBox("reference", None, (0, 40, 10, 50), None, None)],
        prediction=[MatchedBox("title", "title", (1, 1, 10, 10), 0.9, 0),
                    MatchedBox("plain text", "text", (50, 50, 60, 60), 0.4, None)],
    )
    spec = valid_plotly(page_match_overlay(page, None))
    boxes = page_rows(spec, "box")
    assert {(row["pane"], row["group"], row["dash"]) for row in boxes} == {
        (0, STATUS_NAMES[MATCHED], "solid"), (0, STATUS_NAMES[UNMATCHED], "dash"), (0, STATUS_NAMES[NOT_EVALUATED], "dot"),
        (1, STATUS_NAMES[MATCHED], "solid"), (1, STATUS_NAMES[UNMATCHED], "dash")}
    assert page_legend(spec) == {STATUS_NAMES[status]: STATUS_STYLES[status][0] for status in STATUS_NAMES}  # one entry a status
    assert {page_box_colours(spec, row) for row in boxes if row["tip"]["title"] == "title"} == {
        (class_color("title"), STATUS_STYLES[MATCHED][0])}  # filled lightly in the class's colour, outlined in the status's
    tips = [row["tip"] for row in boxes]
    assert any(tip.get("match") == "matched to predicted box 0 (title)" for tip in tips)
    assert any(tip.get("match") == "matched to ground-truth box 0 (title)" and tip["score"] == "0.900" for tip in tips)
    assert any(tip.get("match") == "unmatched at IoU 0.5" and tip["title"] == "plain text" for tip in tips)
    assert spec["layout"]["meta"]["panes"] == ["ground truth: 3 blocks", "prediction: 2 boxes"]
    assert spec["layout"]["yaxis"]["range"] == [200.0, 0]
