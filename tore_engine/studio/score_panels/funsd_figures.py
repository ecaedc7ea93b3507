"""Plotly figure of one FUNSD form: ground-truth and predicted entities side by side over the page,
with their links, from the engine's overlay (`FunsdResult.panel()["documents"][k]["overlay"]`).

Colour says the class; the outline says the outcome: solid when matched (FUNSD: IoU >= 0.5;
EC-FUNSD: the same words, `tore_engine.scorers.funsd.ec_overlay`), dotted when
matched with the wrong class, red dashed when unmatched. Links join entity centres, green when
found (predicted side: correct), red dashed when missed (wrong), with a dot on the value end.
One scatter trace per class, outcome and pane (never one shape per box, app.md section 3). Labels
and ids come from the input files: they are escaped as plain text (`plain_for_plotly`).
"""

from __future__ import annotations

import plotly.graph_objects as go

from tore_engine.plots.page_overlays import Pane, page_overlay
from tore_engine.plots.palette import class_color, with_alpha
from tore_engine.plots.plain_text import plain_for_plotly
from tore_engine.scorers.funsd.documents import FUNSD_CLASSES
from tore_engine.studio.score_panels.overlay_traces import outlined_boxes

UNMATCHED_RED = "#ff0000"
LINK_WORDS = {"found": {True: "found", False: "missed"}, "correct": {True: "correct", False: "wrong"}}
LINK_FOUND = "#2ca02c"
# outcome -> (legend text, line dash, outline colour or None for the class colour, line width)
OUTCOMES = {
    "matched": ("matched (solid)", "solid", None, 1.5),
    "wrong label": ("matched, wrong class (dotted)", "dot", None, 2.5),
    "unmatched": ("unmatched (red dashed)", "dash", UNMATCHED_RED, 2.0),
}
FILL_ALPHA = 0.15
CENTRE_MARKER_SIZE = 12


def entity_outcome(entity: dict) -> str:
    """matched / wrong label / unmatched, for a GT (`matched_pred_id`) or predicted (`matched_gt_id`) entity."""
    matched = entity.get("matched_pred_id", entity.get("matched_gt_id")) is not None
    if not matched:
        return "unmatched"
    return "wrong label" if entity.get("label_correct") is False else "matched"


def _hover(entity: dict, side: str, match_rule: str) -> str:
    head = f"<b>{plain_for_plotly(entity['label'])}</b> entity {plain_for_plotly(entity['id'])} ({side})"
    if side == "ground truth":
        if entity["matched_pred_id"] is None:
            return f"{head}<br>missed: no predicted entity {match_rule}"
        overlap = f"IoU {entity['iou']:.3f}" if entity.get("iou") is not None else match_rule
        return f"{head}<br>matched to predicted {entity['matched_pred_id']}, {overlap}"
    if entity["matched_gt_id"] is None:
        return f"{head}<br>false alarm: no ground-truth entity {match_rule}"
    verdict = "right class" if entity["label_correct"] else "wrong class"
    return f"{head}<br>matched to ground truth {entity['matched_gt_id']}, {verdict}"


def _axes(column: int) -> dict:
    return {"xaxis": "x" if column == 1 else f"x{column}", "yaxis": "y" if column == 1 else f"y{column}"}


def entity_traces(entities: list[dict], side: str, column: int, match_rule: str = "at IoU >= 0.5") -> list[go.Scatter]:
    """Outlines (one trace per class and outcome) and invisible centre markers carrying the hover."""
    traces = []
    labels = [label for label in FUNSD_CLASSES if any(e["label"] == label for e in entities)]
    labels += sorted({e["label"] for e in entities} - set(labels))
    for label in labels:
        colour = class_color(label)
        for outcome, (_, dash, outline, width) in OUTCOMES.items():
            chosen = [e for e in entities if e["label"] == label and entity_outcome(e) == outcome]
            if chosen:
                traces += outlined_boxes(
                    [e["box"] for e in chosen], [_hover(e, side, match_rule) for e in chosen], marker_size=CENTRE_MARKER_SIZE,
                    line=dict(color=outline or colour, dash=dash, width=width), name=label,
                    fill_colour=with_alpha(colour, FILL_ALPHA), column=column, legendgroup=label, showlegend=False,
                )
    return traces


