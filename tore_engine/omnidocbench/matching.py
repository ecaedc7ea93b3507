"""This project's page matcher for the end-to-end score (omnidocbench.md section 5.4).

The official matcher (`quick_match`) is ~170 KB of heuristics with time limits and is not
reproduced. Instead: ground-truth elements are built as upstream builds them (ignored blocks
dropped, `truncated` groups concatenated in reading order), then text-like elements and display
formulas are matched one-to-one to prediction paragraphs, formulas and code blocks by a Hungarian
assignment on normalised edit distance, rejecting pairs above 0.7; tables are matched separately
to predicted tables on the edit distance of their normalised HTML. Scores computed on top of it
are comparable between models within this project, not with the leaderboard.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment

from tore_engine.omnidocbench.categories import DISPLAY_FORMULA, TABLE, TEXT_MATCHED_NOT_SCORED, TEXT_SCORED
from tore_engine.omnidocbench.markdown import MarkdownElement
from tore_engine.omnidocbench.pair_metrics import normalize_formula, normalize_table_html, normalize_text
from tore_engine.omnidocbench.reference import Block, ReferencePage

MAX_TEXT_COST = 0.7  # a text pair more different than this is no match
_TEXT_PREDICTION_KINDS = ("text", "formula", "code")


@dataclass(frozen=True)
class GroundTruthElement:
    """A matchable ground-truth element: one block, or a `truncated` group of blocks."""

    kind: str  # "text" (scored), "text_unscored" (captions, headers...), "formula" or "table"
    category: str
    content: str  # text, LaTeX, or table HTML
    order: float | None
    attribute: dict

    @property
    def normalized(self) -> str:
        if self.kind == "formula":
            return normalize_formula(self.content)
        if self.kind == "table":
            return normalize_table_html(self.content)
        return normalize_text(self.content)


@dataclass(frozen=True)
class Match:
    gt: GroundTruthElement
    prediction: MarkdownElement | None  # None: unmatched, scored against an empty prediction


def _kind(category: str) -> str | None:
    if category in TEXT_SCORED:
        return "text"
    if category in TEXT_MATCHED_NOT_SCORED:
        return "text_unscored"
    if category in DISPLAY_FORMULA:
        return "formula"
    if category in TABLE:
        return "table"
    return None  # figure, abandon, masks, unknown: never matched


def _truncated_groups(page: ReferencePage, blocks: list[Block]) -> list[list[Block]]:
    """Blocks joined by `truncated` relations (a paragraph split by the layout), each group in
    reading order; every other block is a group of its own."""
    parent = {block.anno_id: block.anno_id for block in blocks}

    def root(anno_id):
        while parent[anno_id] != anno_id:
            parent[anno_id] = parent[parent[anno_id]]
            anno_id = parent[anno_id]
        return anno_id

    for relation in page.relations:
        if relation.kind == "truncated" and relation.source in parent and relation.target in parent:
            parent[root(relation.source)] = root(relation.target)
    groups: dict = {}
    for block in blocks:
        groups.setdefault(root(block.anno_id), []).append(block)
    return [sorted(group, key=lambda b: (b.order is None, b.order or 0)) for group in groups.values()]


def ground_truth_elements(page: ReferencePage) -> list[GroundTruthElement]:
    """The page's matchable elements, in block order."""
    blocks = [block for block in page.blocks if not block.ignore and _kind(block.category) is not None]
    elements = []
    for group in _truncated_groups(page, blocks):
        first = group[0]
        kind = _kind(first.category)
        if kind == "formula":
            content = "".join(block.latex or block.text for block in group)
        elif kind == "table":
            content = "".join(block.html or block.latex for block in group)
        else:
            content = "".join(block.text for block in group)
        elements.append(GroundTruthElement(kind, first.category, content, first.order, first.attribute))
    return elements


def _assign(cost: np.ndarray, max_cost: float | None) -> list[tuple[int, int]]:
    if cost.size == 0:
        return []
    rows, columns = linear_sum_assignment(cost)
    return [(r, c) for r, c in zip(rows, columns) if max_cost is None or cost[r, c] <= max_cost]


def _normalized_predictions(predictions: list[MarkdownElement], normalize) -> list[str]:
    return [normalize(element.content) for element in predictions]


def match_page(gt: list[GroundTruthElement], predictions: list[MarkdownElement]) -> list[Match]:
    """One match per ground-truth element (unmatched ones paired with None), in `gt` order."""
    paired: dict[int, MarkdownElement] = {}
    text_gt = [i for i, element in enumerate(gt) if element.kind != "table"]
    text_pred = [element for element in predictions if element.kind in _TEXT_PREDICTION_KINDS]
    if text_gt and text_pred:
        as_text = _normalized_predictions(text_pred, normalize_text)
        as_formula = _normalized_predictions(text_pred, normalize_formula)
        cost = np.vstack(
            [
                cdist([gt[i].normalized], as_formula if gt[i].kind == "formula" else as_text,
                      scorer=Levenshtein.normalized_distance)
                for i in text_gt
            ]
        )
        for row, column in _assign(cost, MAX_TEXT_COST):
            paired[text_gt[row]] = text_pred[column]
    table_gt = [i for i, element in enumerate(gt) if element.kind == "table"]
    table_pred = [element for element in predictions if element.kind == "table"]
    if table_gt and table_pred:
        cost = cdist(
            [gt[i].normalized for i in table_gt],
            _normalized_predictions(table_pred, normalize_table_html),
            scorer=Levenshtein.normalized_distance,
        )
        for row, column in _assign(cost, None):
            paired[table_gt[row]] = table_pred[column]
    return [Match(element, paired.get(i)) for i, element in enumerate(gt)]
