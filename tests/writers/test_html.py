"""The HTML report (`tore_engine.writers.html`): self-contained, escaped, deterministic; and, in
Debian's Chromium through Playwright (skipping when either is missing), drawn with no console error,
no network request, and hostile class names shown as written."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import report_data
from tore_engine.core.errors import InputError
from tore_engine.plots.heatmaps import LABEL_LIMIT
from tore_engine.plots.plain_text import shortened
from tore_engine.writers.html import PLOTLY_MISSING, report_html, write_html

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
HOSTILE_TITLE = "</title><script>alert('title')</script>"
FIGURES = 4  # recall and precision of the main view, and of the reduced view


class Elements(HTMLParser):
    """Every start tag with its attributes, and whether the parser saw the end of the document."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.closed = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        self.closed |= tag == "html"


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    write_html(report_data.hostile().report_content(), path, title=HOSTILE_TITLE)
    return path


def _elements(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser


def test_parses_and_needs_no_network(hostile_report):
    text = hostile_report.read_text(encoding="utf-8")
    elements = _elements(text)
    assert elements.closed
    assert not [attrs for tag, attrs in elements.tags if tag == "script" and "src" in attrs]  # plotly.js is inlined
    assert not re.search(r"<script[^>]*src\s*=\s*[\"']?https?:", text, re.IGNORECASE)
    assert not [attrs for tag, attrs in elements.tags if tag in ("link", "img", "iframe")]
    assert sum(1 for tag, attrs in elements.tags if tag == "div" and attrs.get("class") == "plotly-graph-div") == FIGURES


def test_hostile_names_and_ids_are_escaped(hostile_report):
    text = hostile_report.read_text(encoding="utf-8")
    for hostile in (report_data.HOSTILE_IMAGE, report_data.HOSTILE_LINK, HOSTILE_TITLE, *report_data.HOSTILE_PAGES[1:2]):
        assert hostile not in text
    elements = _elements(text)
    assert [tag for tag, _ in elements.tags if tag in ("img", "a", "title")] == ["title"]
    assert sum(1 for tag, _ in elements.tags if tag == "script") == 1 + FIGURES  # plotly.js and one per figure
    assert "&lt;img src=x onerror=alert(1)&gt;" in text  # the per-class table shows it as text


def test_tables_hold_every_class_and_page(hostile_report):
    evaluation = report_data.hostile()
    text = hostile_report.read_text(encoding="utf-8")
    rows = _elements(text).tags.count(("tr", {}))
    header_rows = 3  # per class, pages, warnings
    assert rows == header_rows + len(evaluation.matrices.per_class) + len(evaluation.page_ids) + len(evaluation.warnings)


def test_same_bytes_for_the_same_evaluation():
    evaluation = report_data.paper()
    assert report_html(evaluation.report_content(), "paper") == report_html(evaluation.report_content(), "paper")


def test_dual_mode_shows_the_trimmed_view_and_no_per_class_table():
    text = report_html(report_data.paper("dual").report_content())
    assert "Matrices (zero-trimmed)" in text and "Dual taxonomy" in text and "<h2>Per class</h2>" not in text


def test_long_tables_are_cut_with_a_note(monkeypatch):
    monkeypatch.setattr("tore_engine.writers.html.TABLE_ROW_LIMIT", 10)
    text = report_html(report_data.public().report_content())
    assert "The first 10 of 60 pages" in text and "The first 10 of 33 warnings" in text  # 32 boxes clipped, the mAP note


def test_without_plotly_an_input_error_names_the_extra(tmp_path, monkeypatch):
    import tore_engine.plots

    for name in [name for name in sys.modules if name == "plotly" or name.startswith("plotly.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "tore_engine.plots.heatmaps", raising=False)
    monkeypatch.delattr(tore_engine.plots, "heatmaps", raising=False)
    with pytest.raises(InputError) as raised:
        write_html(report_data.paper().report_content(), tmp_path / "report.html")
    assert str(raised.value) == PLOTLY_MISSING and "'app' extra" in PLOTLY_MISSING
    assert not (tmp_path / "report.html").exists()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium); skipping the in-browser check")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (pip install playwright)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def test_draws_in_chromium_without_errors_or_requests(browser, hostile_report):
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}") if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.on("request", lambda request: None if request.url.startswith(("file:", "data:", "blob:")) else problems.append(f"request {request.url}"))
    page.goto(hostile_report.as_uri())
    page.wait_for_selector(".js-plotly-plot .nsewdrag")
    assert page.locator(".js-plotly-plot").count() == FIGURES
    assert page.title() == HOSTILE_TITLE
    assert page.locator("img").count() == 0 and page.locator(".js-plotly-plot a").count() == 0
    ticks = page.locator(".js-plotly-plot .ytick text").all_text_contents()
    # drawn as written (as text, long names shortened in the middle, whole on hover)
    assert shortened(report_data.HOSTILE_IMAGE, LABEL_LIMIT) in ticks and shortened(report_data.HOSTILE_LINK, LABEL_LIMIT) in ticks
    page.close()
    assert problems == []
