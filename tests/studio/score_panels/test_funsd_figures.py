"""The FUNSD panel's overlay figure builder (score_panels.funsd_figures), without Streamlit: entity
outcomes, their outlines and links, the hover's match rule, the page size."""

from __future__ import annotations

from tore_engine.studio.score_panels.funsd_figures import (
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


def _traces(figure, **where) -> list:
    return [trace for trace in figure.data if all(getattr(trace, key, None) == value for key, value in where.items())]


def test_entity_outcomes():
    assert [entity_outcome(e) for e in OVERLAY["gt_entities"]] == ["matched", "unmatched", "matched"]
    assert [entity_outcome(e) for e in OVERLAY["pred_entities"]] == ["matched", "wrong label", "unmatched"]


def test_overlay_figure_marks_outcomes_and_links():
    figure = funsd_overlay_figure(OVERLAY, None, 200, 150)
    outlines = [trace for trace in figure.data if trace.fill == "toself"]
    # ground truth (x): question matched, answer unmatched, answer matched; prediction (x2): three outcomes
    styles = sorted((trace.xaxis, trace.name, trace.line.dash, trace.line.color) for trace in outlines)
    assert styles == [
        ("x", "answer", "dash", UNMATCHED_RED), ("x", "answer", "solid", "#843c39"), ("x", "question", "solid", "#9e9ac8"),
        ("x2", "header", "dot", "#17becf"), ("x2", "other", "dash", UNMATCHED_RED), ("x2", "question", "solid", "#9e9ac8"),
    ]
    gt_box = next(t for t in outlines if t.xaxis == "x" and t.line.dash == "dash")
    assert list(gt_box.x) == [60, 90, 90, 60, 60, None] and list(gt_box.y) == [10, 10, 20, 20, 10, None]
    assert "missed: no predicted entity at IoU >= 0.5" in gt_box.text[0]
    lines = [trace for trace in figure.data if trace.mode == "lines" and trace.fill is None and trace.x[0] is not None]
    links = sorted((trace.xaxis, trace.line.color, trace.line.dash, tuple(trace.x)) for trace in lines)
    assert links == [
        ("x", "#2ca02c", "solid", (30.0, 75.0, None)), ("x", UNMATCHED_RED, "dash", (30.0, 75.0, None)),
        ("x2", "#2ca02c", "solid", (30.5, 75.0, None)), ("x2", UNMATCHED_RED, "dash", (30.5, 110.0, None)),
    ]
    assert [a.text for a in figure.layout.annotations] == ["ground truth: 3 entities, 2 links", "prediction: 3 entities, 2 links"]
    legend = [trace.name for trace in figure.data if trace.showlegend is not False and trace.x == (None,)]
    assert legend[:4] == ["header", "question", "answer", "other"]  # FUNSD_CLASSES order


def test_overlay_figure_hover_says_the_match_rule():
    figure = funsd_overlay_figure(OVERLAY, None, 200, 150, match_rule="over the same words", prediction_title="prediction (simulated)")
    hovers = [text for trace in figure.data if trace.mode == "markers" and trace.text for text in trace.text]
    assert "<b>question</b> entity 1 (ground truth)<br>matched to predicted 7, IoU 0.900" in hovers
    assert "<b>other</b> entity 9 (prediction)<br>false alarm: no ground-truth entity over the same words" in hovers
    assert "<b>header</b> entity 8 (prediction)<br>matched to ground truth 3, wrong class" in hovers
    assert figure.layout.annotations[1].text.startswith("prediction (simulated)")


def test_page_size_holds_every_box():
    assert page_size(OVERLAY) == (140.0, 1000.0)
    assert page_size({"gt_entities": [], "pred_entities": []}) == (20.0, 1000.0)
