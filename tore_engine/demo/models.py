"""Two simulated layout models, made from the ground truth by seeded perturbations.

They are not trained models: they imitate the errors real detectors make so that the demo's
matrices and overlays have something to show. Model A keeps the 11-class DocLayNet taxonomy and
misses, jitters, confuses and splits boxes; model B has a coarse 6-class taxonomy and draws
oversized, merged boxes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tore_engine.demo.compose import ComposedPage
from tore_engine.demo.graphics import CHARTS
from tore_engine.demo.ink import Box, Element, union

MODEL_B_TAXONOMY = ["table", "chart", "title", "infographic", "text", "header_footer"]

# Model A: chance of missing a box, and of each (true label -> predicted label) confusion.
MISS_A = {"Footnote": 0.15, "Formula": 0.10, "Page-footer": 0.10, "Page-header": 0.05, "Caption": 0.08}
CONFUSIONS_A = {
    "Title": [("Section-header", 0.35)],
    "Section-header": [("Title", 0.08), ("Text", 0.04)],
    "List-item": [("Text", 0.20)],
    "Text": [("List-item", 0.03), ("Section-header", 0.01), ("Table", 0.04)],
    "Caption": [("Text", 0.12)],
    "Footnote": [("Text", 0.15)],
    "Formula": [("Text", 0.08)],
    "Table": [("Picture", 0.05)],
    "Picture": [("Table", 0.03)],
}
SPLIT_A = 0.18  # chance that a paragraph of four lines or more comes out as two boxes


@dataclass
class Prediction:
    label: str
    bbox: Box
    score: float


def _clip(box: Box, page: ComposedPage) -> Box:
    x1, y1, x2, y2 = box
    x1, x2 = max(0.0, min(x1, x2)), min(float(page.width), max(x1, x2))
    y1, y2 = max(0.0, min(y1, y2)), min(float(page.height), max(y1, y2))
    return (x1, y1, x2, y2)


def _jitter(rng: random.Random, box: Box, page: ComposedPage) -> Box:
    """Move each edge by a Gaussian offset that grows with the box's size."""
    x1, y1, x2, y2 = box
    sx, sy = 0.8 + 0.015 * (x2 - x1), 0.8 + 0.015 * (y2 - y1)
    moved = (x1 + rng.gauss(0, sx), y1 + rng.gauss(0, sy), x2 + rng.gauss(0, sx), y2 + rng.gauss(0, sy))
    return _clip(moved, page)


def _pad(rng: random.Random, box: Box, page: ComposedPage, low: float, high: float) -> Box:
    x1, y1, x2, y2 = box
    return _clip((x1 - rng.uniform(low, high), y1 - rng.uniform(low, high),
                  x2 + rng.uniform(low, high), y2 + rng.uniform(low, high)), page)


def _confident(rng: random.Random) -> float:
    return round(0.55 + 0.45 * rng.betavariate(5, 1.5), 3)


def _unsure(rng: random.Random) -> float:
    return round(rng.uniform(0.25, 0.7), 3)


def _confuse(rng: random.Random, label: str) -> str:
    draw = rng.random()
    for other, chance in CONFUSIONS_A.get(label, []):
        if draw < chance:
            return other
        draw -= chance
    return label


def _split(rng: random.Random, element: Element) -> list[Box]:
    """A paragraph as one box, or as two boxes cut at a line boundary."""
    lines = element.lines
    if element.label != "Text" or len(lines) < 4 or rng.random() >= SPLIT_A:
        return [element.bbox]
    cut = rng.randint(1, len(lines) - 1)
    return [union(lines[:cut]), union(lines[cut:])]