def link_traces(links: list[dict], entities: list[dict], verdict_key: str, column: int) -> list[go.Scatter]:
    """Links as lines between entity centres: green when `link[verdict_key]`, else red dashed."""
    centres = {e["id"]: ((e["box"][0] + e["box"][2]) / 2, (e["box"][1] + e["box"][3]) / 2) for e in entities}
    traces = []
    for good in (True, False):
        xs, ys, ends_x, ends_y = [], [], [], []
        for link in links:
            if bool(link[verdict_key]) != good or link["from"] not in centres or link["to"] not in centres:
                continue
            (ax, ay), (bx, by) = centres[link["from"]], centres[link["to"]]
            xs += [ax, bx, None]
            ys += [ay, by, None]
            ends_x.append(bx)
            ends_y.append(by)
        if not xs:
            continue
        colour = LINK_FOUND if good else UNMATCHED_RED
        name = "link " + LINK_WORDS[verdict_key][good]
        traces.append(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=colour, width=2, dash="solid" if good else "dash"),
                                 name=name, legendgroup=f"links-{good}", showlegend=False, hoverinfo="skip", **_axes(column)))
        traces.append(go.Scatter(x=ends_x, y=ends_y, mode="markers", marker=dict(color=colour, size=6), name=name,
                                 legendgroup=f"links-{good}", showlegend=False, hoverinfo="skip", **_axes(column)))
    return traces


def _legend(labels: list[str]) -> list[go.Scatter]:
    """Legend-only entries: one per class (toggles the class in both panes), per outcome and per link verdict."""
    entries = [go.Scatter(x=[None], y=[None], mode="markers", marker=dict(symbol="square", size=12, color=class_color(label)),
                          name=plain_for_plotly(label), legendgroup=label) for label in labels]
    entries += [go.Scatter(x=[None], y=[None], mode="lines", line=dict(color=outline or "#555555", dash=dash, width=width),
                           name=text) for text, dash, outline, width in OUTCOMES.values()]
    entries += [go.Scatter(x=[None], y=[None], mode="lines+markers", line=dict(color=colour, dash=dash, width=2),
                           marker=dict(size=6), name=text, legendgroup=f"links-{good}")
                for good, colour, dash, text in ((True, LINK_FOUND, "solid", "link found / correct (dot: value end)"),
                                                  (False, UNMATCHED_RED, "dash", "link missed / wrong"))]
    return entries


def funsd_overlay_figure(
    overlay: dict, image_uri: str | None, width: float, height: float, *, prediction_title: str = "prediction",
    match_rule: str = "at IoU >= 0.5", width_hint: int = 1000,
) -> go.Figure:
    """Ground truth (left) and prediction (right) of one form over its page image, zoom shared.
    `match_rule` says in the hover what matching means (EC-FUNSD: "over the same words")."""
    gt, pred = overlay["gt_entities"], overlay["pred_entities"]
    titles = (f"ground truth: {len(gt)} entities, {len(overlay['gt_links'])} links",
              f"{prediction_title}: {len(pred)} entities, {len(overlay['pred_links'])} links")
    fig = page_overlay([Pane(titles[0], None), Pane(titles[1], None)], width, height, image_uri, width_hint=width_hint)
    labels = [label for label in FUNSD_CLASSES if any(e["label"] == label for e in gt + pred)]
    fig.add_traces(
        entity_traces(gt, "ground truth", 1, match_rule) + link_traces(overlay["gt_links"], gt, "found", 1)
        + entity_traces(pred, "prediction", 2, match_rule) + link_traces(overlay["pred_links"], pred, "correct", 2)
        + _legend(labels)
    )
    return fig


def page_size(overlay: dict) -> tuple[float, float]:
    """A page frame that holds every box, for a form without an image (FUNSD pages are 1000 px high)."""
    boxes = [e["box"] for e in overlay["gt_entities"] + overlay["pred_entities"]]
    right, bottom = max((b[2] for b in boxes), default=0.0), max((b[3] for b in boxes), default=0.0)
    return right + 20, max(bottom + 20, 1000.0)
