"""Matching predicted fields to gold fields, per document, as docile-benchmark 0.3.5 does.

KILE (docs/benchmarks.md#kile-matching): predictions in score order each take the first remaining gold of
their (fieldtype, page) whose PCC-set IoU passes the threshold. LIR (section 5): the same on every
(predicted line item, gold line item) pair, then the one-to-one assignment of line items that
maximises the number of matched fields. Location tests are vectorised over all pairs of a document
at once; only the greedy walk itself is a Python loop.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tore_engine.scorers.docile.dataset import Field
from tore_engine.scorers.docile.pcc import PCCSet, expand_ranges

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
    iou = np.zeros(shape)  # boxes that do not intersect have IoU 0
    pair_preds, pair_golds = np.nonzero(same_bucket & _intersects(pred_boxes, gold_boxes))
    if len(pair_preds):
        iou[pair_preds, pair_golds] = _pcc_iou(pcc_set, pred_boxes, pred_pages, gold_boxes, gold_pages, pair_preds, pair_golds)
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
    pcc_set: PCCSet,
    pred_boxes: np.ndarray,
    pred_pages: np.ndarray,
    gold_boxes: np.ndarray,
    gold_pages: np.ndarray,
    pair_preds: np.ndarray,
    pair_golds: np.ndarray,
) -> np.ndarray:
    """|G & Q| / |G | Q| of the covered PCC sets of each pair; 1 when both are empty."""
    box, pcc = pcc_set.covered(np.concatenate([pred_boxes, gold_boxes]), np.concatenate([pred_pages, gold_pages]))
    is_gold = box >= len(pred_boxes)
    pred_pcc, gold_box, gold_pcc = pcc[~is_gold], box[is_gold] - len(pred_boxes), pcc[is_gold]
    count = np.bincount(box, minlength=len(pred_boxes) + len(gold_boxes))
    pred_count, gold_count = count[: len(pred_boxes)], count[len(pred_boxes) :]
    # Each pair's predicted PCCs, looked up among its gold's PCCs through sorted (gold, PCC) keys.
    pair, position = expand_ranges((np.cumsum(pred_count) - pred_count)[pair_preds], pred_count[pair_preds])
    keys = pair_golds[pair] * len(pcc_set) + pred_pcc[position]
    gold_keys = gold_box * len(pcc_set) + gold_pcc  # ascending: grouped by box, PCCs ascending
    found = np.searchsorted(gold_keys, keys)
    shared = found < len(gold_keys)
    shared[shared] = gold_keys[found[shared]] == keys[shared]
    intersection = np.bincount(pair[shared], minlength=len(pair_preds))
    union = pred_count[pair_preds] + gold_count[pair_golds] - intersection
    return np.divide(intersection, union, out=np.ones(len(union)), where=union > 0)


def matching_order(predictions: Sequence[Field]) -> np.ndarray:
    """Indices sorted by (use_only_for_ap, -(score or 0), position): the official greedy order."""
    ap_only = np.array([field.use_only_for_ap for field in predictions], dtype=bool)
    negated_scores = np.array([-(field.score or 0.0) for field in predictions], dtype=np.float64)
    return np.lexsort((np.arange(len(predictions)), negated_scores, ap_only))


def greedy_matching(candidates: Mapping[int, Sequence[int]], order: Iterable[int]) -> dict[int, int]:
    """pred -> gold: each prediction in `order` takes the first still-free gold of its ascending
    `candidates`. Plain Python: the lists are tiny."""
    matched: dict[int, int] = {}
    taken: set[int] = set()
    for pred in order:
        for gold in candidates.get(pred, ()):
            if gold not in taken:
                taken.add(gold)
                matched[pred] = gold
                break
    return matched


def _candidates(matches: np.ndarray) -> dict[int, list[int]]:
    """pred -> the golds it matches, ascending."""
    candidates: dict[int, list[int]] = defaultdict(list)
    for pred, gold in zip(*(index.tolist() for index in np.nonzero(matches))):  # row-major: golds ascend
        candidates[pred].append(gold)
    return candidates


def _as_array(matched: Mapping[int, int], prediction_count: int) -> np.ndarray:
    pred_to_gold = np.full(prediction_count, -1, dtype=np.int64)
    pred_to_gold[list(matched)] = list(matched.values())
    return pred_to_gold


def match_kile(
    docid: str, pcc_set: PCCSet, predictions: Sequence[Field], golds: Sequence[Field], iou_threshold: float
) -> DocumentMatching:
    matches = location_matches(pcc_set, predictions, golds, iou_threshold)
    matched = greedy_matching(_candidates(matches), matching_order(predictions).tolist())
    return DocumentMatching(docid, _as_array(matched, len(predictions)), len(golds))


def match_lir(
    docid: str, pcc_set: PCCSet, predictions: Sequence[Field], golds: Sequence[Field], iou_threshold: float
) -> DocumentMatching:
    """Field matching inside the line-item assignment that maximises matched normal predictions."""
    if not predictions or not golds:
        return DocumentMatching(docid, _as_array({}, len(predictions)), len(golds), {})
    pred_items, pred_item_of = _line_items(predictions)
    gold_items, gold_item_of = _line_items(golds)
    order_in_item: dict[int, list[int]] = defaultdict(list)
    for pred in matching_order(predictions).tolist():
        order_in_item[pred_item_of[pred]].append(pred)
    # (pred item, gold item) -> pred -> its matching golds in that gold item
    pair_candidates: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for pred, matching_golds in _candidates(location_matches(pcc_set, predictions, golds, iou_threshold)).items():
        for gold in matching_golds:
            pair_candidates[(pred_item_of[pred], gold_item_of[gold])][pred].append(gold)

    # Field matching of every pair of line items that has a matching field pair at all; the
    # other pairs have no match and weight 0.
    weights = np.zeros((len(pred_items), len(gold_items)), dtype=np.int64)
    pair_matchings: dict[tuple[int, int], dict[int, int]] = {}
    for (pred_item, gold_item), item_candidates in pair_candidates.items():
        matched = greedy_matching(item_candidates, order_in_item[pred_item])
        pair_matchings[(pred_item, gold_item)] = matched
        weights[pred_item, gold_item] = sum(not predictions[pred].use_only_for_ap for pred in matched)

    assignment: dict[int, int] = {}
    matched_fields: dict[int, int] = {}
    for pred_item, gold_item in maximum_assignment(weights, pred_items, gold_items):
        if (pred_item, gold_item) in pair_matchings:  # else no field matches at all: dropped
            assignment[pred_items[pred_item]] = gold_items[gold_item]
            matched_fields.update(pair_matchings[(pred_item, gold_item)])
    return DocumentMatching(docid, _as_array(matched_fields, len(predictions)), len(golds), assignment)


def _line_items(fields: Sequence[Field]) -> tuple[list[int], list[int]]:
    """Line item ids in first-appearance order, and each field's index into that list."""
    index: dict[int, int] = {}
    item_of = [index.setdefault(field.line_item_id, len(index)) for field in fields]  # type: ignore[arg-type]
    return list(index), item_of


