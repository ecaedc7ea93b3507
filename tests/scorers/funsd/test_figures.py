"""The FUNSD panel's overlay figure builder (scorers.funsd.figures), without Streamlit: entity
outcomes, their outlines and links, the hover's match rule, the page size."""

from __future__ import annotations

from tests.helpers import page_box_colours, page_legend, page_rows, valid_plotly
from tore_engine.plots.palette import class_color
from tore_engine.scorers.funsd.figures import (
    UNMATCHED_RED,
    entity_outcome,
    funsd_overlay_figure,
    page_size,
)

OVERLAY = {
    "gt_entities": [
        {"id": 1, "label": "question", "box": [10, 10, 50, 20], "matched_pred_id": 7, "iou": 0.9},
        {"id": 2, "label": "answer", "box": [60, 10, 90, 20], "matched_pred_id": None, "iou": None},
        {"id": 3, "label": "answer", "box": [60, 30, 90, 40], "matched_pred_id": 8, "iou": 0.8},
    ],
    "pred_entities": [
        {"id": 7, "label": "question", "box": [11, 10, 50, 20], "matched_gt_id": 1, "label_correct": True},
        {"id": 8, "label": "header", "box": [60, 31, 90, 40], "matched_gt_id": 3, "label_correct": False},
        {"id": 9, "label": "other", "box": [100, 100, 120, 110], "matched_gt_id": None, "label_correct": None},
    ],
    "gt_links": [{"from": 1, "to": 2, "found": False}, {"from": 1, "to": 3, "found": True}],
    "pred_links": [{"from": 7, "to": 8, "correct": True}, {"from": 7, "to": 9, "correct": False}],
    "dropped": None,
}


def _boxes(spec: dict, pane: int) -> list[dict]:
    return page_rows(spec, "box", pane)


def test_entity_outcomes():
    assert [entity_outcome(e) for e in OVERLAY["gt_entities"]] == ["matched", "unmatched", "matched"]
    assert [entity_outcome(e) for e in OVERLAY["pred_entities"]] == ["matched", "wrong label", "unmatched"]


def test_overlay_figure_marks_outcomes_and_links():
    spec = valid_plotly(funsd_overlay_figure(OVERLAY, None, 200, 150))
    # ground truth (pane 0): question matched, answer unmatched, answer matched; prediction (pane 1): three outcomes
    styles = sorted((row["pane"], row["group"], row["dash"], page_box_colours(spec, row)) for pane in (0, 1) for row in _boxes(spec, pane))
    colours = {name: class_color(name) for name in ("answer", "question", "header", "other")}
    assert styles == [
        (0, "answer", "dash", (colours["answer"], UNMATCHED_RED)), (0, "answer", "solid", (colours["answer"],) * 2),
        (0, "question", "solid", (colours["question"],) * 2), (1, "header", "dot", (colours["header"],) * 2),
        (1, "other", "dash", (colours["other"], UNMATCHED_RED)), (1, "question", "solid", (colours["question"],) * 2),
    ]
    missed = next(row for row in _boxes(spec, 0) if row["dash"] == "dash")
    assert (missed["x"], missed["y"], missed["x2"], missed["y2"]) == (60, 10, 90, 20)
    assert missed["tip"]["match"] == "missed: no predicted entity at IoU >= 0.5"
    links = sorted((row["pane"], row["group"], row["dash"], row["x"], row["x2"]) for row in page_rows(spec, "line"))
    assert links == [(0, "link found / correct", "solid", 30.0, 75.0), (0, "link missed / wrong", "dash", 30.0, 75.0),
                     (1, "link found / correct", "solid", 30.5, 75.0), (1, "link missed / wrong", "dash", 30.5, 110.0)]
    assert spec["layout"]["meta"]["panes"] == ["ground truth: 3 entities, 2 links", "prediction: 3 entities, 2 links"]
    legend = page_legend(spec)
    assert list(legend)[:4] == ["header", "question", "answer", "other"]  # FUNSD_CLASSES order
    assert legend["question"] == class_color("question") and legend["link missed / wrong"] == UNMATCHED_RED


def test_overlay_figure_hover_says_the_match_rule():
    spec = funsd_overlay_figure(OVERLAY, None, 200, 150, match_rule="over the same words", prediction_title="prediction (simulated)")
    tips = [row["tip"] for row in page_rows(spec, "box")]
    assert {"title": "question", "entity": "1 (ground truth)", "match": "matched to predicted 7, IoU 0.900"} in tips
    assert {"title": "other", "entity": "9 (prediction)", "match": "false alarm: no ground-truth entity over the same words"} in tips
    assert {"title": "header", "entity": "8 (prediction)", "match": "matched to ground truth 3, wrong class"} in tips
    assert spec.layout.meta["panes"][1].startswith("prediction (simulated)")


def test_page_size_holds_every_box():
    assert page_size(OVERLAY) == (140.0, 1000.0)
    assert page_size({"gt_entities": [], "pred_entities": []}) == (20.0, 1000.0)
