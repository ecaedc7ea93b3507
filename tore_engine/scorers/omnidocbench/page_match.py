"""One page matched as the official OmniDocBench v1.6 evaluator matches it
(`process_get_matched_elements`): tables by a Hungarian assignment on normalised HTML; text and
display formulas together by the quick matcher; pairs of a formula with text re-normalised as text;
badly matched long text or titles re-matched to a run of neighbouring predictions when that is much
better; display formulas re-matched by the best of several candidate matchings; captions, headers
and the like dropped from the text rows; the reading order taken from all kept rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tore_engine.scorers.omnidocbench.formula_match import (
    candidate_pool,
    edit_or_empty,
    match_formulas,
)
from tore_engine.scorers.omnidocbench.formula_text import strip_delimiters
from tore_engine.scorers.omnidocbench.ground_truth import (
    FORMULA,
    TABLE,
    TEXT_CATEGORIES,
    UNSCORED_TEXT,
    GtItem,
    page_elements,
    sorted_by_order,
    text_and_formulas,
)
from tore_engine.scorers.omnidocbench.latex_text import inline_formulas, inline_latex_to_unicode
from tore_engine.scorers.omnidocbench.markdown import HTML_TABLE, INLINE, LATEX_TABLE, RESCUE, TEXT, PredItem, parse_markdown
from tore_engine.scorers.omnidocbench.quick_match import Row, has_window, normalize_formula, normalize_text, quick_match, simple_match, sort_by_position
from tore_engine.scorers.omnidocbench.reference import ReferencePage
from tore_engine.scorers.omnidocbench.tables import normalize_table_html

_FORMULA_KINDS = (FORMULA, INLINE)
_HINT_TOKENS = (r"\frac", r"\sum", r"\int", r"\sqrt", r"\left", r"\right")


@dataclass
class PageMatch:
    """A page's match rows by element type, and its reading-order sequences (official and with
    the first predicted table given its position)."""

    page: str
    text: list[Row] = field(default_factory=list)
    formula: list[Row] = field(default_factory=list)
    table: list[Row] = field(default_factory=list)
    reading_order: dict | None = None
    reading_order_corrected: dict | None = None


def match_page(page: ReferencePage, prediction: str | None) -> PageMatch:
    """The page's match rows; `prediction` is its Markdown (None when there is no file: an empty page)."""
    name = page.id.rsplit("/", 1)[-1]
    for cache in (normalize_text, normalize_formula, has_window):  # the caches serve one page: every page
        cache.cache_clear()  # costs the same, however many repeat
    grouped = parse_markdown(prediction or "")
    elements = page_elements(page)
    mix = [item for category, items in grouped.items() if category not in (HTML_TABLE, LATEX_TABLE, "md2html_table", RESCUE)
           for item in items]
    result = PageMatch(name)
    result.table = _match_tables(elements.get(TABLE, []), grouped, name)
    rows = [cross_category(row) for row in quick_match(text_and_formulas(elements), mix, name)]
    rows = local_text_fallback(rows, mix)
    result.text = [row for row in rows if row.get("gt_category_type") in TEXT_CATEGORIES
                   and row["gt_category_type"] not in UNSCORED_TEXT]
    formula_rows = [row for row in rows if row.get("gt_category_type") == FORMULA and row["gt_idx"] != [""]]
    gt_formula = sorted_by_order(elements.get(FORMULA, []))
    pred_formula = candidate_pool(grouped)
    result.formula = match_formulas(gt_formula, pred_formula, formula_rows, name) if gt_formula or pred_formula else formula_rows
    ordered = result.text + result.formula + result.table
    if ordered:
        result.reading_order = order_pair(ordered, name, corrected=False)
        result.reading_order_corrected = order_pair(ordered, name, corrected=True)
    return result


# --- tables ---------------------------------------------------------------------------------------

def _table_line(text: str) -> str:
    return normalize_table_html(text) if "<table" in text.lower() else text


