"""The end-to-end scores of OmniDocBench as the official v1.6 evaluator computes them (CDM aside):
every page matched as upstream matches it (`page_match`), then per element the official
`metric_result` — `all` (page average, whole-corpus ratio and element average of the edit
distance; mean TEDS and TEDS-S over tables), `group` (by element attribute) and `page` (by page
attribute, page-level TEDS counting a page with ground-truth tables but no scored table as 0) — and
each page's values.

The leaderboard's numbers are `text_block.all.Edit_dist.ALL_page_avg`, `table.page.TEDS.ALL` and
`reading_order.all.Edit_dist.ALL_page_avg`; they carry the evaluator's quirks (Markdown tables
scored with `colspan="1" rowspan="1"` on every cell, a table matched to the page's first predicted
table left out of the predicted reading order). The reading order without the second quirk is given
beside it as `reading_order_edit_corrected`. Overall needs formula CDM, which is not computed.

Unlike the evaluator this has no time limits and runs in one process: where the evaluator gives up on
a page's matching after 300-420 s (and then uses a chunked matcher, so its result depends on the
machine's speed), this computes the quick match to the end; every step is polynomial and the string
scans are linear (issue 20, B14), so a page of 120 KB of hostile Markdown takes seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tore_engine.scorers.omnidocbench.aggregation import (
    Sample,
    add_edit,
    add_teds,
    breakdown_by_attribute,
    by_element_attribute,
    by_page_attribute,
    edit_summary,
    nan_to_none,
    overall,
    table_pages,
)
from tore_engine.scorers.omnidocbench.categories import PAGE_ATTRIBUTES
from tore_engine.scorers.omnidocbench.ground_truth import FORMULA, TABLE
from tore_engine.scorers.omnidocbench.markdown import MarkdownPredictions
from tore_engine.scorers.omnidocbench.page_match import PageMatch, match_page
from tore_engine.scorers.omnidocbench.reference import Reference

MATCH_METHOD = "official-quick-match-v1.6"
ELEMENTS = ("text_block", "display_formula", "table", "reading_order")
PROVENANCE = {
    "text_edit": "official v1.6 evaluator: text_block.all.Edit_dist.ALL_page_avg",
    "reading_order_edit": "official v1.6 evaluator: reading_order.all.Edit_dist.ALL_page_avg (with its first-table quirk)",
    "reading_order_edit_corrected": "reading order with a table matched to the first predicted table kept in the predicted order (not official)",
    "table_teds": "official v1.6 evaluator: table.page.TEDS.ALL (the leaderboard's, page level)",
    "table_teds_s": "official v1.6 evaluator: table.page.TEDS_structure_only.ALL (page level)",
    "table_edit": "official v1.6 evaluator: table.all.Edit_dist.ALL_page_avg",
    "formula_edit": "official v1.6 evaluator: display_formula.all.Edit_dist.ALL_page_avg",
    "overall": "official formula; null because formula CDM is not computed",
}


# --- scoring ---------------------------------------------------------------------------------------

def _gt_pages(reference: Reference, category: str) -> set[str]:
    return {page.id.rsplit("/", 1)[-1] for page in reference.pages
            if any(block.category == category and not block.ignore for block in page.blocks)}


def _element(samples: list[Sample], attributes: dict[str, dict], pages_with_gt: set[str], metrics: list[str],
             extra: Callable[[list[Sample]], dict] | None = None) -> tuple[dict, dict[str, float]]:
    result = extra(samples) if extra else {}
    add_edit(samples)
    edit, per_page = edit_summary(samples)
    result["Edit_dist"] = edit
    return {"all": result, "group": by_element_attribute(samples),
            "page": by_page_attribute(samples, attributes, pages_with_gt, metrics)}, per_page


def score_matches(matches: list[PageMatch], reference: Reference) -> dict:
    """The official metric results and per-page values of matched pages."""
    attributes = {page.id.rsplit("/", 1)[-1]: page.attributes for page in reference.pages}
    samples = {
        "text_block": [row for match in matches for row in match.text],
        "display_formula": [row for match in matches for row in match.formula],
        "table": [row for match in matches for row in match.table],
        "reading_order": [match.reading_order for match in matches if match.reading_order],
    }
    corrected = [dict(match.reading_order_corrected) for match in matches if match.reading_order_corrected]
    official, per_page = {}, {}
    official["text_block"], per_page["text_edit"] = _element(samples["text_block"], attributes, set(), ["Edit_dist"])
    official["display_formula"], per_page["formula_edit"] = _element(
        samples["display_formula"], attributes, _gt_pages(reference, FORMULA), ["Edit_dist"])
    official["table"], per_page["table_edit"] = _element(
        samples["table"], attributes, _gt_pages(reference, TABLE), ["TEDS", "Edit_dist", "TEDS_structure_only"], add_teds)
    official["reading_order"], per_page["reading_order_edit"] = _element(samples["reading_order"], attributes, set(), ["Edit_dist"])
    corrected_result, per_page["reading_order_edit_corrected"] = _element(corrected, attributes, set(), ["Edit_dist"])
    tables = table_pages(samples["table"], _gt_pages(reference, TABLE))
    per_page["table_teds"] = {page: values[0] for page, values in tables.items()}
    per_page["table_teds_s"] = {page: values[1] for page, values in tables.items()}
    denominators = {
        "text_block": _page_denominators(samples["text_block"], set(), ["Edit_dist"]),
        "display_formula": _page_denominators(samples["display_formula"], _gt_pages(reference, FORMULA), ["Edit_dist"]),
        "table": _page_denominators(samples["table"], _gt_pages(reference, TABLE), ["TEDS", "Edit_dist"]),
        "reading_order": _page_denominators(samples["reading_order"], set(), ["Edit_dist"]),
    }
    return {"official": official, "reading_order_corrected": corrected_result, "per_page": per_page,
            "page_denominators": denominators, "tables_scored": len(samples["table"])}


def _page_denominators(samples: list[Sample], pages_with_gt: set[str], metrics: list[str]) -> dict[str, dict[str, int]]:
    """How many pages each metric's `ALL` averages over, as the evaluator's run summary counts them:
    the pages with ground truth of the element when it counts those (formulas, tables), else the
    pages with a scored sample; TEDS brings TEDS_structure_only."""
    if "TEDS" in metrics:
        metrics = [*metrics, "TEDS_structure_only"]
    count = len(pages_with_gt) if pages_with_gt else len({sample["image_name"] for sample in samples if sample.get("metric")})
    return {metric: {"ALL": count} for metric in metrics}


def _value(result: dict, *path: str) -> float | None:
    value: object = result
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return nan_to_none(value) if isinstance(value, (int, float)) else None


def _clean(values: dict[str, float]) -> dict[str, float]:
    return {page: value for page, value in values.items() if not math.isnan(value)}


def score_end_to_end(reference: Reference, predictions: MarkdownPredictions) -> dict:
    """The `end_to_end` object of `tore score omnidocbench --json`."""
    matches = [match_page(page, text) for page, text in zip(reference.pages, predictions.texts)]
    scored = score_matches(matches, reference)
    official = scored["official"]
    per_page = {metric: _clean(values) for metric, values in scored["per_page"].items()}
    text_edit = _value(official, "text_block", "all", "Edit_dist", "ALL_page_avg")
    table_teds = _value(official, "table", "page", "TEDS", "ALL")
    result = {
        "text_edit": text_edit,
        "reading_order_edit": _value(official, "reading_order", "all", "Edit_dist", "ALL_page_avg"),
        "reading_order_edit_corrected": _value(scored["reading_order_corrected"], "all", "Edit_dist", "ALL_page_avg"),
        "table_teds": table_teds,
        "overall": overall(text_edit, None, table_teds),
        "table_teds_s": _value(official, "table", "page", "TEDS_structure_only", "ALL"),
        "table_teds_all": _value(official, "table", "all", "TEDS", "all"),
        "table_teds_s_all": _value(official, "table", "all", "TEDS_structure_only", "all"),
        "table_edit": _value(official, "table", "all", "Edit_dist", "ALL_page_avg"),
        "formula_edit": _value(official, "display_formula", "all", "Edit_dist", "ALL_page_avg"),
        "formula_cdm": None,
        "official": official,
        "page_counts": {metric: len(values) for metric, values in per_page.items()},
        "page_denominators": scored["page_denominators"],
        "tables_scored": scored["tables_scored"],
    }
    page_attributes = {page.id.rsplit("/", 1)[-1]: page.attributes for page in reference.pages}
    result["by_attribute"] = {metric: breakdown_by_attribute(values, page_attributes, PAGE_ATTRIBUTES)
                              for metric, values in per_page.items()}
    result["per_page"] = [_page_row(page.id.rsplit("/", 1)[-1], match, per_page) for page, match in zip(reference.pages, matches)]
    result.update({
        "match_method": MATCH_METHOD,
        "leaderboard_comparable": True,
        "provenance": PROVENANCE,
        "missing_pages": [reference.pages[index].id for index in predictions.missing_pages],
        "prediction_files": predictions.files,
        "unknown_files": predictions.unknown_files,
    })
    return result


def _page_row(name: str, match: PageMatch, per_page: dict[str, dict[str, float]]) -> dict:
    rows = match.text + match.formula + match.table
    matched = sum(1 for row in rows if row.get("pred_idx") not in ([""], "", None))
    return {"page": name, **{metric: values.get(name) for metric, values in per_page.items()},
            "matched_elements": matched, "unmatched_elements": len(rows) - matched}
