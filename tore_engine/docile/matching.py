"""Matching predicted fields to gold fields, per document, as docile-benchmark 0.3.5 does.

KILE (docile.md sections 3-4): predictions in score order each take the first remaining gold of
their (fieldtype, page) whose PCC-set IoU passes the threshold. LIR (section 5): the same on every
(predicted line item, gold line item) pair, then the one-to-one assignment of line items that
maximises the number of matched fields. Location tests are vectorised over all pairs of a document
at once; only the greedy walk itself is a Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from tore_engine.docile.dataset import Field
from tore_engine.docile.pcc import PCCSet

EPS = 1e-6  # the official slack: IoU > threshold - EPS counts as IoU >= threshold


@dataclass
class DocumentMatching:
    """Which gold field each prediction matched, for one document and one task."""

    docid: str
    pred_to_gold: np.ndarray  # (n_predictions,) int64: gold index, or -1 when unmatched
    gold_count: int
    line_item_assignment: dict[int, int] | None = None  # LIR: predicted -> gold line item id

    @property
    def false_negative_golds(self) -> list[int]:
        matched = set(self.pred_to_gold[self.pred_to_gold >= 0].tolist())
        return [gold for gold in range(self.gold_count) if gold not in matched]


def location_matches(
    pcc_set: PCCSet, predictions: Sequence[Field], golds: Sequence[Field], iou_threshold: float
) -> np.ndarray:
    """(predictions, golds) bool: same fieldtype, same page, and PCC IoU > threshold - EPS."""
    shape = (len(predictions), len(golds))
    if not predictions or not golds:
        return np.zeros(shape, dtype=bool)
    pred_boxes, pred_pages = _boxes_and_pages(predictions)
    gold_boxes, gold_pages = _boxes_and_pages(golds)
    codes: dict[str | None, int] = {}
    pred_types = np.array([codes.setdefault(f.fieldtype, len(codes)) for f in predictions])
    gold_types = np.array([codes.setdefault(f.fieldtype, len(codes)) for f in golds])
    same_bucket = (pred_types[:, None] == gold_types[None, :]) & (pred_pages[:, None] == gold_pages[None, :])
    if not same_bucket.any():
        return same_bucket
    iou = np.where(_intersects(pred_boxes, gold_boxes), _pcc_iou(pcc_set, pred_boxes, gold_boxes, pred_pages, gold_pages), 0.0)
    return same_bucket & (iou > iou_threshold - EPS)


def _boxes_and_pages(fields: Sequence[Field]) -> tuple[np.ndarray, np.ndarray]:
    boxes = np.array([field.bbox for field in fields], dtype=np.float64).reshape(-1, 4)
    pages = np.array([field.page for field in fields], dtype=np.int64)
    return boxes, pages


def _intersects(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Closed-interval intersection of every box of `a` with every box of `b`."""
    return (
        (a[:, None, 0] <= b[None, :, 2])
        & (b[None, :, 0] <= a[:, None, 2])
        & (a[:, None, 1] <= b[None, :, 3])
        & (b[None, :, 1] <= a[:, None, 3])
    )


def _pcc_iou(
    pcc_set: PCCSet, pred_boxes: np.ndarray, gold_boxes: np.ndarray, pred_pages: np.ndarray, gold_pages: np.ndarray
) -> np.ndarray:
    """|G & Q| / |G | Q| of the covered PCC sets; 1 when both are empty (a blank page too)."""
    pred_cover = pcc_set.coverage(pred_boxes, pred_pages).astype(np.float64)
    gold_cover = pcc_set.coverage(gold_boxes, gold_pages).astype(np.float64)
    intersection = pred_cover @ gold_cover.T  # exact: integer counts far below 2**53
    union = pred_cover.sum(axis=1)[:, None] + gold_cover.sum(axis=1)[None, :] - intersection
    return np.divide(intersection, union, out=np.ones_like(intersection), where=union > 0)


def matching_order(predictions: Sequence[Field]) -> np.ndarray:
    """Indices sorted by (use_only_for_ap, -(score or 0), position): the official greedy order."""
    ap_only = np.array([field.use_only_for_ap for field in predictions], dtype=bool)
    negated_scores = np.array([-(field.score or 0.0) for field in predictions], dtype=np.float64)
    return np.lexsort((np.arange(len(predictions)), negated_scores, ap_only))