def maximum_assignment(weights: np.ndarray, pred_items: list[int], gold_items: list[int]) -> list[tuple[int, int]]:
    """The assignment of line items maximising the total weight, as (pred, gold) index pairs.

    The official code calls networkx's `minimum_weight_full_matching`, which orders the cost matrix
    by iterating Python sets of (side, line item id) nodes and then calls SciPy's
    `linear_sum_assignment`. Building the matrix in that same order makes ties between equally good
    assignments break the same way.
    """
    from scipy.optimize import (
        linear_sum_assignment,  # imported here: 0.3 s, needed for LIR only
    )

    pred_nodes = [(0, item) for item in pred_items]
    gold_nodes = [(1, item) for item in gold_items]
    rows = list(set(pred_nodes))
    columns = list(set(pred_nodes + gold_nodes) - set(pred_nodes))
    pred_position = {node: k for k, node in enumerate(pred_nodes)}
    gold_position = {node: k for k, node in enumerate(gold_nodes)}
    row_index = np.array([pred_position[node] for node in rows])
    column_index = np.array([gold_position[node] for node in columns])
    costs = -weights[row_index][:, column_index].astype(np.float64)
    assigned_rows, assigned_columns = linear_sum_assignment(costs)
    return [(int(row_index[r]), int(column_index[c])) for r, c in zip(assigned_rows, assigned_columns)]
