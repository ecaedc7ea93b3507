"""How OmniDocBench turns per-element results into page and corpus scores (omnidocbench.md 5.3).
These formulas reproduce the official evaluator exactly; they are kept apart from the matcher so
that the official per-element files can be fed through them in the tests.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

# special_issue values that describe tables, not pages: the official page breakdown leaves them out.
_TABLE_ISSUE_PREFIX = "table_"


def character_weighted_page_edit(rows: Iterable[tuple[str, int, int]]) -> dict[str, float]:
    """Per page: sum of edit counts over sum of lengths, for rows `(page, edit_num, upper_len)`
    with `upper_len > 0` (official `*_per_page_edit.json`)."""
    edits: dict[str, int] = defaultdict(int)
    lengths: dict[str, int] = defaultdict(int)
    for page, edit_num, upper_len in rows:
        if upper_len > 0:
            edits[page] += edit_num
            lengths[page] += upper_len
    return {page: edits[page] / lengths[page] for page in lengths}


def page_mean(rows: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Per page: the mean of the page's values (page TEDS = mean TEDS of its tables)."""
    values: dict[str, list[float]] = defaultdict(list)
    for page, value in rows:
        values[page].append(value)
    return {page: sum(page_values) / len(page_values) for page, page_values in values.items()}


def mean_over_pages(per_page: Mapping[str, float]) -> float | None:
    """Unweighted mean over the pages that have a value; None when none has."""
    return sum(per_page.values()) / len(per_page) if per_page else None


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
