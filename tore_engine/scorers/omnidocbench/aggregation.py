"""How OmniDocBench turns per-element results into page and corpus scores, as the official v1.6
evaluator does (docs/benchmarks.md#aggregation): each sample's edit distance and TEDS, the `all` results (page
average, whole-corpus ratio, element average), the `group` breakdown by element attribute and the
`page` breakdown by page attribute. Kept apart from the matcher so that the official per-element
files can be fed through them in the tests.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from rapidfuzz.distance import Levenshtein

from tore_engine.scorers.omnidocbench.pair_metrics import teds

Sample = dict[str, Any]
# special_issue values that describe tables, not pages: the official page breakdown leaves them out.
_TABLE_ISSUE_PREFIX = "table_"


def image_name(image_id: str) -> str:
    """The evaluator's page key of a sample: the id if it ends in .jpg or .png, else the id cut
    before its last underscore."""
    return image_id if image_id.endswith((".jpg", ".png")) else "_".join(image_id.split("_")[:-1])


def nan_to_none(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


# --- metrics on samples ---------------------------------------------------------------------------

def _compared(sample: Sample) -> tuple[Any, Any]:
    return (sample["norm_gt"] if sample.get("norm_gt") else sample["gt"],
            sample["norm_pred"] if sample.get("norm_pred") else sample["pred"])


def add_edit(samples: list[Sample]) -> None:
    """`Edit_num`, `upper_len` and the `Edit_dist` metric of each sample (none when both are empty)."""
    for sample in samples:
        gt, pred = _compared(sample)
        sample["image_name"] = image_name(sample["img_id"])
        sample["upper_len"] = max(len(pred), len(gt))
        if sample["upper_len"] > 0:
            sample["Edit_num"] = Levenshtein.distance(pred, gt)
            sample.setdefault("metric", {})["Edit_dist"] = sample["Edit_num"] / sample["upper_len"]


def edit_summary(samples: list[Sample]) -> tuple[dict, dict[str, float]]:
    """The evaluator's `Edit_dist` result and its per-page values."""
    if not samples:
        return {"ALL_page_avg": None}, {}
    edits: dict[str, int] = defaultdict(int)
    lengths: dict[str, int] = defaultdict(int)
    for sample in samples:
        edits[sample["image_name"]] += sample.get("Edit_num", 0)
        lengths[sample["image_name"]] += sample["upper_len"]
    per_page = {page: (edits[page] / lengths[page] if lengths[page] else math.nan) for page in sorted(edits)}
    ratios = [s["Edit_num"] / s["upper_len"] for s in samples if "Edit_num" in s]
    total = sum(lengths.values())
    return {
        "ALL_page_avg": nan_to_none(_mean([v for v in per_page.values() if not math.isnan(v)])),
        "edit_whole": nan_to_none(sum(edits.values()) / total if total else math.nan),
        "edit_sample_avg": nan_to_none(_mean(ratios)),
    }, per_page


def add_teds(samples: list[Sample]) -> dict:
    for sample in samples:
        gt, pred = _compared(sample)
        sample.setdefault("metric", {}).update(TEDS=teds(pred, gt), TEDS_structure_only=teds(pred, gt, True))
    return {name: {"all": nan_to_none(_mean([s["metric"][name] for s in samples]))} for name in ("TEDS", "TEDS_structure_only")}


# --- the evaluator's breakdowns -------------------------------------------------------------------

def _attribute_labels(values: Iterable) -> Iterable[str]:
    for value in values:
        if isinstance(value, dict):
            yield from (f"{key}: {item}" for key, item in value.items())
        elif isinstance(value, list):
            yield from _attribute_labels(value)


def by_element_attribute(samples: list[Sample]) -> dict:
    """The evaluator's `group` result: each metric's mean over the samples with an attribute value."""
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        if not sample.get("gt_attribute") or not sample.get("metric"):
            continue
        for label in set(_attribute_labels(sample["gt_attribute"])):
            for metric, score in sample["metric"].items():
                scores[label][metric].append(score)
    result: dict[str, dict] = {"sample_count": {}}
    for label, metrics in scores.items():
        for metric, values in metrics.items():
            result.setdefault(metric, {})[label] = sum(values) / len(values)
            result["sample_count"][label] = len(values)
    return {key: dict(sorted(value.items())) for key, value in sorted(result.items())}


