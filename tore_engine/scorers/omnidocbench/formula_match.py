"""Display-formula matching as the official OmniDocBench v1.6 evaluator chooses it: several candidate
matchings of the page's ground-truth formula rows to its predicted formulas (inline formulas and
formula-like text included) are built, and the one with the lowest total edit wins:

- the formulas' rows in the page-wide text match, and the quick matcher on formulas alone;
- a Hungarian assignment with the option to leave a row unmatched;
- an order-keeping dynamic programme that may join consecutive predicted formulas into one `array`,
  with and without skipping some;
- the same after splitting multi-line predictions into rows, or into every grouping of their rows;
- all of these again after rewriting `cases` blocks that chain logic as braced arrays.

Rows are the evaluator's match rows (`gt_idx`, `pred_idx`, `norm_gt`, `norm_pred`, `edit`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.optimize import linear_sum_assignment

from tore_engine.scorers.omnidocbench.formula_rows import (
    normalize_logic_braces,
    split_ground_truth_formulas,
    split_predicted_formulas,
)
from tore_engine.scorers.omnidocbench.formula_text import strip_delimiters
from tore_engine.scorers.omnidocbench.ground_truth import GtItem
from tore_engine.scorers.omnidocbench.markdown import FORMULA, INLINE, RESCUE, PredItem
from tore_engine.scorers.omnidocbench.quick_match import Lines, Row, quick_match

RESCUE_KINDS = ("text_formula", "image_formula", RESCUE, "table_formula_rescue")
ALLOWED_KINDS = ("", INLINE, FORMULA)
MAX_PARTITIONS = 128
MAX_PARTITION_ROWS = 8
_INFINITE: tuple[float, int, int, int] = (10**9, 10**9, 10**9, 10**9)  # (edit, distance, length, inline count)


def formula_kind(item: PredItem) -> str:
    kind = item.fine or item.category or FORMULA
    return FORMULA if kind in RESCUE_KINDS else kind


def normalize_kinds(rows: list[Row] | None) -> list[Row]:
    return [{**row, "pred_category_type": FORMULA} if row.get("pred_category_type") in RESCUE_KINDS else dict(row)
            for row in rows or []]


def candidate_pool(grouped: dict[str, list[PredItem]]) -> list[PredItem]:
    """Predicted formulas, then formula-like text and image descriptions as formulas; no duplicates."""
    pool: list[PredItem] = []
    seen: set[tuple[int, int, str, str, str]] = set()
    for item in grouped.get(FORMULA, []):
        _add_unique(pool, seen, item)
    for item in grouped.get(RESCUE, []):
        _add_unique(pool, seen, replace(item, category=FORMULA, fine=item.fine or RESCUE))
    return pool


def _add_unique(pool: list[PredItem], seen: set[tuple[int, int, str, str, str]], item: PredItem) -> None:
    key = (item.start, item.end, item.content, item.fine, item.category)
    if key not in seen:
        seen.add(key)
        pool.append(item)


def annotate(items: list[PredItem]) -> list[PredItem]:
    return [replace(item, source=item.source or (item.start, item.end, item.content, item.fine, item.category))
            for item in items]


def _ordered(items: list[PredItem]) -> list[PredItem]:
    return sorted(items, key=lambda item: (item.start, formula_kind(item) == INLINE, item.end))


def edit_or_empty(gt: str, pred: str) -> float:
    if not gt and not pred:
        return 0
    if not gt or not pred:
        return 1
    return Levenshtein.distance(gt, pred) / max(len(gt), len(pred))


def joined_formula(parts: list[str]) -> str:
    pieces = ["{" + stripped + "}" for part in parts if (stripped := strip_delimiters(part.strip()))]
    if not pieces:
        return ""
    if len(pieces) == 1:
        return pieces[0][1:-1]
    return "\\begin{array}{l} " + " \\\\ ".join(pieces) + " \\end{array}"


@dataclass
class Prepared:
    """Both sides' formula lines for one candidate (`pred_items` unfiltered, as upstream)."""

    raw: list[PredItem]
    ordered: list[PredItem]
    lines: Lines
    rescued: int

    @property
    def gt_count(self) -> int:
        return len(self.lines.norm_gt)

    @property
    def pred_count(self) -> int:
        return len(self.lines.norm_pred)


