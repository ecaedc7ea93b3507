"""`soup` against BeautifulSoup itself (html.parser), which the official OmniDocBench evaluator uses and on
which every table's TEDS depends character by character: the printed tree, cell texts, the table
normalisation's tree edits and the HTML-text extraction, on every table of the OmniDocBench demo
(../shared/data) and on generated hostile markup (no data needed); and markup nested far deeper than
Python's recursion limit (issue 42 C7), parsed, printed and scored without recursion."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import load_shared_json, shared_path
from tests.scorers.omnidocbench.helpers import one_page, score_one
from tore_engine.scorers.omnidocbench import soup
from tore_engine.scorers.omnidocbench.markdown import _html_text_fragment
from tore_engine.scorers.omnidocbench.tables import _normalized_dom, normalize_cell_text

bs4 = pytest.importorskip("bs4", reason="BeautifulSoup is the oracle of these tests (the test extra installs it)")


def beautifulsoup(markup: str):
    with warnings.catch_warnings():  # short markup "looks like a file name" to BeautifulSoup
        warnings.simplefilter("ignore")
        return bs4.BeautifulSoup(markup, "html.parser")


def normalized_by_beautifulsoup(table_html: str) -> str:
    """The table normalisation's tree edits (th as td, thead/tbody/span unwrapped, MathML as its
    alttext, printed and parsed again, every cell string normalised) made with BeautifulSoup."""
    document = beautifulsoup(table_html)
    for cell in document.find_all("th"):
        cell.name = "td"
    for wrapper in document.find_all(["thead", "tbody"]):
        wrapper.unwrap()
    for math in document.find_all("math"):
        alttext = math.get("alttext", "")
        math.replace_with(bs4.NavigableString(f"${' '.join(alttext) if isinstance(alttext, list) else alttext}$"))
    for span in document.find_all("span"):
        span.unwrap()
    document = beautifulsoup(str(document))
    for cell in document.find_all(["td", "th"]):
        for node in list(cell.descendants):
            if isinstance(node, bs4.NavigableString) and normalize_cell_text(str(node)) != str(node):
                node.replace_with(bs4.NavigableString(normalize_cell_text(str(node))))
    return str(document)


def text_by_beautifulsoup(fragment: str) -> str:
    """The text of an HTML `<div>` paragraph, extracted with BeautifulSoup as `html_text_fragment` does."""
    document = beautifulsoup(fragment.strip())
    for tag in document.find_all(["style", "script"]):
        tag.decompose()
    for tag in document.find_all(["span", "font", "b", "strong", "i", "em", "u", "a", "sup", "sub"]):
        tag.unwrap()
    for tag in document.find_all("br"):
        tag.replace_with(bs4.NavigableString("\n"))
    for tag in document.find_all(["div", "dir", "p", "li"]):
        if not tag.contents or not (isinstance(tag.contents[-1], bs4.NavigableString) and tag.contents[-1] == "\n"):
            tag.append(bs4.NavigableString("\n"))
    extracted = re.sub(r"[ \t]*\n[ \t]*", "\n", document.get_text().replace("\xa0", " "))
    return "\n".join(line.strip() for line in extracted.split("\n") if line.strip()).strip() or fragment.strip()


def assert_as_beautifulsoup(markup: str) -> None:
    ours, theirs = soup.parse(markup), beautifulsoup(markup)
    assert ours.decode() == str(theirs)
    assert ours.get_text() == theirs.get_text() and ours.get_text(" ", strip=True) == theirs.get_text(" ", strip=True)
    cells, their_cells = ours.find_all(("td", "th")), theirs.find_all(["td", "th"])
    assert [cell.name for cell in cells] == [cell.name for cell in their_cells]
    assert [cell.get_text(" ") for cell in cells] == [cell.get_text(" ") for cell in their_cells]
    assert _normalized_dom(markup) == normalized_by_beautifulsoup(markup)


def demo_tables() -> list[str]:
    """Every table of the demo: the reference's HTML and the tables of the predicted and reference Markdown."""
    tables = [block["html"] for page in load_shared_json("data", "omnidocbench", "OmniDocBench_demo.json")
              for block in page["layout_dets"] if block.get("html")]
    for folder in ("pred_end2end_markdown", "gt_markdown"):
        for path in sorted(shared_path("data", "omnidocbench", folder).glob("*.md")):
            tables += re.findall(r"<table\b.*?</table>", path.read_text(encoding="utf-8"), re.DOTALL | re.IGNORECASE)
    return tables


def test_every_table_of_the_demo_as_beautifulsoup():
    tables = demo_tables()
    assert len(tables) >= 20
    for table in tables:
        assert_as_beautifulsoup(table)


