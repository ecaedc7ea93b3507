"""The official OmniDocBench v1.6 page matcher (`match_gt2pred_quick`) and its table matcher
(`match_gt2pred_simple`), reproduced step by step because the leaderboard numbers depend on every
step, quirks included:

1. Lines: ground-truth text and formulas and the predicted paragraphs and formulas, normalised; empty
   ones are dropped from the lines but not from the item lists, so an element after a dropped one
   takes the order (ground truth) or position (prediction) of its neighbour, as upstream.
2. Captions, headers, footers and the like ("unscored" categories) are paired first with any
   prediction within normalised edit distance 0.25.
3. Predicted lines that together continue one ground-truth element are merged (truncated text), a
   Hungarian assignment pairs the rest; pairs above 0.7 are undone.
4. Unpaired ground-truth elements are attached to a prediction that contains them (fuzzy substring
   below 0.4), several elements sharing a prediction are joined.
5. The leftovers on both sides are paired by a second Hungarian assignment with no cost limit.

The result is a list of match rows in the shape of the evaluator's per-element files.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment

from tore_engine.scorers.omnidocbench.formula_rows import (
    split_ground_truth_formulas,
    split_predicted_formulas,
)
from tore_engine.scorers.omnidocbench.formula_text import (
    normalize_formula as _normalize_formula,
)
from tore_engine.scorers.omnidocbench.formula_text import strip_delimiters
from tore_engine.scorers.omnidocbench.ground_truth import (
    FORMULA,
    TEXT_CATEGORIES,
    UNSCORED_TEXT,
    GtItem,
)
from tore_engine.scorers.omnidocbench.latex_text import (
    normalize_text as _normalize_text,
)
from tore_engine.scorers.omnidocbench.markdown import INLINE, TEXT, PredItem

Row = dict[str, Any]
Item = TypeVar("Item", GtItem, PredItem)
MAX_PAIR_COST = 0.7
FIRST_PASS_COST = 0.25
MAX_MERGED_PREDICTIONS = 160
MERGE_THRESHOLD = 0.6
CONTAINED_THRESHOLD = 0.4


@lru_cache(maxsize=1 << 16)
def normalize_text(text: str) -> str:
    return _normalize_text(text)


@lru_cache(maxsize=1 << 16)
def normalize_formula(text: str) -> str:
    return _normalize_formula(text)


def cost_matrix(rows: list[str], columns: list[str]) -> np.ndarray:
    """Normalised edit distances (0 for two empty strings)."""
    if not rows or not columns:
        return np.zeros((len(rows), len(columns)))
    distances = cdist(rows, columns, scorer=Levenshtein.distance, dtype=np.int64).astype(np.float64)
    lengths = np.maximum.outer(np.array([len(r) for r in rows]), np.array([len(c) for c in columns])).astype(np.float64)
    return np.divide(distances, lengths, out=np.zeros_like(distances), where=lengths > 0)


def normalized_edit(first: str, second: str) -> float:
    return Levenshtein.distance(first, second) / max(len(first), len(second))


def sort_by_position(items: list[PredItem]) -> list[tuple[int, PredItem]]:
    """Items by start, inline formulas last, stable (the evaluator's `sort_by_position_skip_inline`)."""
    return sorted(enumerate(items), key=lambda pair: (pair[1].fine == INLINE, pair[1].start, pair[0]))


class Lines:
    """Raw and normalised lines of both sides; `gt_items` and `pred_items` are not filtered."""

    def __init__(self, gt_items: list[GtItem], pred_items: list[PredItem]) -> None:
        self.gt_items, self.pred_items = gt_items, pred_items
        gt = []
        for item in gt_items:
            if item.category in TEXT_CATEGORIES:
                gt.append((item.text, normalize_text(item.text), item.category))
            elif item.category == FORMULA:
                gt.append((item.latex, normalize_formula(item.latex), item.category))
        gt = [line for line in gt if line[0] and line[1]]
        self.gt, self.norm_gt, self.gt_categories = ([list(column) for column in zip(*gt)] if gt else ([], [], []))
        pred = [(item.content, _normalized_prediction(item)) for item in pred_items]
        pred = [line for line in pred if line[0] and line[1]]
        self.pred, self.norm_pred = ([list(column) for column in zip(*pred)] if pred else ([], []))


def _normalized_prediction(item: PredItem) -> str:
    if item.category == TEXT:
        return normalize_text(item.content)
    if item.category == FORMULA:
        return normalize_formula(item.content)
    return item.content


def quick_match(gt_items: list[GtItem], pred_items: list[PredItem], page: str, split_predictions: bool = True) -> list[Row]:
    """The evaluator's `match_gt2pred_quick` (without its time limits)."""
    gt_items = split_ground_truth_formulas(gt_items)
    pred_items = [item for _, item in sort_by_position(pred_items)]
    if split_predictions:
        pred_items = split_predicted_formulas(pred_items)
    lines = Lines(gt_items, pred_items)
    if not lines.norm_gt:
        return [_unmatched_prediction_row(lines, index, page) for index in range(len(lines.norm_pred))]
    if not lines.norm_pred:
        return [_unmatched_gt_row(lines, index, page) for index in range(len(lines.norm_gt))]
    if len(lines.norm_gt) == 1 and len(lines.norm_pred) == 1:
        row = _unmatched_gt_row(lines, 0, page)
        row.update(pred_idx=[0], pred=lines.pred[0], pred_position=pred_items[0].start, norm_pred=lines.norm_pred[0],
                   pred_category_type=pred_items[0].kind, edit=normalized_edit(lines.norm_gt[0], lines.norm_pred[0]))
        return [row]
    unscored = [i for i, category in enumerate(lines.gt_categories) if category in UNSCORED_TEXT]
    scored = [i for i, category in enumerate(lines.gt_categories) if category not in UNSCORED_TEXT]
    unscored_rows, taken = _match_unscored(lines, unscored, page)
    free = [index for index in range(len(lines.norm_pred)) if index not in taken]
    rows = _match_scored(lines, scored, free, page)
    return rows + unscored_rows


def _unmatched_prediction_row(lines: Lines, index: int, page: str) -> Row:
    return {"gt_idx": [""], "gt": "", "pred_idx": [index], "pred": lines.pred[index], "gt_position": [""],
            "pred_position": lines.pred_items[index].start, "norm_gt": "", "norm_pred": lines.norm_pred[index],
            "gt_category_type": "", "pred_category_type": lines.pred_items[index].kind, "gt_attribute": [{}],
            "edit": 1, "img_id": page}


def _unmatched_gt_row(lines: Lines, index: int, page: str) -> Row:
    item = lines.gt_items[index]
    return {"gt_idx": [index], "gt": lines.gt[index], "pred_idx": [""], "pred": "", "gt_position": [item.position],
            "pred_position": "", "norm_gt": lines.norm_gt[index], "norm_pred": "",
            "gt_category_type": lines.gt_categories[index], "pred_category_type": "",
            "gt_attribute": [item.attribute], "edit": 1, "img_id": page}


class _Side(Generic[Item]):
    """A subset of the lines: normalised and raw text, items and categories (the ground truth's;
    none for predictions), and the indices of the subset's lines among all lines."""

    def __init__(self, norm: list[str], raw: list[str], items: list[Item], indices: list[int], categories: list[str] | None = None) -> None:
        self.norm, self.raw, self.indices = norm, raw, indices
        self.items: list[Item] = items
        self.categories = categories or []


def _match_unscored(lines: Lines, unscored: list[int], page: str) -> tuple[list[Row], list]:
    """Captions, headers and the like against every prediction within 0.25: returns their rows and
    the predictions they took (the evaluator's first pass)."""
    if not unscored:
        return [], []
    gt = _Side([lines.norm_gt[i] for i in unscored], [lines.gt[i] for i in unscored],
               [lines.gt_items[i] for i in unscored], unscored, [lines.gt_categories[i] for i in unscored])
    costs = cost_matrix(gt.norm, lines.norm_pred)
    pairs = np.argwhere(costs < FIRST_PASS_COST)
    taken = [int(pair[1]) for pair in pairs]
    pred = _Side([lines.norm_pred[i] for i in taken], [lines.pred[i] for i in taken],
                 [lines.pred_items[i] for i in taken], taken)
    matches = {int(pair[0]): {"pred_indices": [k], "edit_distance": costs[pair[0]][pair[1]]} for k, pair in enumerate(pairs)}
    final = merge_matches(matches, {})
    recalculate_edits(final, gt.norm, pred.norm)
    rows = merge_duplicates(convert_final_matches(final, gt.norm, pred.norm), gt.norm, gt.raw)
    return _finish_rows(rows, gt, pred, page, formulas_as_arrays=False), taken


def _match_scored(lines: Lines, scored: list[int], free: list[int], page: str) -> list[Row]:
    gt = _Side([lines.norm_gt[i] for i in scored], [lines.gt[i] for i in scored],
               [lines.gt_items[i] for i in scored], scored, [lines.gt_categories[i] for i in scored])
    pred = _Side([lines.norm_pred[i] for i in free], [lines.pred[i] for i in free],
                 [lines.pred_items[i] for i in free], free)
    matched_columns, assigned_rows, costs = final_assignment(cost_matrix(gt.norm, pred.norm), gt.norm, pred.norm)
    matches, unmatched_gt = _accepted_pairs(matched_columns, assigned_rows, costs, len(gt.norm))
    contained = _contained_in_predictions(unmatched_gt, gt.norm, pred.norm, gt.categories)
    final = merge_matches(matches, contained)
    recalculate_edits(final, gt.norm, pred.norm)
    rows = merge_duplicates(convert_final_matches(final, gt.norm, pred.norm), gt.norm, gt.raw)
    return _finish_rows(rows, gt, pred, page, formulas_as_arrays=True)


def _finish_rows(rows: list[Row], gt: _Side[GtItem], pred: _Side[PredItem], page: str, formulas_as_arrays: bool) -> list[Row]:
    """Fill the rows' text, positions, categories and attributes, then map their indices to the
    page's lines. An unmatched inline formula is dropped (and, as upstream removes it from the list
    it walks, the row after it is not filled: it is always the last row)."""
    kept = []
    for row in rows:
        if row["gt_idx"] == [""]:
            row["gt_category_type"] = ""
            if _category(pred, row["pred_idx"]) == INLINE:
                continue
        else:
            row["gt_category_type"] = _majority_category([gt.categories[i] for i in row["gt_idx"]])
        _fill_row(row, gt, pred, page, formulas_as_arrays)
        kept.append(row)
    for row in kept:
        if row["gt_idx"] != [""]:
            row["gt_idx"] = [gt.indices[i] for i in row["gt_idx"]]
        if row["pred_idx"] != [""]:
            row["pred_idx"] = [int(pred.indices[i]) for i in row["pred_idx"]]
    return kept


def _category(pred: _Side[PredItem], indices: list) -> str:
    return pred.items[indices[0]].kind if indices != [""] else ""


def _majority_category(categories: list[str]) -> str:
    scored = [category for category in categories if category not in UNSCORED_TEXT]
    return Counter(scored or categories).most_common(1)[0][0]


def _fill_row(row: Row, gt: _Side[GtItem], pred: _Side[PredItem], page: str, formulas_as_arrays: bool) -> None:
    gt_indices, pred_indices = row["gt_idx"], row["pred_idx"]
    has_gt, has_pred = gt_indices != [""], pred_indices != [""]
    row["gt_position"] = [gt.items[i].position for i in gt_indices] if has_gt else [""]
    row["pred_position"] = pred.items[pred_indices[0]].start if has_pred else ""
    if formulas_as_arrays and row["gt_category_type"] == FORMULA and len(gt_indices) > 1:
        row["gt"] = as_array([gt.raw[i] for i in gt_indices])
    else:
        row["gt"] = "".join(gt.raw[i] for i in gt_indices) if has_gt else ""
    row["pred_category_type"] = _category(pred, pred_indices)
    row["gt_attribute"] = [gt.items[i].attribute for i in gt_indices] if has_gt else [{}]
    row["img_id"] = page
    if formulas_as_arrays and "equation" in row["pred_category_type"] and len(pred_indices) > 1:
        row["pred"] = as_array([pred.raw[i] for i in pred_indices])
    else:
        row["pred"] = "".join(pred.raw[i] for i in pred_indices) if has_pred else ""
    row["norm_gt"] = "".join(gt.norm[i] for i in gt_indices) if has_gt else ""
    row["norm_pred"] = "".join(pred.norm[i] for i in pred_indices) if has_pred else ""


def as_array(formulas: list[str]) -> str:
    """Several formulas as one `array` (the evaluator joins matched formula rows this way)."""
    return "\\begin{array}{l} " + " \\\\ ".join("{" + strip_delimiters(f) + "}" for f in formulas) + " \\end{array}"


# --- the evaluator's assignment helpers -----------------------------------------------------------

def final_assignment(costs: np.ndarray, gt: list[str], pred: list[str]) -> tuple[list, np.ndarray, list[float]]:
    """Hungarian assignment after merging predicted lines that continue one ground-truth element:
    the matched prediction of each assigned row (an index, or a list of merged indices), the
    assigned rows, their costs."""
    merged_costs, columns = merge_truncated(costs, gt, pred)
    rows, cols = linear_sum_assignment(merged_costs)
    return [columns[c] for c in cols], rows, [merged_costs[r][c] for r, c in zip(rows, cols)]


def merge_truncated(costs: np.ndarray, gt: list[str], pred: list[str]) -> tuple[np.ndarray, list]:
    """The evaluator's `deal_with_truncated`: for each ground-truth line without a near-exact match,
    the run of consecutive free predictions that best rebuilds it; non-overlapping runs are merged."""
    close = np.argwhere(costs < FIRST_PASS_COST)
    masked_gt = {int(pair[0]) for pair in close}
    masked_pred = {int(pair[1]) for pair in close}
    free_gt = [i for i in range(costs.shape[0]) if i not in masked_gt]
    free_pred = [i for i in range(costs.shape[1]) if i not in masked_pred]
    runs, run_costs = [], []
    for gt_index in free_gt:
        best: tuple[float, list[int]] | None = None
        for pred_index in free_pred:
            run = _run_from(gt[gt_index], pred, pred_index, masked_pred)
            joined = " ".join(pred[i] for i in run)
            cost = Levenshtein.distance(gt[gt_index], joined) / max(len(joined), len(gt[gt_index]))
            if best is None or cost < best[0]:
                best = (cost, run)
        if best is not None:
            runs.append(best[1])
            run_costs.append(best[0])
    chosen = final_subsets(runs, run_costs)
    if not chosen:
        return costs, list(range(len(pred)))
    columns = merge_lists_with_sublists(list(range(len(pred))), chosen)
    merged = [" ".join(pred[column[0]:column[-1] + 1]) if isinstance(column, list) else pred[column] for column in columns]
    return cost_matrix(gt, merged), columns


def _run_from(gt_line: str, pred: list[str], start: int, masked: set[int]) -> list[int]:
    step, merged = 1, [pred[start]]
    while step < MAX_MERGED_PREDICTIONS:
        if start + step in masked or start + step >= len(pred):
            break
        merged.append(pred[start + step])
        keep, go_on = judge_merge(gt_line, merged)
        if not keep:
            break
        step += 1
        if not go_on:
            break
    return list(range(start, start + step))


def judge_merge(gt_line: str, merged: list[str]) -> tuple[bool, bool]:
    """Whether adding the last prediction keeps rebuilding `gt_line`, and whether to go on."""
    if len(merged) == 1:
        return False, False
    current, extended = " ".join(merged[:-1]), " ".join(merged)
    if normalized_edit(gt_line, extended) > normalized_edit(gt_line, current):
        return False, False
    if not all(has_window(gt_line, piece, MERGE_THRESHOLD, inclusive=True) for piece in merged[:-1]):
        return False, False
    last = merged[-1]
    if not 0 < len(last) <= len(gt_line):
        return False, False
    return has_window(gt_line, last, MERGE_THRESHOLD, inclusive=False), len(extended) <= len(gt_line)


@lru_cache(maxsize=1 << 16)  # a merge re-tests the same pieces at every step; cleared with the page
def has_window(text: str, pattern: str, bound: float, inclusive: bool) -> bool:
    """Whether some window of `text` as long as `pattern` is within `bound` of it (edit distance over
    the length; below it, or at most it when `inclusive`). The evaluator's fuzzy substring search
    takes the smallest such ratio and compares it with the bound; this stops at the first window
    that passes. False when `pattern` is empty or longer than `text`."""
    width = len(pattern)
    if width == 0 or width > len(text):
        return False
    limit = int(bound * width) + 1
    for start in range(len(text) - width + 1):
        ratio = Levenshtein.distance(text[start:start + width], pattern, score_cutoff=limit) / width
        if ratio <= bound if inclusive else ratio < bound:
            return True
    return False


def final_subsets(runs: list[list[int]], run_costs: list[float]) -> list[list[int]]:
    """The evaluator's `get_final_subset`: overlapping runs grouped, and in each group the
    non-overlapping set of runs with the lowest mean cost."""
    if not runs:
        return []
    ordered = sorted(zip(runs, run_costs), key=lambda pair: pair[0][0])
    groups: list[list] = [[ordered[0]]]
    for item in ordered[1:]:
        if any(index in run for run, _ in groups[-1] for index in item[0]):
            groups[-1].append(item)
        else:
            groups.append([item])
    chosen: list[list[int]] = []
    for group in groups:
        if len(group) == 1:
            chosen.append(group[0][0])
            continue
        paths: dict[int, list] = defaultdict(list)
        paths[0].append(group[0])
        for subset in group[1:]:
            _place(paths, subset)
        best_cost, best = float("inf"), []
        for path in paths.values():
            mean = sum(cost for _, cost in path) / len(path)
            if mean < best_cost:
                best, best_cost = [run for run, _ in path], mean
        chosen.extend(best)
    return chosen


def _place(paths: dict[int, list], subset: tuple) -> None:
    new_path = True
    for path in list(paths.values()):
        duplicate = same = False
        for item in list(path):
            if item[0] == subset[0]:
                duplicate = same = True
                if item[1] > subset[1]:
                    path.pop(path.index(item))
                    path.append(subset)
            elif any(a == b for a in item[0] for b in subset[0]):
                duplicate = True
        if not duplicate:
            path.append(subset)
            new_path = False
        if same:
            new_path = False
    if new_path:
        paths[len(paths)].append(subset)


def merge_lists_with_sublists(indices: list, runs: list[list[int]]) -> list:
    for run in runs:
        at = indices.index(run[0])
        del indices[at:at + len(run)]
        indices.insert(at, run)
    return indices


def _accepted_pairs(matched_columns: list, assigned_rows: np.ndarray, costs: list[float], count: int) -> tuple[dict, list[int]]:
    """Assigned pairs up to 0.7 (the evaluator's `process_matches`); the other rows are unmatched."""
    matches: dict[int, dict] = {}
    unmatched: list[int] = []
    position = {int(row): k for k, row in enumerate(assigned_rows)}
    for row in range(count):
        if row not in position:
            unmatched.append(row)
            continue
        k = position[row]
        column = matched_columns[k]
        indices = list(range(column[0], column[-1] + 1)) if isinstance(column, list) else [column]
        if costs[k] > MAX_PAIR_COST:
            unmatched.append(row)
        else:
            matches[row] = {"pred_indices": indices, "edit_distance": costs[k]}
    return matches, unmatched


def _contained_in_predictions(unmatched: list[int], gt: list[str], pred: list[str], categories: list[str]) -> dict[int, list[int]]:
    """For each prediction, the unmatched ground-truth lines (not formulas) found inside it with a
    fuzzy substring distance below 0.4."""
    found: dict[int, list[int]] = {}
    for pred_index, text in enumerate(pred):
        inside = []
        for gt_index in unmatched:
            if categories[gt_index] == FORMULA:
                continue
            if has_window(text, gt[gt_index], CONTAINED_THRESHOLD, inclusive=False):
                inside.append(gt_index)
        if inside:
            found[pred_index] = inside
    return found


def merge_matches(matches: dict, contained: dict) -> dict[tuple, dict]:
    """Pairs keyed by their predictions; contained lines added to the prediction holding them."""
    final: dict[tuple, dict] = {}
    processed: set = set()
    for gt_index, match in matches.items():
        key = tuple(sorted(match["pred_indices"]))
        if key in final:
            if gt_index not in processed:
                final[key]["gt_indices"].append(gt_index)
                processed.add(gt_index)
        else:
            final[key] = {"gt_indices": [gt_index], "edit_distance": match["edit_distance"]}
            processed.add(gt_index)
    for pred_index, gt_indices in contained.items():
        key = (pred_index,)
        if key in final:
            for gt_index in gt_indices:
                if gt_index not in processed:
                    final[key]["gt_indices"].append(gt_index)
                    processed.add(gt_index)
        else:
            final[key] = {"gt_indices": [g for g in gt_indices if g not in processed], "edit_distance": None}
            processed.update(final[key]["gt_indices"])
    return final


def recalculate_edits(final: dict[tuple, dict], gt: list[str], pred: list[str]) -> None:
    for key, info in final.items():
        gt_indices = sorted(set(info["gt_indices"]))
        if not gt_indices:
            info["edit_distance"] = 1
            continue
        if len(gt_indices) > 1:
            merged_gt = "".join(gt[i] for i in gt_indices)
            text = pred[key[0]] if isinstance(key[0], int) else ""
        else:
            merged_gt = gt[gt_indices[0]]
            text = " ".join(pred[i] for i in key if isinstance(i, int))
        longest = max(len(merged_gt), len(text))
        info["edit_distance"] = Levenshtein.distance(merged_gt, text) / longest if longest else 1


def convert_final_matches(final: dict[tuple, dict], gt: list[str], pred: list[str]) -> list[Row]:
    """One row per (prediction key, ground-truth line); then the leftovers: leftover ground truth
    and predictions paired by a Hungarian assignment (edit 1), or the leftover predictions as one
    row without ground truth, or the leftover ground truth unmatched."""
    rows: list[Row] = []
    for key, info in final.items():
        text = " ".join(pred[i] for i in key if isinstance(i, int))
        for gt_index in sorted(set(info["gt_indices"])):
            rows.append({"gt_idx": int(gt_index), "gt": gt[gt_index], "pred_idx": list(key), "pred": text,
                         "edit": info["edit_distance"]})
    matched_gt = set().union(*[set(info["gt_indices"]) for info in final.values()])
    unmatched_gt = set(range(len(gt))) - matched_gt
    matched_pred = {i for key in final for i in key if isinstance(i, int)}
    unmatched_pred = set(range(len(pred))) - matched_pred
    if unmatched_pred and unmatched_gt:
        gt_list, pred_list = list(unmatched_gt), list(unmatched_pred)
        distances = [[normalized_edit(gt[g], pred[p]) for p in pred_list] for g in gt_list]
        for i, j in zip(*linear_sum_assignment(distances)):
            rows.append({"gt_idx": int(gt_list[i]), "gt": gt[gt_list[i]], "pred_idx": [pred_list[j]],
                         "pred": pred[pred_list[j]], "edit": 1})
    elif unmatched_pred:
        rows.append({"gt_idx": "", "gt": "", "pred_idx": list(unmatched_pred),
                     "pred": " ".join(pred[i] for i in unmatched_pred), "edit": 1})
    else:
        rows += [{"gt_idx": int(g), "gt": gt[g], "pred_idx": "", "pred": "", "edit": 1} for g in unmatched_gt]
    return rows


def merge_duplicates(rows: list[Row], gt_norm: list[str], gt_raw: list[str]) -> list[Row]:
    """Rows sharing a prediction joined; ground-truth lines in no row added as unmatched."""
    merged: list[Row] = []
    seen_pred: set = set()
    seen_gt: set = set()
    for row in rows:
        key = tuple(row["pred_idx"]) if isinstance(row["pred_idx"], list) else (row["pred_idx"],)
        if key in seen_pred or key == ("",):
            continue
        entry = {"gt_idx": [row["gt_idx"]], "gt": row["gt"], "pred_idx": row["pred_idx"], "pred": row["pred"],
                 "edit": row["edit"]}
        for other in rows:
            other_key = tuple(other["pred_idx"]) if isinstance(other["pred_idx"], list) else (other["pred_idx"],)
            if other_key == key and other is not row:
                entry["gt_idx"].append(other["gt_idx"])
                entry["gt"] += other["gt"]
                seen_gt.add(other["gt_idx"])
        merged.append(entry)
        seen_pred.add(key)
        seen_gt.add(row["gt_idx"])
    merged += [{"gt_idx": [g], "gt": gt_raw[g], "pred_idx": [""], "pred": "", "edit": 1}
               for g in range(len(gt_norm)) if g not in seen_gt]
    return merged


# --- tables ---------------------------------------------------------------------------------------

def simple_match(gt_items: list[GtItem], pred_items: list[PredItem], gt_lines: list[str], norm_gt: list[str],
                 pred_lines: list[str], norm_pred: list[str], page: str) -> list[Row]:
    """The evaluator's `match_gt2pred_simple` for tables: one Hungarian assignment on normalised
    HTML, every ground-truth table in a row. A table matched to the first predicted table gets no
    prediction position or category (upstream reads index 0 as "none"): `first_prediction_quirk`
    marks those rows, for the corrected reading order."""
    rows: list[Row] = []
    if not norm_gt:
        return rows
    assignment: dict[int, int] = {}
    costs = cost_matrix(norm_gt, norm_pred)
    if norm_pred:
        assignment = {int(r): int(c) for r, c in zip(*linear_sum_assignment(costs))}
    for gt_index in range(len(norm_gt)):
        item = gt_items[gt_index]
        pred_index = assignment.get(gt_index)  # None: unmatched, "" in the row
        rows.append({
            "gt_idx": [gt_index], "gt": gt_lines[gt_index], "norm_gt": norm_gt[gt_index], "gt_category_type": item.category,
            "gt_position": [item.position], "gt_attribute": [item.attribute], "pred_idx": ["" if pred_index is None else pred_index],
            "pred": pred_lines[pred_index] if pred_index is not None else "",
            "norm_pred": norm_pred[pred_index] if pred_index is not None else "",
            "pred_category_type": pred_items[pred_index].kind if pred_index else "",
            "pred_position": pred_items[pred_index].start if pred_index else "",
            "edit": costs[gt_index][pred_index] if pred_index is not None else 1, "img_id": page,
            "first_prediction_quirk": pred_index == 0,
            "corrected_pred_position": pred_items[pred_index].start if pred_index is not None else "",
        })
    return rows
