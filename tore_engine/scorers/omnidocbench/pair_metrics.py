"""TEDS, the table metric of the OmniDocBench end-to-end evaluation (docs/benchmarks.md#teds),
exactly as the official evaluator computes it on two normalised tables (apted for the tree edit
distance, rapidfuzz for the cells' token edit distance). Text, formula and table normalisation are in
`latex_text`, `formula_text` and `tables`.
"""

from __future__ import annotations

from collections.abc import Sequence

from apted import APTED, Config
from lxml import etree, html
from rapidfuzz.distance import Levenshtein


class _TableNode:
    """A node of the table tree: `table`, `tr`, `td` (with spans and content tokens), or other tags."""

    def __init__(self, tag: str, colspan: int | None = None, rowspan: int | None = None, content: Sequence[str] = ()) -> None:
        self.tag = tag
        self.colspan = colspan
        self.rowspan = rowspan
        self.content = content
        self.children: list[_TableNode] = []


class _TedsCost(Config):
    """Insert/delete cost 1; rename cost 1 across tags or spans, else the cells' token edit."""

    def rename(self, node1: _TableNode, node2: _TableNode) -> float:
        if node1.tag != node2.tag or node1.colspan != node2.colspan or node1.rowspan != node2.rowspan:
            return 1.0
        if node1.tag == "td" and (node1.content or node2.content):
            return Levenshtein.distance(node1.content, node2.content) / max(len(node1.content), len(node2.content))
        return 0.0

    def children(self, node: _TableNode) -> list[_TableNode]:
        return node.children


def _cell_tokens(element: etree._Element) -> list[str]:
    """A cell's content as PubTabNet tokenises it: characters, with nested tags as `<b>`/`</b>`."""
    tokens: list[str] = []

    def walk(node: etree._Element) -> None:
        tokens.append(f"<{node.tag}>")
        tokens.extend(node.text or "")
        for child in node:
            walk(child)
        if node.tag != "unk":
            tokens.append(f"</{node.tag}>")
        if node.tag != "td":
            tokens.extend(node.tail or "")

    walk(element)
    return tokens[1:-1]


def _span(element: etree._Element, key: str) -> int:
    return int(element.attrib.get(key, "1"))  # a span that is no integer fails the pair (TEDS 0), as upstream


def _table_tree(element: etree._Element, structure_only: bool) -> _TableNode:
    if element.tag == "td":
        content = [] if structure_only else _cell_tokens(element)
        return _TableNode("td", _span(element, "colspan"), _span(element, "rowspan"), content)
    node = _TableNode(element.tag)
    node.children = [_table_tree(child, structure_only) for child in element if isinstance(child.tag, str)]
    return node


def teds(pred_html: str, gt_html: str, structure_only: bool = False) -> float:
    """TEDS of two normalised table HTML strings; 0 when either side is empty or has no table."""
    if not pred_html or not gt_html:
        return 0.0
    parser = html.HTMLParser(remove_comments=True, encoding="utf-8")
    try:
        pred_root = html.fromstring(pred_html, parser=parser)
        gt_root = html.fromstring(gt_html, parser=parser)
    except (etree.ParserError, ValueError):
        return 0.0
    pred_tables, gt_tables = pred_root.xpath("body/table"), gt_root.xpath("body/table")
    if not pred_tables or not gt_tables:
        return 0.0
    pred_table, gt_table = pred_tables[0], gt_tables[0]
    node_count = max(len(pred_table.xpath(".//*")), len(gt_table.xpath(".//*")))
    if node_count == 0:
        return 0.0
    try:
        trees = _table_tree(pred_table, structure_only), _table_tree(gt_table, structure_only)
    except ValueError:
        return 0.0
    distance = APTED(*trees, _TedsCost()).compute_edit_distance()
    return 1.0 - float(distance) / node_count