def _match_tables(gt_tables: list[GtItem], grouped: dict[str, list[PredItem]], page: str) -> list[Row]:
    if not gt_tables:
        return []
    gt_tables = sorted_by_order(gt_tables)
    predictions = list(grouped.get(HTML_TABLE, []))
    predictions += [PredItem(HTML_TABLE, item.start, item.end, "", item.fine) for item in grouped.get(LATEX_TABLE, [])]
    gt = [(item.html, _table_line(item.html)) for item in gt_tables]
    gt = [line for line in gt if line[0] and line[1]]
    pred = [(item.content, _table_line(item.content)) for item in predictions]
    pred = [line for line in pred if line[0] and line[1]]
    rows = simple_match(gt_tables, predictions, [g[0] for g in gt], [g[1] for g in gt], [p[0] for p in pred],
                        [p[1] for p in pred], page)
    for row in rows:  # the table scores compare the tables normalised again from their source
        row["norm_gt"], row["norm_pred"] = normalize_table_html(row["gt"]), normalize_table_html(row["pred"])
    return rows


# --- text re-matching -------------------------------------------------------------------------------

def _is_formula(category: str) -> bool:
    return category in _FORMULA_KINDS


def cross_text(category: str, text: str) -> str:
    """Text of either kind as text: a formula without its delimiters, inline LaTeX rendered."""
    return inline_latex_to_unicode(strip_delimiters(text) if _is_formula(category) else text)


def cross_category(row: Row) -> Row:
    """A ground-truth formula paired with predicted text (or the reverse) compared as text."""
    gt_category, pred_category = row.get("gt_category_type", ""), row.get("pred_category_type", "")
    if not gt_category or not pred_category or _is_formula(gt_category) == _is_formula(pred_category):
        return row
    row["gt"], row["pred"] = cross_text(gt_category, row.get("gt", "")), cross_text(pred_category, row.get("pred", ""))
    row["norm_gt"], row["norm_pred"] = normalize_text(row["gt"]), normalize_text(row["pred"])
    row["edit"] = edit_or_empty(row["norm_gt"], row["norm_pred"])
    return row


@dataclass(frozen=True)
class _PoolItem:
    category: str
    raw: str
    rendered: str
    start: int
    end: int


def _pool(mix: list[PredItem]) -> list[_PoolItem]:
    return [_PoolItem(item.category, item.content, cross_text(item.category, item.content), item.start, item.end)
            for _, item in sort_by_position(mix) if item.category in (TEXT, FORMULA)]


def _owned(row: Row, pool: list[_PoolItem]) -> list[int]:
    """The pool positions a row uses: its `pred_idx` read as pool positions (as upstream reads
    them), else the items whose span holds its prediction position."""
    indices = sorted({i for i in row.get("pred_idx", []) or [] if isinstance(i, int) and 0 <= i < len(pool)})
    if indices:
        return indices
    position = row.get("pred_position")
    if position in ([""], "", None):
        return []
    return [k for k, item in enumerate(pool) if item.start <= float(position) <= item.end]


def formula_hint(text: str) -> bool:
    if re.search(r"\$[^$]+\$|\\\([^)]*\\\)", text) or any(token in text for token in _HINT_TOKENS):
        return True
    return ("^" in text or "_" in text) and ("$" in text or "\\" in text)


def _with_normalized_formulas(text: str) -> str:
    pieces, cursor = [], 0
    for start, end, content in inline_formulas(text):
        pieces += [text[cursor:start], normalize_formula(content).strip()]
        cursor = end
    return "".join(pieces) + text[cursor:]


def _should_retry(row: Row) -> bool:
    if row.get("gt_idx") == [""] or row.get("gt_category_type") not in ("title", "text_block"):
        return False
    if float(row.get("edit", 1)) <= 0.45:
        return False
    if row["gt_category_type"] == "title":
        return True
    return formula_hint(str(row.get("gt", "") or "")) or len(str(row.get("norm_gt", "") or "")) >= 80