TOKENS = st.one_of(
    st.sampled_from([
        "<table>", "</table>", "<TABLE border=1>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "</th>", "<TD>", "</Td>",
        "<thead>", "</thead>", "<tbody>", "</tbody>", "<span>", "</span>", "<div>", "</div>", "<p>", "</p>", "<li>",
        "<br>", "<br/>", "</br>", "<img src=x.png>", "<col>", "</col>", "<b>", "</b>", "<sup>", "</sup>",
        "<pre>", "</pre>", "<textarea>", "</textarea>", "<script>", "</script>", "<style>", "</style>",
        "<math alttext='a<b'>", "<math alttext=\"x &amp; y\">", "</math>", "<rt>", "</rt>", "<template>", "</template>",
        '<td colspan="2" rowspan=3 class=" a  b ">', "<td class='x\"y'>", "<td title=\"a'b&quot;c\">", "<td nowrap>",
        "<!-- c -->", "<!---->", "<![CDATA[x<y]]>", "<!DOCTYPE html>", "<!weird>", "<?php x ?>",
        "&amp;", "&lt;", "&gt;", "&nbsp;", "&bogus;", "&amp", "&AMP;", "&#65;", "&#x41;", "&#X41;", "&#128;", "&#0;",
        "&#99999999;", "&#xD800;", "&", "&#", "<", ">", "</", "</>", "<td", "</ td>", "< td>", "<td/>", "<a href='&'>",
        " ", "  ", "\n", "\t", "\r\n", "\xa0", "\u200b", "–",
    ]),
    st.text(alphabet="ab <>&;#\"'=/\n\xa0", max_size=6),
)
MARKUP = st.lists(TOKENS, max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MARKUP)
def test_hostile_markup_as_beautifulsoup(markup):
    assert_as_beautifulsoup(markup)
    assert_as_beautifulsoup(f"<table><tr><td>{markup}</td></tr></table>")


@settings(max_examples=150, deadline=None)
@given(MARKUP)
def test_html_text_as_beautifulsoup(markup):
    fragment = f"<div>{markup}</div>"
    if "<table" not in fragment.lower():
        assert _html_text_fragment(fragment) == text_by_beautifulsoup(fragment)


# --- nesting far beyond Python's recursion limit (issue 42 C7) -------------------------------------------

def nested_tables(depth: int) -> str:
    return "<table><tr><td>" * depth + "x" + "</td></tr></table>" * depth


def nested_divs(depth: int) -> str:
    return "<table><tr><td>" + "<div>" * depth + "x" + "</div>" * depth + "</td></tr></table>"


@pytest.mark.parametrize("markup", [nested_tables(400), nested_divs(5000)], ids=["tables-400", "divs-5000"])
def test_deep_nesting_as_beautifulsoup(markup):
    """BeautifulSoup walks its tree without recursion; so does soup (it raised RecursionError)."""
    assert_as_beautifulsoup(markup)


def test_a_table_nested_150_deep_is_scored(tmp_path):
    """150 nested tables (issue 42 C7's first case) predicted exactly: TEDS 1, edit 0; lxml, which the
    official TEDS also parses with, keeps 255 levels of both trees alike."""
    gt = {"category_type": "table", "order": 1, "html": nested_tables(150)}
    scores = score_one(tmp_path, [gt], nested_tables(150))
    assert (scores["table_teds"], scores["table_edit"]) == (1.0, 0.0)


def test_a_deep_div_is_scored(tmp_path):
    """A `<div>` nested 10,000 deep in a predicted table (issue 42 C7's second case is 50,000, which takes
    a minute): the normalisation removes the divs, so the table is the reference's one-cell table."""
    gt = {"category_type": "table", "order": 1, "html": "<table><tr><td>x</td></tr></table>"}
    scores = score_one(tmp_path, [gt], nested_divs(10_000))
    assert (scores["table_teds"], scores["table_edit"]) == (1.0, 0.0)


def test_the_command_scores_a_page_nested_deeper_than_the_recursion_limit(tmp_path):
    """Issue 42 C7 as a user runs it: one predicted .md holding 400 nested tables ended the whole run
    with "the input is nested too deeply to process", naming no file; the run now scores it."""
    one_page(tmp_path, [{"category_type": "table", "order": 1, "html": nested_tables(400)}])
    (tmp_path / "md").mkdir()
    (tmp_path / "md" / "doc.pdf_1.md").write_text(nested_tables(400), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "tore_engine", "score", "omnidocbench", "--reference", str(tmp_path / "reference.json"),
                             "--markdown", str(tmp_path / "md"), "--json"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["end_to_end"]["table_teds"] == 1.0