def prepare(gt_formula: list[GtItem], pred_formula: list[PredItem], split: bool) -> Prepared:
    pred_formula = annotate(pred_formula)
    raw = _ordered(pred_formula)
    ordered = split_predicted_formulas(raw) if split else raw
    rescued = sum(1 for item in pred_formula if formula_kind(item) in RESCUE_KINDS)
    return Prepared(raw, ordered, Lines(split_ground_truth_formulas(gt_formula), ordered), rescued)


def entry(prepared: Prepared, gt_index: int, page: str, sequence: list[int] | None = None) -> Row:
    lines = prepared.lines
    gt_item = lines.gt_items[gt_index]
    row: Row = {"gt_idx": [gt_index], "gt": lines.gt[gt_index], "pred_idx": [""], "pred": "",
                "gt_position": [gt_item.order if gt_item.order is not None else ""], "pred_position": "",
                "norm_gt": lines.norm_gt[gt_index], "norm_pred": "", "gt_category_type": lines.gt_categories[gt_index],
                "pred_category_type": "", "gt_attribute": [gt_item.attribute], "edit": 1, "img_id": page}
    if sequence:
        parts = [lines.pred[i] for i in sequence]
        norm_pred = " ".join(lines.norm_pred[i] for i in sequence).strip()
        row.update(pred_idx=list(sequence), pred=joined_formula(parts) if len(sequence) >= 2 else parts[0],
                   pred_position=lines.pred_items[sequence[0]].start, norm_pred=norm_pred,
                   pred_category_type=FORMULA if len(sequence) >= 2 else formula_kind(lines.pred_items[sequence[0]]),
                   edit=edit_or_empty(lines.norm_gt[gt_index], norm_pred))
    return row


# --- candidates ------------------------------------------------------------------------------------

def hungarian(prepared: Prepared, page: str) -> list[Row]:
    """Each row to at most one prediction; leaving a row unmatched costs 1."""
    gt_count, pred_count = prepared.gt_count, prepared.pred_count
    if gt_count <= 0:
        return []
    if pred_count <= 0:
        return [entry(prepared, g, page) for g in range(gt_count)]
    size = gt_count + pred_count
    costs = np.ones((size, size))
    costs[gt_count:, pred_count:] = 0.0
    for g in range(gt_count):
        for p in range(pred_count):
            costs[g, p] = edit_or_empty(prepared.lines.norm_gt[g], prepared.lines.norm_pred[p])
    assignment = dict(zip(*linear_sum_assignment(costs)))
    return [entry(prepared, g, page, [int(assignment[g])] if assignment.get(g, size) < pred_count else None)
            for g in range(gt_count)]


def _max_merge(gt_count: int, pred_count: int) -> int:
    if pred_count <= 0:
        return 0
    if gt_count <= 1:
        return min(pred_count, 10)
    return min(pred_count, 12 if abs(gt_count - pred_count) >= 2 else 10)


def sequences(pred_count: int, start: int, max_items: int, max_span: int, max_skips: int) -> list[tuple[int, ...]]:
    """Increasing index sequences from `start` within `max_span`, at most `max_items` long, skipping
    at most `max_skips` indices in all (depth first, as upstream enumerates them)."""
    if start >= pred_count:
        return []
    end = min(pred_count, start + max_span)
    found: list[tuple[int, ...]] = []

    def extend(sequence: list[int], skips: int) -> None:
        found.append(tuple(sequence))
        if len(sequence) >= max_items:
            return
        for following in range(sequence[-1] + 1, end):
            skipped = following - sequence[-1] - 1
            if skipped <= skips:
                extend(sequence + [following], skips - skipped)

    extend([start], max_skips)
    return found


def _mergeable(prepared: Prepared, sequence: tuple[int, ...]) -> bool:
    if len(sequence) < 2:
        return True
    items = [prepared.lines.pred_items[i] for i in sequence]
    if len({item.source for item in items}) == 1:
        return True
    return sequence[-1] - sequence[0] + 1 == len(sequence) and all(formula_kind(item) == FORMULA for item in items)