def page_labels(attributes: dict) -> list[str]:
    """`ALL`, then `key: value` for each page attribute and each special issue not about tables."""
    labels = ["ALL"]
    for key, value in attributes.items():
        if isinstance(value, list):
            labels += [str(issue) for issue in value if "table" not in str(issue)]
        else:
            labels.append(f"{key}: {value}")
    return labels


def by_page_attribute(samples: list[Sample], attributes: dict[str, dict], pages_with_gt: set[str], metrics: list[str]) -> dict:
    """The evaluator's `page` result: per page attribute label, the mean over pages of each page's
    value (edit: length-weighted ratio; other metrics: mean; pages with ground truth of the element
    but no scored sample count 0 for the other metrics)."""
    rows: dict[str, list[tuple[str, str, float, int]]] = defaultdict(list)
    for sample in samples:
        if not sample.get("metric"):
            continue
        page = sample["image_name"]
        gt, pred = _compared(sample)
        for metric, score in sample["metric"].items():
            for label in page_labels(attributes.get(page, {})):
                rows[metric].append((page, label, score, max(len(gt), len(pred))))
    for metric in metrics:
        rows.setdefault(metric, [])
    result = {}
    for metric, metric_rows in rows.items():
        if metric != "Edit_dist":
            _add_missing_pages(metric_rows, pages_with_gt, attributes)
        if metric_rows:
            result[metric] = _average_by_label(metric_rows, weighted=metric == "Edit_dist")
    return dict(sorted(result.items()))


def _add_missing_pages(rows: list[tuple[str, str, float, int]], pages: set[str], attributes: dict[str, dict]) -> None:
    present = {(page, label) for page, label, _, _ in rows}
    for page in sorted(pages):
        rows += [(page, label, 0.0, 0) for label in page_labels(attributes.get(page, {})) if (page, label) not in present]


def _average_by_label(rows: list[tuple[str, str, float, int]], weighted: bool) -> dict[str, float | None]:
    groups: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
    for page, label, score, length in rows:
        groups[(page, label)].append((score, length))
    by_label: dict[str, list[float]] = defaultdict(list)
    for (_, label), values in groups.items():
        if weighted:
            total = sum(length for _, length in values)
            value = sum(score * length for score, length in values) / total if total else math.nan
        else:
            value = _mean([score for score, _ in values])
        if not math.isnan(value):
            by_label[label].append(value)
    return {label: nan_to_none(_mean(values)) for label, values in sorted(by_label.items())}


def table_pages(samples: list[Sample], pages_with_gt: set[str]) -> dict[str, tuple[float, float]]:
    """Each page's mean TEDS and TEDS-S (0 for a page with ground-truth tables and no scored table)."""
    scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for sample in samples:
        scores[sample["image_name"]].append((sample["metric"]["TEDS"], sample["metric"]["TEDS_structure_only"]))
    pages = {page: (_mean([t for t, _ in values]), _mean([s for _, s in values])) for page, values in scores.items()}
    return {**{page: (0.0, 0.0) for page in pages_with_gt}, **pages}


def overall(text_edit: float | None, formula_cdm: float | None, table_teds: float | None) -> float | None:
    """The leaderboard's Overall on its 0..100 scale; None unless all three inputs exist (CDM is
    never substituted by the formula edit distance)."""
    if text_edit is None or formula_cdm is None or table_teds is None:
        return None
    return ((1 - text_edit) * 100 + formula_cdm * 100 + table_teds * 100) / 3


def page_attribute_values(attributes: Mapping, attribute: str) -> list[str]:
    """The values a page counts under for one attribute (special_issue is a list)."""
    value = attributes.get(attribute)
    if value is None:
        return []
    if isinstance(value, list):
        return [str(item) for item in value if not str(item).startswith(_TABLE_ISSUE_PREFIX)]
    return [str(value)]


def breakdown_by_attribute(
    per_page: Mapping[str, float], page_attributes: Mapping[str, Mapping], attributes: Iterable[str]
) -> dict[str, dict[str, float]]:
    """`{attribute: {value: mean of the per-page values of the pages with that value}}`, as the
    official `page` tables average them (pages without a value for the metric are left out)."""
    result: dict[str, dict[str, float]] = {}
    for attribute in attributes:
        groups: dict[str, list[float]] = defaultdict(list)
        for page, value in per_page.items():
            for group in page_attribute_values(page_attributes.get(page, {}), attribute):
                groups[group].append(value)
        if groups:
            result[attribute] = {group: sum(v) / len(v) for group, v in sorted(groups.items())}
    return result