def greedy_matching(matches: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Each prediction in `order` takes the first still-free gold it matches."""
    pred_to_gold = np.full(matches.shape[0], -1, dtype=np.int64)
    free = np.ones(matches.shape[1], dtype=bool)
    for pred in order[matches[order].any(axis=1)]:
        candidates = np.flatnonzero(matches[pred] & free)
        if len(candidates):
            pred_to_gold[pred] = candidates[0]
            free[candidates[0]] = False
    return pred_to_gold


def match_kile(
    docid: str, pcc_set: PCCSet, predictions: Sequence[Field], golds: Sequence[Field], iou_threshold: float
) -> DocumentMatching:
    matches = location_matches(pcc_set, predictions, golds, iou_threshold)
    pred_to_gold = greedy_matching(matches, matching_order(predictions))
    return DocumentMatching(docid, pred_to_gold, len(golds))


def match_lir(
    docid: str, pcc_set: PCCSet, predictions: Sequence[Field], golds: Sequence[Field], iou_threshold: float
) -> DocumentMatching:
    """Field matching inside the line-item assignment that maximises matched normal predictions."""
    pred_to_gold = np.full(len(predictions), -1, dtype=np.int64)
    if not predictions or not golds:
        return DocumentMatching(docid, pred_to_gold, len(golds), {})
    matches = location_matches(pcc_set, predictions, golds, iou_threshold)
    order = matching_order(predictions)
    ap_only = np.array([field.use_only_for_ap for field in predictions], dtype=bool)
    pred_items, pred_item_of = _line_items(predictions)
    gold_items, gold_item_of = _line_items(golds)

    # Only pairs of line items with at least one matching field pair can have a field matching.
    pred_one_hot = (pred_item_of[None, :] == np.arange(len(pred_items))[:, None]).astype(np.float64)
    gold_one_hot = (gold_item_of[None, :] == np.arange(len(gold_items))[:, None]).astype(np.float64)
    pair_has_candidates = pred_one_hot @ matches.astype(np.float64) @ gold_one_hot.T > 0

    weights = np.zeros((len(pred_items), len(gold_items)), dtype=np.int64)
    pair_matchings: dict[tuple[int, int], np.ndarray] = {}
    for pred_item, gold_item in zip(*np.nonzero(pair_has_candidates)):
        golds_of_item = np.flatnonzero(gold_item_of == gold_item)
        item_order = order[pred_item_of[order] == pred_item]
        local = greedy_matching(matches[:, golds_of_item], item_order)
        pair_pred_to_gold = np.where(local >= 0, golds_of_item[local], -1)
        pair_matchings[(pred_item, gold_item)] = pair_pred_to_gold
        weights[pred_item, gold_item] = int(((pair_pred_to_gold >= 0) & ~ap_only).sum())

    assignment: dict[int, int] = {}
    for pred_item, gold_item in maximum_assignment(weights, pred_items, gold_items):
        pair = pair_matchings.get((pred_item, gold_item))
        if pair is None:  # no field matches at all (AP-only ones included): dropped
            continue
        assignment[pred_items[pred_item]] = gold_items[gold_item]
        in_item = pred_item_of == pred_item
        pred_to_gold[in_item] = pair[in_item]
    return DocumentMatching(docid, pred_to_gold, len(golds), assignment)


def _line_items(fields: Sequence[Field]) -> tuple[list[int], np.ndarray]:
    """Line item ids in first-appearance order, and each field's index into that list."""
    index: dict[int, int] = {}
    item_of = np.array([index.setdefault(field.line_item_id, len(index)) for field in fields], dtype=np.int64)  # type: ignore[arg-type]
    return list(index), item_of


def maximum_assignment(weights: np.ndarray, pred_items: list[int], gold_items: list[int]) -> list[tuple[int, int]]:
    """The assignment of line items maximising the total weight, as (pred, gold) index pairs.

    The official code calls networkx's `minimum_weight_full_matching`, which orders the cost matrix
    by iterating Python sets of (side, line item id) nodes and then calls SciPy's
    `linear_sum_assignment`. Building the matrix in that same order makes ties between equally good
    assignments break the same way.
    """
    pred_nodes = [(0, item) for item in pred_items]
    gold_nodes = [(1, item) for item in gold_items]
    rows = list(set(pred_nodes))
    columns = list(set(pred_nodes + gold_nodes) - set(pred_nodes))
    pred_position = {node: k for k, node in enumerate(pred_nodes)}
    gold_position = {node: k for k, node in enumerate(gold_nodes)}
    row_index = np.array([pred_position[node] for node in rows])
    column_index = np.array([gold_position[node] for node in columns])
    costs = -weights[np.ix_(row_index, column_index)].astype(np.float64)
    assigned_rows, assigned_columns = linear_sum_assignment(costs)
    return [(int(row_index[r]), int(column_index[c])) for r, c in zip(assigned_rows, assigned_columns)]
