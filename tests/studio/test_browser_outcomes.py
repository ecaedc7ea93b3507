"""Box outcomes in Overlays in a real browser (Playwright driving Debian's Chromium at a laptop's
1280x800, as tests/studio/test_browser.py does): the demo's first page drawn by TIDE's outcome, the
panes starting on the first screen, each box's hover naming its outcome, partner and IoU as
`Evaluation.boxes` says (boxes.csv), and a click on a Cls error lighting it and its partner.
A screenshot goes to tests/_artifacts/."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest

from tests.studio.helpers import app_server
from tests.studio.test_browser import _shot, _wait_for_plot, _wait_idle, launched_chromium
from tore_engine.plots.palette import OUTCOME_STYLES

BOXES = """() => { const f = document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot');
  const r = f.getBoundingClientRect();
  const hovers = f.data.flatMap(t => t.meta !== 'box hovers' ? [] : t.text.map((text, k) => ({pane: t.xaxis === 'x2' ? 1 : 0,
      group: t.legendgroup, text, x: t.x[k], y: t.y[k]})));
  const outlines = f.data.filter(t => t.meta === 'boxes').map(t => ({pane: t.xaxis === 'x2' ? 1 : 0, group: t.legendgroup, width: t.line.width}));
  return {top: r.top, hovers, outlines}; }"""
SCREEN_POINT = """([x, y]) => { const f = document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot');
  const L = f._fullLayout, r = f.getBoundingClientRect();
  return [r.left + L.xaxis2._offset + L.xaxis2.l2p(x), r.top + L.yaxis2._offset + L.yaxis2.l2p(y)]; }"""


@pytest.fixture(scope="module")
def tab():
    with app_server(Path(tempfile.mkdtemp())) as url, launched_chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        opened = context.new_page()
        opened.goto(f"{url}/overlays", wait_until="domcontentloaded")
        _wait_for_plot(opened, 120_000)
        _wait_idle(opened)
        yield opened
        context.close()


def _lines(text: str) -> dict[str, str]:
    import html

    title, *rest = text.split("<br>")
    return {"title": html.unescape(title.replace("<b>", "").replace("</b>", ""))} | {
        name: html.unescape(value) for name, _, value in (line.partition(": ") for line in rest)}


def test_the_demo_page_is_drawn_by_outcome_with_partner_and_iou_on_hover(tab, demo_evaluation):
    drawn = tab.evaluate(BOXES)
    assert drawn["top"] < 800  # the panes start on a laptop's first screen
    boxes = demo_evaluation.boxes
    page = boxes[boxes["page"] == demo_evaluation.page_ids[0]]
    assert len(drawn["hovers"]) == len(page)
    for hover in drawn["hovers"]:
        tip = _lines(hover["text"])
        row = page[(page["side"] == ("reference", "prediction")[hover["pane"]]) & (page["index"] == int(tip["box"]))].iloc[0]
        assert hover["group"] == tip["outcome"] == OUTCOME_STYLES[row["error"] or row["outcome"]][0]
        assert tip["IoU"] == ("none" if pd.isna(row["iou"]) else f"{row['iou']:.3f}")
        assert tip["partner"] == "none" if pd.isna(row["partner"]) else tip["partner"].startswith(f"box {int(row['partner'])}, ")
    _shot(tab, "overlays_outcomes")


def test_a_click_on_a_box_lights_it_and_its_partner(tab):
    drawn = tab.evaluate(BOXES)
    error = next(hover for hover in drawn["hovers"] if hover["pane"] == 1 and hover["group"].startswith("Cls"))
    partner = int(_lines(error["text"])["partner"].split(",")[0].removeprefix("box "))
    assert not any(outline["width"] > 1.5 for outline in drawn["outlines"])
    x, y = tab.evaluate(SCREEN_POINT, [error["x"], error["y"]])
    tab.mouse.click(x, y)
    tab.wait_for_function("() => { const f = document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot');"
                          " return !!(f && f.data && f.data.some(t => t.meta === 'boxes' && t.line.width > 1.5)); }", timeout=60_000)
    _wait_idle(tab)
    thick = [outline for outline in tab.evaluate(BOXES)["outlines"] if outline["width"] > 1.5]
    assert sorted((outline["pane"], outline["group"].split(":")[0]) for outline in thick) == sorted(
        [(1, "Cls"), (0, next(hover["group"] for hover in drawn["hovers"] if hover["pane"] == 0
                              and int(_lines(hover["text"])["box"]) == partner).split(":")[0])])


BOX_MATRIX = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')]
    .find(f => f.layout && f.layout.meta && f.layout.meta.chart === 'heatmap' && f.layout.title.text.startsWith('Box-level'))"""