def _best_span(row: Row, pool: list[_PoolItem], blocked: set[int]) -> dict | None:
    """The run of neighbouring predictions closest to the row's ground truth, if much closer."""
    gt_text = str(row.get("gt", "") or "")
    hint = formula_hint(gt_text)
    category = row.get("gt_category_type", "")
    target = normalize_text(_with_normalized_formulas(gt_text) if hint and not _is_formula(category) else cross_text(category, gt_text))
    if not target or not pool:
        return None
    owned = _owned(row, pool)
    low, high = (max(0, min(owned) - 8), min(len(pool) - 1, max(owned) + 8)) if owned else (0, len(pool) - 1)
    allowed = (TEXT, FORMULA) if hint else (TEXT,)
    max_span, max_edit = (8, 0.45) if hint else (4, 0.35)
    best: Row | None = None
    for start in range(low, high + 1):
        if pool[start].category not in allowed or start in blocked:
            continue
        raw, rendered = [], []
        for end in range(start, min(high + 1, start + max_span)):
            if pool[end].category not in allowed or end in blocked:
                break
            raw.append(pool[end].raw)
            rendered.append(pool[end].rendered)
            norm = normalize_text("".join(rendered))
            if not norm:
                continue
            candidate: Row = {"pred_idx": list(range(start, end + 1)), "pred": "".join(raw), "pred_position": pool[start].start,
                         "pred_category_type": "text_block", "norm_pred": norm, "edit": edit_or_empty(target, norm),
                         "span": end - start + 1, "distance": abs(start - owned[0]) if owned else 0}
            if best is None or _closer(candidate, best):
                best = candidate
    current = float(row.get("edit", 1))
    if best is None or best["edit"] >= current - 0.2 or best["edit"] > max_edit:
        return None
    return best


def _closer(candidate: dict, best: dict) -> bool:
    if candidate["edit"] + 1e-12 < best["edit"]:
        return True
    if candidate["edit"] > best["edit"] + 1e-12:
        return False
    if candidate["span"] != best["span"]:
        return candidate["span"] < best["span"]
    return candidate["distance"] < best["distance"]


def local_text_fallback(rows: list[Row], mix: list[PredItem]) -> list[Row]:
    """The evaluator's local text-span fallback, largest gains first, no prediction used twice."""
    pool = _pool(mix)
    if not rows or not pool:
        return rows
    rows = [dict(row) for row in rows]
    owned = [_owned(row, pool) if row.get("gt_idx") != [""] else [] for row in rows]
    replacements = []
    for index, row in enumerate(rows):
        if not _should_retry(row):
            continue
        blocked = {k for other, indices in enumerate(owned) if other != index for k in indices}
        candidate = _best_span(row, pool, blocked)
        if candidate:
            replacements.append((float(row.get("edit", 1)) - candidate["edit"], index, candidate))
    used: set[int] = set()
    for _, index, candidate in sorted(replacements, key=lambda item: item[0], reverse=True):
        indices = set(candidate["pred_idx"])
        if indices & used:
            continue
        rows[index].update({key: candidate[key] for key in ("pred_idx", "pred", "pred_position", "pred_category_type",
                                                             "norm_pred", "edit")})
        used |= indices
    return rows


# --- reading order ----------------------------------------------------------------------------------

def order_pair(rows: list[Row], page: str, corrected: bool) -> dict | None:
    """The page's ground-truth orders sorted, and the matched ones in prediction order (the
    evaluator's `get_order_paired`); `corrected` gives a table matched to the page's first
    predicted table its real position instead of none."""
    matched: list[tuple[list[int | str], int]] = []  # (gt positions, pred position)
    gt_all: list[list[int | str]] = []
    for row in rows:
        position = row["corrected_pred_position"] if corrected and "corrected_pred_position" in row else row["pred_position"]
        if row["gt_position"] != [""]:
            gt_all.append(row["gt_position"])
            if position != "":
                matched.append((row["gt_position"], position))
    gt = sorted(x for positions in gt_all for x in positions if x)
    pred = [x for positions, _ in sorted(matched, key=lambda pair: pair[1]) for x in positions if x]
    if not gt and not pred:
        return None
    from rapidfuzz.distance import Levenshtein

    return {"gt": gt, "pred": pred, "img_id": page, "edit": Levenshtein.distance(gt, pred) / max(len(pred), len(gt))}