def model_a(page: ComposedPage) -> list[Prediction]:
    """Same taxonomy as the reference: missed, jittered, confused and split boxes, plus text
    false positives on the labels inside some charts and diagrams."""
    rng = random.Random(f"model-a/{page.id}")
    predictions = []
    for element in page.elements:
        if rng.random() < MISS_A.get(element.label, 0.03):
            continue
        label = _confuse(rng, element.label)
        pieces = _split(rng, element)
        for piece in pieces:
            sure = label == element.label and len(pieces) == 1
            box = _jitter(rng, piece, page)
            predictions.append(Prediction(label, box, _confident(rng) if sure else _unsure(rng)))
        if element.label == "Picture" and element.kind != "illustration" and rng.random() < 0.3:
            x1, y1, x2, y2 = element.bbox
            strip = (x1, y2 - 0.12 * (y2 - y1), x2, y2)  # the axis or note labels at the bottom
            predictions.append(Prediction("Text", _jitter(rng, strip, page), _unsure(rng)))
    return predictions


def _coarse_label(rng: random.Random, element: Element) -> str | None:
    """Model B's class for a reference element, or None when model B drops it."""
    label, kind = element.label, element.kind
    if label in ("Page-header", "Page-footer"):
        return "header_footer"
    if label == "Title":
        return "title"
    if label == "Section-header":
        return "title" if rng.random() < 0.85 else "text"
    if label == "Table":
        return "table"
    if label == "Formula":
        return "text" if rng.random() < 0.5 else None
    if label == "Picture":
        if kind in CHARTS:
            return "chart" if rng.random() < 0.9 else "infographic"
        if kind == "diagram":
            return "infographic" if rng.random() < 0.7 else "chart"
        return "infographic" if rng.random() < 0.5 else None
    return "text"  # Text, List-item, Footnote, Caption


@dataclass
class _Region:
    label: str
    bbox: Box
    column: int
    group: int | None
    source: str  # the reference label it came from


def _coarse_regions(rng: random.Random, page: ComposedPage) -> list[_Region]:
    """Map every element to model B's classes; captions are often swallowed by their float."""
    floats = {e.group: i for i, e in enumerate(page.elements) if e.label in ("Picture", "Table")}
    absorbed: dict[int, list[Box]] = {}
    regions: dict[int, _Region] = {}
    for index, element in enumerate(page.elements):
        if element.label == "Caption" and element.group in floats and rng.random() < 0.6:
            absorbed.setdefault(floats[element.group], []).append(element.bbox)
            continue
        label = _coarse_label(rng, element)
        if label is not None and rng.random() >= 0.04:
            regions[index] = _Region(label, element.bbox, element.column, element.group, element.label)
    for index, boxes in absorbed.items():
        if index in regions:
            regions[index].bbox = union([regions[index].bbox, *boxes])
    return [regions[i] for i in sorted(regions)]


def _merge_runs(rng: random.Random, regions: list[_Region]) -> list[_Region]:
    """Merge neighbouring text regions of one column (always the items of one list; other
    neighbours half the time), and all running heads of the page into one header or footer."""
    merged: list[_Region] = []
    for region in regions:
        last = merged[-1] if merged else None
        same_list = (
            last is not None and region.source == last.source == "List-item" and region.group == last.group
        )
        neighbours = (
            last is not None and region.label == last.label == "text" and region.column == last.column
            and region.column >= 0 and rng.random() < 0.5
        )
        if last is not None and (same_list or neighbours):
            last.bbox = union([last.bbox, region.bbox])
        else:
            merged.append(_Region(region.label, region.bbox, region.column, region.group, region.source))
    heads = [r for r in merged if r.label == "header_footer"]
    rest = [r for r in merged if r.label != "header_footer"]
    for source in ("Page-header", "Page-footer"):
        boxes = [r.bbox for r in heads if r.source == source]
        if boxes:
            rest.append(_Region("header_footer", union(boxes), -1, None, source))
    return rest


def model_b(page: ComposedPage) -> list[Prediction]:
    """Coarse classes, merged text runs and captions, and boxes padded beyond the ink."""
    rng = random.Random(f"model-b/{page.id}")
    predictions = []
    for region in _merge_runs(rng, _coarse_regions(rng, page)):
        low, high = (4.0, 14.0) if region.label in ("table", "chart", "infographic") else (1.5, 7.0)
        predictions.append(Prediction(region.label, _pad(rng, region.bbox, page, low, high), _confident(rng)))
    return predictions
