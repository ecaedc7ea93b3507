"""A page's ground-truth elements as the official OmniDocBench v1.6 evaluator gathers them for
end-to-end scoring: ignored blocks dropped, blocks joined by `truncated` relations concatenated in
reading order (the joined block keeps the first block's category and order, and no attributes),
each category's blocks in file order, then the groups the evaluator matches sorted by order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tore_engine.scorers.omnidocbench.reference import ReferencePage

TEXT_CATEGORIES = ("text_block", "title", "code_txt", "code_txt_caption", "reference", "equation_caption",
                   "figure_caption", "figure_footnote", "table_caption", "table_footnote", "code_algorithm",
                   "code_algorithm_caption", "header", "footer", "page_footnote", "page_number")
# Matched with the text but not scored as text (the evaluator's "ignore" categories).
UNSCORED_TEXT = ("figure_caption", "figure_footnote", "table_caption", "table_footnote", "code_algorithm",
                 "code_algorithm_caption", "header", "footer", "page_footnote", "page_number", "equation_caption")
FORMULA = "equation_isolated"
TABLE = "table"


@dataclass(frozen=True)
class GtItem:
    """One ground-truth element: its text (`text`), LaTeX (`latex`) or table (`html`)."""

    category: str
    order: float | None
    text: str = ""
    latex: str = ""
    html: str = ""
    attribute: dict = field(default_factory=dict)

    @property
    def position(self) -> float | str:
        """The evaluator's `gt_position` value: the order, or "" when it is missing or 0."""
        return self.order if self.order else ""

    @property
    def sort_key(self) -> float:
        return self.order if self.order else 0


def page_elements(page: ReferencePage) -> dict[str, list[GtItem]]:
    """The page's elements by category (the evaluator's `get_page_elements`)."""
    groups: list[set] = []
    truncated: dict = {}
    for relation in page.relations:
        if relation.kind != "truncated":
            continue
        truncated[relation.source] = truncated[relation.target] = None
        merged = {relation.source, relation.target}
        remaining = []
        for group in groups:
            if group & merged:
                merged |= group
            else:
                remaining.append(group)
        groups = [*remaining, merged]
    elements: dict[str, list[GtItem]] = {}
    for block in page.blocks:
        if block.anno_id in truncated:
            truncated[block.anno_id] = block
        elif not block.ignore:
            elements.setdefault(block.category, []).append(
                GtItem(block.category, block.order, block.text, block.latex, block.html, block.attribute))
    for group in groups:
        blocks = [truncated[key] for key in group if truncated.get(key) is not None]
        if not blocks or any(block.ignore for block in blocks):
            continue
        blocks.sort(key=lambda block: block.order if block.order is not None else 0)
        first = blocks[0]
        elements.setdefault(first.category, []).append(
            GtItem(first.category, first.order, "".join(block.text for block in blocks)))
    return elements


def sorted_by_order(items: list[GtItem]) -> list[GtItem]:
    return sorted(items, key=lambda item: item.sort_key)


def text_and_formulas(elements: dict[str, list[GtItem]]) -> list[GtItem]:
    """What the evaluator matches against the predicted text and formulas, in reading order."""
    return sorted_by_order([item for category in (*TEXT_CATEGORIES, FORMULA) for item in elements.get(category, [])])
