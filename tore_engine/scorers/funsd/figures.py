"""The page of one FUNSD form: ground-truth and predicted entities side by side over the page, with
their links, from the engine's overlay (`FunsdResult.panel()["documents"][k]["overlay"]`), drawn as
`plots.page_chart` draws a page.

Colour says the class (one legend entry a class, for both panes); the outline says the outcome:
solid when matched (FUNSD: IoU >= 0.5; EC-FUNSD: the same words, `tore_engine.scorers.funsd.ec_overlay`),
dotted when matched with the wrong class, red dashed when unmatched. Links join entity centres,
green when found (predicted side: correct), red dashed when missed (wrong), with a dot on the value
end. Labels and ids come from the input files: they travel as data, drawn as text.
"""

from __future__ import annotations

import plotly.graph_objects as go

from tore_engine.plots.page_chart import Box, Line, PaneLayout, page_chart
from tore_engine.plots.palette import class_color
from tore_engine.scorers.funsd.documents import FUNSD_CLASSES

UNMATCHED_RED = "#ff0000"
LINK_NAMES = {True: "link found / correct", False: "link missed / wrong"}
LINK_FOUND = "#2ca02c"
# outcome -> (legend text, line dash, outline colour or None for the class colour, line width)
OUTCOMES = {
    "matched": ("matched (solid)", "solid", None, 1.5),
    "wrong label": ("matched, wrong class (dotted)", "dot", None, 2.5),
    "unmatched": ("unmatched (red dashed)", "dash", UNMATCHED_RED, 2.0),
}
FILL_ALPHA = 0.15


def entity_outcome(entity: dict) -> str:
    """matched / wrong label / unmatched, for a GT (`matched_pred_id`) or predicted (`matched_gt_id`) entity."""
    matched = entity.get("matched_pred_id", entity.get("matched_gt_id")) is not None
    if not matched:
        return "unmatched"
    return "wrong label" if entity.get("label_correct") is False else "matched"


def _hover(entity: dict, side: str, match_rule: str) -> dict[str, str]:
    """An entity's hover lines (its title is its class)."""
    head = {"entity": f"{entity['id']} ({side})"}
    if side == "ground truth":
        if entity["matched_pred_id"] is None:
            return head | {"match": f"missed: no predicted entity {match_rule}"}
        overlap = f"IoU {entity['iou']:.3f}" if entity.get("iou") is not None else match_rule
        return head | {"match": f"matched to predicted {entity['matched_pred_id']}, {overlap}"}
    if entity["matched_gt_id"] is None:
        return head | {"match": f"false alarm: no ground-truth entity {match_rule}"}
    verdict = "right class" if entity["label_correct"] else "wrong class"
    return head | {"match": f"matched to ground truth {entity['matched_gt_id']}, {verdict}"}


def _classes(entities: list[dict]) -> list[str]:
    """The classes of the entities, FUNSD's first in their order, then any other by name."""
    labels = [label for label in FUNSD_CLASSES if any(e["label"] == label for e in entities)]
    return labels + sorted({str(e["label"]) for e in entities} - set(labels))


def entity_boxes(entities: list[dict], side: str, pane: int, match_rule: str = "at IoU >= 0.5") -> list[Box]:
    """Each entity in its class's colour, outlined by its outcome, with its match in the hover."""
    boxes = []
    for entity in entities:
        label = str(entity["label"])
        _, dash, outline, width = OUTCOMES[entity_outcome(entity)]
        boxes.append(Box(pane, tuple(entity["box"]), label, class_color(label), label, _hover(entity, side, match_rule),
                         f"{side} entity {entity['id']}", line_width=width, dash=dash, outline=outline, fill=FILL_ALPHA))
    return boxes


def link_lines(links: list[dict], entities: list[dict], verdict_key: str, pane: int) -> list[Line]:
    """Links as lines between entity centres: green when `link[verdict_key]`, else red dashed."""
    centres = {e["id"]: ((e["box"][0] + e["box"][2]) / 2, (e["box"][1] + e["box"][3]) / 2) for e in entities}
    lines = []
    for link in links:
        if link["from"] in centres and link["to"] in centres:
            good = bool(link[verdict_key])
            (ax, ay), (bx, by) = centres[link["from"]], centres[link["to"]]
            lines.append(Line(pane, (ax, ay, bx, by), LINK_NAMES[good], LINK_FOUND if good else UNMATCHED_RED, "solid" if good else "dash"))
    return lines


def funsd_overlay_figure(
    overlay: dict, image_uri: str | None, width: float, height: float, *, prediction_title: str = "prediction",
    match_rule: str = "at IoU >= 0.5",
) -> go.Figure:
    """Ground truth (left) and prediction (right) of one form over its page image, zoom shared.
    `match_rule` says in the hover what matching means (EC-FUNSD: "over the same words")."""
    gt, pred = overlay["gt_entities"], overlay["pred_entities"]
    panes = [PaneLayout(f"ground truth: {len(gt)} entities, {len(overlay['gt_links'])} links"),
             PaneLayout(f"{prediction_title}: {len(pred)} entities, {len(overlay['pred_links'])} links")]
    order = {label: rank for rank, label in enumerate(_classes(gt + pred))}
    boxes = sorted(entity_boxes(gt, "ground truth", 0, match_rule) + entity_boxes(pred, "prediction", 1, match_rule),
                   key=lambda box: order[box.group])  # the legend lists the classes in FUNSD's order
    lines = link_lines(overlay["gt_links"], gt, "found", 0) + link_lines(overlay["pred_links"], pred, "correct", 1)
    return page_chart(panes, boxes, width, height, image_uri, lines=lines)


def page_size(overlay: dict) -> tuple[float, float]:
    """A page frame that holds every box, for a form without an image (FUNSD pages are 1000 px high)."""
    boxes = [e["box"] for e in overlay["gt_entities"] + overlay["pred_entities"]]
    right, bottom = max((b[2] for b in boxes), default=0.0), max((b[3] for b in boxes), default=0.0)
    return right + 20, max(bottom + 20, 1000.0)