def _better(new: tuple, old: tuple) -> bool:
    if old == _INFINITE:
        return True
    if new[0] + 1e-12 < old[0]:
        return True
    if new[0] > old[0] + 1e-12:
        return False
    if new[2] > 0 and old[2] > 0:
        left, right = new[1] * old[2], old[1] * new[2]
        if left != right:
            return left < right
    elif new[2] > 0:
        return True
    elif old[2] > 0:
        return False
    return new[3] < old[3]


def ordered_programme(prepared: Prepared, page: str, allow_gaps: bool) -> list[Row] | None:
    """Rows matched in order to single predictions or runs of predictions joined as an array; each
    unmatched row or prediction costs 1 (the evaluator's DP candidate)."""
    gt_count, pred_count = prepared.gt_count, prepared.pred_count
    if gt_count <= 0 or pred_count <= 0:
        return None
    lines = prepared.lines
    max_merge = _max_merge(gt_count, pred_count)
    max_span = min(pred_count, max_merge + 2) if allow_gaps else max_merge
    max_skips = 0
    if allow_gaps:
        if abs(gt_count - pred_count) >= 1 or prepared.rescued > 0 or pred_count >= 4:
            max_skips = 1
        if abs(gt_count - pred_count) >= 3:
            max_skips = 2
    segments = {start: [(seq, norm, len(seq) < 2 and formula_kind(lines.pred_items[seq[0]]) == INLINE)
                        for seq in sequences(pred_count, start, max_merge, max_span, max_skips)
                        if (norm := " ".join(lines.norm_pred[i] for i in seq).strip()) and _mergeable(prepared, seq)]
                for start in range(pred_count)}  # the sequences upstream may use, the same for every row
    best = [[_INFINITE] * (pred_count + 1) for _ in range(gt_count + 1)]
    parent: list[list[Any]] = [[None] * (pred_count + 1) for _ in range(gt_count + 1)]
    best[0][0] = (0.0, 0, 0, 0)
    for g in range(gt_count + 1):
        for p in range(pred_count + 1):
            state = best[g][p]
            if state == _INFINITE:
                continue
            skip = (state[0] + 1.0, state[1], state[2], state[3])
            if p < pred_count and _better(skip, best[g][p + 1]):
                best[g][p + 1], parent[g][p + 1] = skip, (g, p, None)
            if g >= gt_count:
                continue
            if _better(skip, best[g + 1][p]):
                best[g + 1][p], parent[g + 1][p] = skip, (g, p, None)
            if p >= pred_count:
                continue
            gt_norm = lines.norm_gt[g]
            for sequence, norm_pred, inline in segments[p]:
                upper = max(len(gt_norm), len(norm_pred))
                distance = Levenshtein.distance(gt_norm, norm_pred) if upper > 0 else 0
                candidate = (state[0] + edit_or_empty(gt_norm, norm_pred), state[1] + distance, state[2] + upper,
                             state[3] + (1 if inline else 0))
                end = sequence[-1] + 1
                if _better(candidate, best[g + 1][end]):
                    best[g + 1][end], parent[g + 1][end] = candidate, (g, p, list(sequence))
    if parent[gt_count][pred_count] is None:
        return None
    rows: list[Row] = []
    g, p = gt_count, pred_count
    while g > 0 or p > 0:
        previous = parent[g][p]
        if previous is None:
            return None
        previous_g, previous_p, sequence = previous
        if previous_g != g:
            rows.append(entry(prepared, previous_g, page, sequence))
        g, p = previous_g, previous_p
    rows.reverse()
    return rows if len(rows) == gt_count else None


def complete(rows: list[Row] | None, expected: int) -> bool:
    """Whether `rows` give each of the `expected` ground-truth rows exactly once, with a formula."""
    if expected <= 0:
        return True
    if not rows or len(rows) != expected:
        return False
    seen = set()
    for row in rows:
        indices = row.get("gt_idx", [])
        if not isinstance(indices, list) or len(indices) != 1 or indices[0] in ("", None) or indices[0] in seen:
            return False
        seen.add(indices[0])
        if row.get("pred_category_type", "") not in ALLOWED_KINDS:
            return False
    return len(seen) == expected