def test_the_box_level_matrix_equals_the_apis_and_a_cell_click_lists_its_pages(tab, demo_evaluation):
    url = tab.url.split("/overlays")[0]
    tab.goto(f"{url}/?errors_open=1", wait_until="domcontentloaded")
    tab.wait_for_function(f"() => !!({BOX_MATRIX})()", timeout=120_000)
    _wait_idle(tab)
    drawn = tab.evaluate(f"""() => {{ const f = ({BOX_MATRIX})(); const cells = [];
        f._fullData.slice(1).forEach(t => Array.from(t.x).forEach((x, k) =>
            cells.push([f.layout.meta.rows[t.y[k]], f.layout.meta.columns[x], t.customdata[k][1]])));
        return cells; }}""")
    matrix = demo_evaluation.box_confusion
    assert {(row, column): count for row, column, count in drawn if count} == {
        (row, column): int(matrix.loc[row, column]) for row in matrix.index for column in matrix.columns if matrix.loc[row, column]}
    row, column = "Text", "Table"
    x, y = tab.evaluate(f"""([row, column]) => {{ const f = ({BOX_MATRIX})(); f.scrollIntoView({{block: 'center'}});
        const L = f._fullLayout, r = f.getBoundingClientRect();
        return [r.left + L.xaxis._offset + L.xaxis.l2p(f.layout.meta.columns.indexOf(column)),
                r.top + L.yaxis._offset + L.yaxis.l2p(f.layout.meta.rows.indexOf(row))]; }}""", [row, column])
    tab.mouse.click(x, y)
    pages = demo_evaluation.pages_for_box_cell(row, column)
    tab.get_by_text(f"{row} → {column}: {int(pages['boxes'].sum()):,} boxes on {len(pages):,} pages, the most first").wait_for(timeout=60_000)
    _shot(tab, "box_level_matrix")


DAP_BARS = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')]
    .find(f => f.layout && f.layout.meta && f.layout.meta.chart === 'bars' && f.layout.title.text.startsWith('dAP per error type'))"""


def test_a_dap_bar_lists_the_pages_with_its_error_most_first(tab, demo_evaluation):
    url = tab.url.split("/?")[0].split("/overlays")[0]
    tab.goto(f"{url}/?errors_open=1", wait_until="domcontentloaded")
    tab.wait_for_function(f"() => !!({DAP_BARS})()", timeout=120_000)
    _wait_idle(tab)
    drawn = tab.evaluate(f"""() => {{ const f = ({DAP_BARS})(); const bar = f._fullData.find(t => t.type === 'bar');
        return Object.fromEntries(f.layout.meta.classes.map((name, k) => [name, Array.from(bar.y)[k]])); }}""")
    assert drawn == pytest.approx(demo_evaluation.errors["dap"], abs=1e-12)  # the bars are report.json's dAP
    error = "Loc"
    x, y = tab.evaluate(f"""(error) => {{ const f = ({DAP_BARS})(); f.scrollIntoView({{block: 'center'}});
        const marker = f._fullData.find(t => t.type === 'scatter'); const k = f.layout.meta.classes.indexOf(error);
        const L = f._fullLayout, r = f.getBoundingClientRect(), at = Array.from(marker.x).findIndex(v => Math.round(v) === k);
        return [r.left + L.xaxis._offset + L.xaxis.l2p(marker.x[at]), r.top + L.yaxis._offset + L.yaxis.l2p(marker.y[at])]; }}""", error)
    tab.mouse.click(x, y)
    counts = demo_evaluation.pages[error]
    tab.get_by_text(f"{int((counts > 0).sum()):,} pages with a {error} error, the most first").wait_for(timeout=60_000)
