"""The page-level end-to-end scores of OmniDocBench (omnidocbench.md section 5): text edit
distance, reading-order edit distance, table TEDS/TEDS-S and edit, display-formula edit, and the
Overall formula when its inputs exist (never, since CDM is not computed: Overall is None).

Per-pair metrics and aggregation are the official ones; the page matcher is this project's
(`matching.py`), so the numbers are comparable between models here but are not leaderboard numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tore_engine.omnidocbench.aggregation import (
    breakdown_by_attribute,
    character_weighted_page_edit,
    mean_over_pages,
    overall,
    page_mean,
)
from tore_engine.omnidocbench.categories import PAGE_ATTRIBUTES
from tore_engine.omnidocbench.markdown import MarkdownPredictions
from tore_engine.omnidocbench.matching import Match, ground_truth_elements, match_page
from tore_engine.omnidocbench.pair_metrics import (
    edit_pair,
    normalize_formula,
    normalize_table_html,
    normalize_text,
    sequence_edit,
    teds,
)
from tore_engine.omnidocbench.reference import Reference, ReferencePage

MATCH_METHOD = "tore-segment-greedy"  # see matching.py
# Which end-to-end numbers reproduce the official evaluator given the same matches.
PROVENANCE = {
    "text_edit": "official formula and per-pair metric; project matcher",
    "reading_order_edit": "official formula and per-pair metric; project matcher",
    "table_teds": "official TEDS and aggregation; project matcher and approximate HTML normalisation",
    "table_teds_s": "official TEDS-S and aggregation; project matcher and approximate HTML normalisation",
    "table_edit": "official aggregation; project matcher and approximate HTML normalisation",
    "formula_edit": "official aggregation; project matcher and approximate LaTeX normalisation",
    "overall": "official formula; null because formula CDM is not computed",
}


@dataclass
class PageRecords:
    """Per-element results of one page, in the shape of the official per-element files."""

    page: str
    text: list[tuple[int, int]] = field(default_factory=list)  # (Edit_num, upper_len)
    formula: list[tuple[int, int]] = field(default_factory=list)
    tables: list[tuple[float, float, int, int]] = field(default_factory=list)  # TEDS, TEDS-S, Edit_num, upper_len
    reading_order: float | None = None
    matched: int = 0
    unmatched: int = 0


def score_page(page: ReferencePage, matches: list[Match]) -> PageRecords:
    records = PageRecords(page.id)
    order_gt, order_pred = [], []
    for match in matches:
        gt, prediction = match.gt, match.prediction
        content = prediction.content if prediction is not None else ""
        records.matched += prediction is not None
        records.unmatched += prediction is None
        if gt.kind == "text":
            pair = edit_pair(normalize_text(content), gt.normalized)
            if pair.upper_len:
                records.text.append((pair.edit_num, pair.upper_len))
        elif gt.kind == "formula":
            pair = edit_pair(normalize_formula(content), gt.normalized)
            if pair.upper_len:
                records.formula.append((pair.edit_num, pair.upper_len))
        elif gt.kind == "table":
            pred_html, gt_html = normalize_table_html(content), gt.normalized
            pair = edit_pair(pred_html, gt_html)
            records.tables.append((teds(pred_html, gt_html), teds(pred_html, gt_html, True), pair.edit_num, pair.upper_len))
        if gt.kind in ("text", "formula", "table") and gt.order:
            order_gt.append(gt.order)
            if prediction is not None:
                order_pred.append((prediction.position, gt.order))
    if order_gt:
        records.reading_order = sequence_edit(sorted(order_gt), [order for _, order in sorted(order_pred)])
    return records


def aggregate(records: list[PageRecords], reference: Reference) -> dict:
    """Corpus scores, page-attribute breakdowns and per-page rows from per-page records."""
    per_page = {
        "text_edit": character_weighted_page_edit((r.page, e, n) for r in records for e, n in r.text),
        "formula_edit": character_weighted_page_edit((r.page, e, n) for r in records for e, n in r.formula),
        "table_teds": page_mean((r.page, t[0]) for r in records for t in r.tables),
        "table_teds_s": page_mean((r.page, t[1]) for r in records for t in r.tables),
        "table_edit": character_weighted_page_edit((r.page, t[2], t[3]) for r in records for t in r.tables),
        "reading_order_edit": {r.page: r.reading_order for r in records if r.reading_order is not None},
    }
    scores = {metric: mean_over_pages(values) for metric, values in per_page.items()}
    attributes = {page.id: page.attributes for page in reference.pages}
    return {
        "text_edit": scores["text_edit"],
        "reading_order_edit": scores["reading_order_edit"],
        "table_teds": scores["table_teds"],
        "overall": overall(scores["text_edit"], None, scores["table_teds"]),
        "table_teds_s": scores["table_teds_s"],
        "table_edit": scores["table_edit"],
        "formula_edit": scores["formula_edit"],
        "formula_cdm": None,
        "page_counts": {metric: len(values) for metric, values in per_page.items()},
        "by_attribute": {
            metric: breakdown_by_attribute(values, attributes, PAGE_ATTRIBUTES) for metric, values in per_page.items()
        },
        "per_page": [
            {
                "page": page.id,
                **{metric: values.get(page.id) for metric, values in per_page.items()},
                "matched_elements": record.matched,
                "unmatched_elements": record.unmatched,
            }
            for page, record in zip(reference.pages, records)
        ],
    }


def score_end_to_end(reference: Reference, predictions: MarkdownPredictions) -> dict:
    """The `end_to_end` object of `tore score omnidocbench --json`."""
    records = [
        score_page(page, match_page(ground_truth_elements(page), elements))
        for page, elements in zip(reference.pages, predictions.pages)
    ]
    result = aggregate(records, reference)
    result.update(
        {
            "match_method": MATCH_METHOD,
            "leaderboard_comparable": False,
            "provenance": PROVENANCE,
            "missing_pages": predictions.missing_pages,
            "unknown_files": predictions.unknown_files,
        }
    )
    return result