@dataclass
class Candidate:
    name: str
    rows: list[Row]
    pred_count: int
    pred_items: list[PredItem]
    raw_pred_count: int
    logic_rewrites: int = 0
    key: tuple = field(default=(), compare=False)


def _unsplit(name: str, rows: list[Row], prepared: Prepared, logic: int = 0) -> Candidate:
    return Candidate(name, rows, len(prepared.raw), prepared.raw, len(prepared.raw), logic)


def _row_groupings(items: list[PredItem]) -> list[list[list[PredItem]]]:
    """Every way to cut a formula's rows into consecutive groups (by cut mask, upstream's order)."""
    if len(items) == 1:
        return [[items]]
    groupings = []
    for mask in range(1 << (len(items) - 1)):
        groups, start = [], 0
        for boundary in range(len(items) - 1):
            if mask & (1 << boundary):
                groups.append(items[start:boundary + 1])
                start = boundary + 1
        groups.append(items[start:])
        groupings.append(groups)
    return groupings


def _group_item(group: list[PredItem]) -> PredItem:
    if len(group) == 1:
        return group[0]
    content = joined_formula([item.content for item in group]).strip()
    if content and not any(content.startswith(a) and content.endswith(b) for a, b in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"))):
        content = f"\\[{content}\\]"
    return replace(group[0], content=content, start=group[0].start, end=group[-1].end, fine=FORMULA)


def regrouped_predictions(pred_formula: list[PredItem]) -> list[list[PredItem]]:
    """The prediction lists obtained by cutting each multi-line prediction (2-8 rows) into groups of
    consecutive rows, every combination (none when there are more than 128 or nothing splits)."""
    options, total, splits = [], 1, False
    for item in _ordered(annotate(pred_formula)):
        rows = split_predicted_formulas([item])
        if len(rows) <= 1 or len(rows) > MAX_PARTITION_ROWS:
            options.append([[item]])
            continue
        splits = True
        choices = [[_group_item(group) for group in grouping] for grouping in _row_groupings(rows)]
        total *= max(1, len(choices))
        if total > MAX_PARTITIONS:
            return []
        options.append(choices)
    if not splits:
        return []
    lists: list[list[PredItem]] = [[]]
    for choices in options:
        lists = [current + choice for current in lists for choice in choices]
    return lists


def _regrouped_hungarian(gt_formula: list[GtItem], pred_formula: list[PredItem], page: str) -> list[Candidate]:
    candidates, seen = [], set()
    raw_count = len(pred_formula)
    for predictions in regrouped_predictions(pred_formula):
        prepared = prepare(gt_formula, predictions, split=False)
        rows = hungarian(prepared, page)
        if not rows:
            continue
        key = tuple((tuple(row["gt_position"]), tuple(row["pred_idx"]), round(float(row["edit"]), 6)) for row in rows)
        if key in seen:
            continue
        seen.add(key)
        candidates.append(Candidate("split_hungarian", normalize_kinds(rows), len(prepared.raw), prepared.raw, raw_count))
    return candidates


def _split_programmes(gt_formula: list[GtItem], pred_formula: list[PredItem], page: str) -> list[Candidate]:
    prepared = prepare(gt_formula, pred_formula, split=True)
    if len(prepared.ordered) <= len(prepared.raw):
        return []
    candidates = []
    for name, gaps in (("split_dp", False), ("split_dp_allow_gaps", True)):
        rows = ordered_programme(prepared, page, gaps)
        if rows:
            candidates.append(Candidate(name, normalize_kinds(rows), len(prepared.ordered), prepared.ordered, len(prepared.raw)))
    return candidates


def _quick(gt_formula: list[GtItem], pred_formula: list[PredItem], page: str) -> list[Row]:
    rows = quick_match(gt_formula, pred_formula, page, split_predictions=False)
    return normalize_kinds([row for row in rows if row["gt_idx"] != [""]])


def _base_candidates(gt_formula: list[GtItem], pred_formula: list[PredItem], page: str, logic: int) -> list[Candidate]:
    """Quick, Hungarian and ordered matches without splitting, then the split ones."""
    prepared = prepare(gt_formula, pred_formula, split=False)
    expected = prepared.gt_count
    found = []
    quick_rows = _quick(gt_formula, pred_formula, page)
    if complete(quick_rows, expected):
        found.append(_unsplit("quick_unsplit", quick_rows, prepared, logic))
    rows = hungarian(prepared, page)
    if complete(rows, expected):
        found.append(_unsplit("hungarian_unsplit", normalize_kinds(rows), prepared, logic))
    for name, gaps in (("dp_unsplit", False), ("dp_unsplit_allow_gaps", True)):
        ordered = ordered_programme(prepared, page, gaps)
        if complete(ordered, expected):
            found.append(_unsplit(name, normalize_kinds(ordered), prepared, logic))
    for candidate in (*_regrouped_hungarian(gt_formula, pred_formula, page), *_split_programmes(gt_formula, pred_formula, page)):
        candidate.logic_rewrites = logic
        found.append(candidate)
    return found


def _logic_rewritten(pred_formula: list[PredItem]) -> tuple[list[PredItem], int]:
    rewritten, count = [], 0
    for item in annotate(pred_formula):
        if item.category == FORMULA:
            content = normalize_logic_braces(item.content)
            if content != item.content:
                item = replace(item, content=content)
                count += 1
        rewritten.append(item)
    return rewritten, count


def match_formulas(gt_formula: list[GtItem], pred_formula: list[PredItem], current: list[Row], page: str) -> list[Row]:
    """The display-formula rows of a page (the evaluator's `_match_display_formula_candidates`)."""
    prepared = prepare(gt_formula, pred_formula, split=False)
    candidates = []
    current_rows = normalize_kinds([row for row in current if row["gt_idx"] != [""]])
    if complete(current_rows, prepared.gt_count):
        candidates.append(_unsplit("current_match", current_rows, prepared))
    candidates += _base_candidates(gt_formula, pred_formula, page, 0)
    rewritten, count = _logic_rewritten(pred_formula)
    if count > 0:
        candidates += _base_candidates(gt_formula, rewritten, page, count)
    best = None
    for candidate in candidates:
        candidate.key = _total_key(candidate)
        if best is None or _lower(candidate.key, best.key):
            best = candidate
    return list(best.rows) if best else []


def _total_key(candidate: Candidate) -> tuple:
    rows = [row for row in candidate.rows if row.get("gt_idx") != [""]]
    total_edit = sum(float(row.get("edit", 1)) for row in rows)
    used: set = set()
    for row in candidate.rows:
        if row.get("pred_idx") in ([""], ""):
            continue
        for index in row["pred_idx"]:
            if index in ("", None):
                continue
            try:
                item = candidate.pred_items[int(index)]
            except (TypeError, ValueError, IndexError):
                continue
            if item.source is not None:
                used.add(item.source)
    stats = _page_stats(rows)
    return (total_edit, stats[0], max(0, candidate.raw_pred_count - len(used)), stats[1], -candidate.logic_rewrites, stats[2])


def _page_stats(rows: list[Row]) -> tuple[float, float, int]:
    """Weighted edit, mean edit, unmatched rows (inf, inf, 0 without rows)."""
    if not rows:
        return float("inf"), float("inf"), 0
    edits = upper = 0
    for row in rows:
        if row.get("pred_idx", []) in ([""], ""):
            continue
        gt, pred = str(row.get("norm_gt", "") or ""), str(row.get("norm_pred", "") or "")
        longest = max(len(gt), len(pred))
        upper += longest
        if longest > 0:
            edits += Levenshtein.distance(gt, pred)
    unmatched = sum(1 for row in rows if row.get("pred_idx") in ([""], ""))
    mean = sum(float(row.get("edit", 1)) for row in rows) / len(rows)
    return (edits / upper) if upper else 0, mean, unmatched


def _lower(key: tuple, best: tuple) -> bool:
    for value, other in zip(key, best):
        if value + 1e-12 < other:
            return True
        if value > other + 1e-12:
            return False
    return False
