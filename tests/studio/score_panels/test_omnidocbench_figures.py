"""The OmniDocBench panel's figure builders (score_panels.omnidocbench_figures), without Streamlit: per-class
AP bars, attribute bars, and a page's matched, unmatched and not evaluated boxes."""

from __future__ import annotations

from tore_engine.scorers.omnidocbench.box_matches import (
    MATCHED,
    NOT_EVALUATED,
    UNMATCHED,
    MatchedBox,
    PageMatches,
)
from tore_engine.studio.score_panels.omnidocbench_figures import (
    STATUS_STYLES,
    attribute_bars,
    page_match_overlay,
    per_class_ap_bars,
)


def test_per_class_ap_bars_leave_a_missing_class_empty_and_say_n_a():
    fig = per_class_ap_bars({"title": 0.5, "table": None}).to_dict()
    bar = fig["data"][0]
    assert list(bar["x"]) == [0.5, None] and list(bar["text"]) == ["0.500", "n/a"]
    assert list(fig["layout"]["yaxis"]["ticktext"]) == ["title", "table (n/a)"]


def test_attribute_bars_label_each_value_with_its_page_count():
    bar = attribute_bars({"book": 0.25, "note": None}, {"book": 2, "note": 1}, metric="mAP").to_dict()["data"][0]
    assert list(bar["y"]) == ["book (2 p.)", "note (1 p.)"] and list(bar["text"]) == ["0.250", "n/a"]


def test_page_match_overlay_marks_matched_unmatched_and_not_evaluated_boxes():
    page = PageMatches(
        "p.jpg", 100.0, 200.0, None,
        reference=[MatchedBox("title", "title", (0, 0, 10, 10), None, 0),
                   MatchedBox("text_block", "text", (0, 20, 10, 30), None, None),
                   MatchedBox("reference", None, (0, 40, 10, 50), None, None)],
        prediction=[MatchedBox("title", "title", (1, 1, 10, 10), 0.9, 0),
                    MatchedBox("plain text", "text", (50, 50, 60, 60), 0.4, None)],
    )
    fig = page_match_overlay(page, None).to_dict()
    outlines = [trace for trace in fig["data"] if trace["mode"] == "lines"]
    by_status = {(trace["xaxis"], trace["legendgroup"], trace["line"]["dash"]) for trace in outlines}
    assert by_status == {("x", MATCHED, "solid"), ("x", UNMATCHED, "dash"), ("x", NOT_EVALUATED, "dot"),
                         ("x2", MATCHED, "solid"), ("x2", UNMATCHED, "dash")}
    assert {trace["line"]["color"] for trace in outlines if trace["legendgroup"] == UNMATCHED} == {STATUS_STYLES[UNMATCHED]["color"]}
    assert sum(trace["showlegend"] for trace in outlines) == 3  # one legend entry per status
    hovers = [text for trace in fig["data"] if trace["mode"] == "markers" for text in trace["text"]]
    assert any("matched to predicted box 0 (title)" in text for text in hovers)
    assert any("matched to ground-truth box 0 (title)" in text and "score 0.900" in text for text in hovers)
    assert any("unmatched at IoU 0.5" in text and "plain text" in text for text in hovers)
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["ground truth: 3 blocks", "prediction: 2 boxes"]
    assert fig["layout"]["yaxis"]["range"] == [200.0, 0]
