"""The per-pair metrics of the OmniDocBench end-to-end evaluation (omnidocbench.md section 5.2),
which this project reproduces exactly: text normalisation and edit distance, TEDS, and the
reading-order edit distance. Edit distances come from rapidfuzz, tree edit distance from apted.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from apted import APTED, Config
from lxml import etree, html
from rapidfuzz.distance import Levenshtein

_INLINE_MATH = re.compile(r"(?<!\$)\$(?!\$)(.+?)(?<!\$)\$(?!\$)|\\\((.+?)\\\)", re.DOTALL)
_NOT_WORD_OR_CJK = re.compile(r"[^\w\u4e00-\u9fff]")
_ESCAPED_CONTROLS = ("\\t", "\\n", "\t", "\n", "/t", "/n")


@lru_cache(maxsize=1)
def _latex_to_text():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text()


def inline_latex_to_unicode(text: str) -> str:
    """Replace each inline `$...$` or `\\(...\\)` formula by its Unicode rendering (pylatexenc), as
    upstream does."""

    def render(match: re.Match) -> str:
        latex = match.group(1) if match.group(1) is not None else match.group(2)
        try:
            return _latex_to_text().latex_to_text(latex.strip())
        except Exception:  # pylatexenc rejects some malformed LaTeX; keep the source then
            return latex

    return _INLINE_MATH.sub(render, text)


def normalize_text(text: str) -> str:
    """Text as the official scorer compares it: inline LaTeX rendered, then only word and CJK characters."""
    text = inline_latex_to_unicode(text)
    for control in _ESCAPED_CONTROLS:
        text = text.replace(control, "")
    return _NOT_WORD_OR_CJK.sub("", text)


@dataclass(frozen=True)
class EditPair:
    """One scored text pair: `Edit_num` and `upper_len` as the official per-element files store them."""

    edit_num: int
    upper_len: int


def edit_pair(norm_pred: str, norm_gt: str) -> EditPair:
    return EditPair(Levenshtein.distance(norm_pred, norm_gt), max(len(norm_pred), len(norm_gt)))


def sequence_edit(gt: list[int], pred: list[int]) -> float:
    """Normalised Levenshtein distance of two integer sequences (the reading-order edit)."""
    upper = max(len(gt), len(pred))
    return Levenshtein.distance(gt, pred) / upper if upper else 0.0


# --- TEDS (Zhong et al. 2020, PubTabNet) -------------------------------------------------------


class _TableNode:
    """A node of the table tree: `table`, `tr`, `td` (with spans and content tokens), or other tags."""

    def __init__(self, tag: str, colspan: int | None = None, rowspan: int | None = None, content: list | None = None):
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
    try:
        return int(element.attrib.get(key, "1"))
    except ValueError:
        return 1


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
    distance = APTED(
        _table_tree(pred_table, structure_only), _table_tree(gt_table, structure_only), _TedsCost()
    ).compute_edit_distance()
    return 1.0 - float(distance) / node_count


# --- normalisation before TEDS and the table edit (an approximation of the official one) --------

_UNWRAPPED_TAGS = ("thead", "tbody", "tfoot", "span", "sup", "sub", "div", "p", "font", "center")
_KEPT_CELL_ATTRIBUTES = ("colspan", "rowspan")


def normalize_table_html(table_html: str) -> str:
    """Table HTML as the official scorer compares it: NFKC, `th` as `td`, wrappers and styling
    removed, whitespace between tags dropped, wrapped as `<html><body><table border="1">`.
    Empty when the input holds no table."""
    if not table_html.strip():
        return ""
    try:
        root = html.fromstring(unicodedata.normalize("NFKC", table_html))
    except (etree.ParserError, ValueError):
        return ""
    table = root if root.tag == "table" else next(iter(root.iter("table")), None)
    if table is None:
        return ""
    etree.strip_tags(table, *_UNWRAPPED_TAGS)
    for element in table.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag == "th":
            element.tag = "td"
        kept = {k: v for k, v in element.attrib.items() if element.tag == "td" and k in _KEPT_CELL_ATTRIBUTES}
        element.attrib.clear()
        element.attrib.update(kept)
        element.text = (element.text or "").strip()
        if element is not table:
            element.tail = (element.tail or "").strip()
    for comment in table.xpath(".//comment()"):
        comment.getparent().remove(comment)
    table.attrib["border"] = "1"
    body = etree.tostring(table, encoding="unicode", method="html")
    return f"<html><body>{body}</body></html>"


_FORMULA_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_FORMULA_DROPPED = re.compile(
    r"\\(?:tag|hspace|vspace|begin|end)\{[^}]*\}"
    r"|\\(?:mathbf|mathrm|mathit|mathnormal|mathbb|mathcal|mathscr|mathfrak|mathsf|mathtt|boldsymbol|bm"
    r"|operatorname|textbf|text|displaystyle|left|right|notag|quad|qquad)(?![a-zA-Z])"
    r"|\\[,;:! ]|\s+"
)
_PLAIN_GROUP = re.compile(r"\{([^{}\\]*)\}")  # a brace group without commands inside


def normalize_formula(latex: str) -> str:
    """Display-formula text for the formula edit distance: delimiters, `\\tag`, font and sizing
    commands, spacing, whitespace and the braces of command-free groups removed, lower case. This follows the official
    normalisation's rules but is not byte-identical to it: an approximation."""
    latex = latex.strip()
    for opening, closing in _FORMULA_DELIMITERS:
        if latex.startswith(opening) and latex.endswith(closing) and len(latex) >= len(opening) + len(closing):
            latex = latex[len(opening) : len(latex) - len(closing)]
            break
    latex = _FORMULA_DROPPED.sub("", latex)
    while True:
        unbraced = _PLAIN_GROUP.sub(r"\1", latex)
        if unbraced == latex:
            return latex.strip(".").lower()
        latex = unbraced
