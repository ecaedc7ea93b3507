"""mAP and the operating point in a real browser (issue 22): Playwright driving Debian's Chromium, as
tests/studio/test_browser.py does. On the demo and on the two docling layout models' scored
predictions (../shared; skipped with the reason when absent), the numbers drawn equal
`Evaluation.map`, `per_class` and `sweep()` of an evaluation made here; a click on an AP bar lists
its class's pages; a click on a point of the operating-point chart evaluates at its minimum score,
in the URL and the sidebar, and the matrix drawn is `tore evaluate --min-score t`'s confusion.csv.
Screenshots go to tests/_artifacts/.
"""

from __future__ import annotations

import math
import urllib.parse

import numpy as np
import pytest

from tests.helpers import DEMO, REPOSITORY, SHARED
from tests.studio.helpers import app_server, scores_line_values
from tests.studio.test_browser import FIGURES as PLOTLY_FIGURES
from tests.studio.test_browser import _heatmap_labels, _open_popover, _shot, _wait_for_plot, _wait_idle, launched_chromium
from tests.studio.test_sweep_view import cli_confusion
from tore_engine.api import evaluate_pair
from tore_engine.metrics.sweep import MIN_SCORES
from tore_engine.studio.map_views import FIGURES

TWO_MODELS = SHARED / "data" / "layouts" / "docling_two_layout_models"
TWO_MODELS_FILES = ("coco_results_pre_heron_default_layout_model.json", "coco_results_heron_layout_model.json",
                    "coco_images_and_categories.json")
DATA_ROOT = REPOSITORY.parent  # the demo as <repository>/tore_engine/demo/data, the samples as shared/data


@pytest.fixture(scope="module")
def server():
    with app_server(DATA_ROOT) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with launched_chromium() as launched:
        yield launched


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 4200})  # the whole Matrices page in view
    opened = context.new_page()
    yield opened
    context.close()


def _relative(path) -> str:
    return str(path.relative_to(DATA_ROOT))


def _link(server: str, **query: str) -> str:
    return f"{server}/?{urllib.parse.urlencode(query)}"


def _metrics(page) -> dict[str, str]:
    """The scores line: each figure's label and value, as drawn."""
    return scores_line_values(page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdownContainer] p')].map(p => p.innerText.trim())"""))


def _expected_map(evaluation) -> dict[str, str]:
    report = evaluation.map
    return {label: f"{getattr(report, field):.3f}" for field, label in FIGURES.items()}


def _wait_for_sweep(page) -> None:
    """Open the operating point's section, as a user does, and wait for its figure's two panels."""
    page.locator(".st-key-sweep_open summary").click()
    page.wait_for_function(f"() => ({PLOTLY_FIGURES})('sweep').some(gd => gd.querySelectorAll('.nsewdrag').length === 2)", timeout=120_000)
    _wait_idle(page, 120_000)


def _curve_values(page, name: str, panel: str = "tore") -> list[float]:
    """A curve's F1 at each minimum score of the sweep as drawn (no point: NaN), from the figure
    Plotly drew in one panel (`tore` or `detection`; the detection's Foreground is "all classes")."""
    group = "Foreground" if name == "all classes" else name
    drawn = page.evaluate(f"""([group, axis]) => ({PLOTLY_FIGURES})('sweep')[0]._fullData
        .filter(trace => trace.legendgroup === group && (trace.xaxis || 'x') === axis && trace.mode === 'lines+markers')
        .flatMap(trace => [...trace.x].map((x, k) => [x, trace.y[k]]))""", [group, "x" if panel == "tore" else "x2"])
    by_score = {round(score, 2): math.nan if f1 is None else f1 for score, f1 in drawn}
    return [by_score.get(round(score, 2), math.nan) for score in MIN_SCORES]


def _bar_values(page, series: str, classes) -> list[float]:
    """The drawn bars of one series of the per-class chart, class by class (no bar: NaN)."""
    drawn = page.evaluate(f"""(series) => {{ const figure = ({PLOTLY_FIGURES})('bars')[0];
        const trace = figure._fullData.find(trace => trace.name === series);
        return [...trace.x].map((x, k) => [figure.layout.meta.classes[x], trace.y[k]]); }}""", series)
    values = {name: math.nan if value is None else value for name, value in drawn}
    return [values.get(name, math.nan) for name in classes]


def _sweep_point(page, curve: str, min_score: float) -> tuple[float, float]:
    """Where Plotly drew a curve's point at `min_score` in TORE's panel (its own axes' mapping)."""
    return tuple(page.evaluate(f"""([curve, x]) => {{
        const figure = ({PLOTLY_FIGURES})('sweep')[0]; figure.scrollIntoView({{block: 'center'}});
        const trace = figure._fullData.find(trace => trace.legendgroup === curve && (trace.xaxis || 'x') === 'x' && trace.mode === 'lines+markers');
        const k = [...trace.x].findIndex(value => Math.abs(value - x) < 1e-9);
        const layout = figure._fullLayout, box = figure.getBoundingClientRect();
        return [box.left + layout._size.l + layout.xaxis.d2p(x), box.top + layout._size.t + layout.yaxis.d2p(trace.y[k])];
    }}""", [curve, min_score]))


def _bar_point(page, series: str, name: str) -> tuple[float, float]:
    """The middle of the bar Plotly drew for a class of one series of the per-class chart."""
    return tuple(page.evaluate(f"""([series, name]) => {{
        const figure = ({PLOTLY_FIGURES})('bars')[0]; figure.scrollIntoView({{block: 'center'}});
        const s = figure._fullData.findIndex(trace => trace.name === series), c = figure.layout.meta.classes.indexOf(name);
        const box = figure.querySelectorAll('.barlayer .trace')[s].querySelectorAll('.point')[c].getBoundingClientRect();
        return [box.x + box.width / 2, box.y + box.height / 2];
    }}""", [series, name]))


def _legend_overlaps(page, chart: str) -> tuple[list[str], int]:
    """The titles (the figure's, the axes') that a chart's legend covers as Plotly drew it, and the
    rows its entries take."""
    return tuple(page.evaluate(f"""(chart) => {{
        const figure = ({PLOTLY_FIGURES})(chart)[0], legend = figure.querySelector('.legend').getBoundingClientRect();
        const covered = [...figure.querySelectorAll('.gtitle, .xtitle, .x2title, .ytitle')].filter(text => {{
            const box = text.getBoundingClientRect();
            return box.left < legend.right && legend.left < box.right && box.top < legend.bottom && legend.top < box.bottom; }});
        const rows = new Set([...figure.querySelectorAll('.legend .traces')].map(entry => Math.round(entry.getBoundingClientRect().top)));
        return [covered.map(text => text.textContent), rows.size]; }}""", chart))


def _same(shown: list[float], expected) -> bool:
    return np.array_equal(np.array(shown, dtype=float), np.asarray(expected, dtype=float), equal_nan=True)


def _click_sweep_point(page, min_score: float) -> None:
    """Click the Foreground curve's point at `min_score` (TORE's panel), where Plotly drew it."""
    page.mouse.click(*_sweep_point(page, "Foreground", min_score))


def _heatmap(page) -> tuple[list[str], np.ndarray]:
    """The first heatmap's rows and values (the confusion matrix, with metric=confusion)."""
    rows, columns = _heatmap_labels(page)
    z = np.full((len(rows), len(columns)), np.nan)
    cells = page.evaluate(f"() => ({PLOTLY_FIGURES})('heatmap')[0]._fullData.slice(1).flatMap(trace => [...trace.x].map((x, k) => [trace.y[k], x, trace.customdata[k][1]]))")
    for i, j, pixels in cells:
        z[int(i), int(j)] = pixels
    return rows, z


def _evaluates_at_the_click(page, min_score: float, reference, prediction, out, *cli: str, **engine) -> None:
    """Click the sweep's point at `min_score`: the URL, the sidebar, the matrix and mAP are those of
    an evaluation at that minimum score."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # the browser tests' extra: only when they run

    _click_sweep_point(page, min_score)
    try:
        page.wait_for_url(f"**min_score={min_score}*", timeout=30_000)
    except PlaywrightTimeoutError:  # on a loaded machine a click can land while the chart is still being set up: once more
        _wait_idle(page, 120_000)
        _click_sweep_point(page, min_score)
        page.wait_for_url(f"**min_score={min_score}*", timeout=120_000)
    _wait_for_plot(page)
    _wait_idle(page, 120_000)
    _open_popover(page, "Evaluation")
    try:  # the popover's input takes the URL's value on the rerun that opens it: on a loaded machine, a moment later
        page.wait_for_function(f"() => document.querySelector('.st-key-min_score input')?.value === '{min_score:.2f}'", timeout=30_000)
    finally:
        assert page.locator(".st-key-min_score input").input_value() == f"{min_score:.2f}"
    page.keyboard.press("Escape")
    classes, expected = cli_confusion(reference, prediction, min_score, out, *cli)
    rows, shown = _heatmap(page)
    assert rows == classes and np.array_equal(shown, expected)
    at_threshold = evaluate_pair(reference, prediction, min_score=min_score, **engine).evaluation
    assert {label: value for label, value in _metrics(page).items() if label in FIGURES.values()} == _expected_map(at_threshold)


def test_the_demo_shows_map_ap_bars_and_the_sweep_and_a_click_evaluates_there(server, page, tmp_path):
    reference, prediction = DEMO / "reference.json", DEMO / "model_a.json"
    evaluation = evaluate_pair(reference, prediction).evaluation
    page.goto(_link(server, metric="confusion"))
    _wait_for_plot(page)
    _wait_for_sweep(page)
    shown = _metrics(page)
    assert {label: shown[label] for label in FIGURES.values()} == _expected_map(evaluation)
    assert shown["Foreground recall"] == f"{evaluation.matrices.foreground[0]:.3f}"
    per_class = evaluation.per_class
    assert _same(_bar_values(page, "AP", per_class.index), per_class["ap"])
    assert _same(_bar_values(page, "AR@100", per_class.index), per_class["ar_100"])
    sweep = evaluation.sweep()
    foreground = sweep[sweep["scope"] == "foreground"]
    assert _same(_curve_values(page, "Foreground"), foreground["f1"])
    assert _same(_curve_values(page, "all classes", "detection"), foreground["detection_f1"])
    assert _legend_overlaps(page, "bars") == ([], 1)  # the five series in one row, under the chart's title
    assert _legend_overlaps(page, "sweep")[0] == []  # below the axes' titles
    _shot(page, "20_map_and_sweep")

    page.mouse.click(*_bar_point(page, "AP", "Table"))  # the AP bar of Table
    page.get_by_text("Pages with Table:").wait_for(timeout=30_000)
    _wait_idle(page)
    _shot(page, "21_ap_bar_clicked")

    _evaluates_at_the_click(page, 0.75, reference, prediction, tmp_path / "cli")
    _shot(page, "22_sweep_point_clicked")


@pytest.mark.skipif(not TWO_MODELS.exists(), reason=f"the scored predictions of two docling layout models are not at {TWO_MODELS}")
def test_real_scored_predictions_show_their_map_and_sweep_and_a_click_evaluates_there(server, page, tmp_path):
    reference, prediction, images = (TWO_MODELS / name for name in TWO_MODELS_FILES)
    evaluation = evaluate_pair(reference, prediction, coco_images=images).evaluation
    page.goto(_link(server, src="path", ref=_relative(reference), a=_relative(prediction), coco=_relative(images), metric="confusion"))
    _wait_for_plot(page)
    _wait_for_sweep(page)
    assert {label: _metrics(page)[label] for label in FIGURES.values()} == _expected_map(evaluation)
    per_class = evaluation.per_class
    assert _same(_bar_values(page, "AP", per_class.index), per_class["ap"])
    sweep = evaluation.sweep()
    assert _same(_curve_values(page, "Foreground"), sweep[sweep["scope"] == "foreground"]["f1"])
    for name in ("text", "picture", "section_header"):
        assert _same(_curve_values(page, name), sweep[sweep["class"] == name]["f1"])
    _shot(page, "23_two_docling_models_sweep")
    best = float(sweep[(sweep["scope"] == "foreground") & sweep["best"]]["min_score"].iloc[0])
    _evaluates_at_the_click(page, best, reference, prediction, tmp_path / "cli", "--images", str(images), coco_images=images)
    _shot(page, "24_two_docling_models_at_the_best_minimum_score")


METRICS_CUT = """() => [...document.querySelectorAll('[data-testid=stMetricLabel], [data-testid=stMetricLabel] *, [data-testid=stMetricValue], [data-testid=stMetricValue] *')]
    .filter(element => element.scrollWidth > element.clientWidth + 1 || element.textContent.trim().endsWith('…')).map(element => element.textContent)"""


@pytest.mark.parametrize("benchmark", ["docile", "funsd", "omnidocbench"])
@pytest.mark.skipif(not (SHARED / "data").exists(), reason=f"the shared samples the Scores page reads are not at {SHARED / 'data'}")
def test_no_score_is_cut_on_a_laptop(server, browser, benchmark):
    """Issue 37: at 1280 px the Scores page showed KILE AP, F1, precision and recall as "0.…" and
    labels as "KILE Preci…": each metric is now as wide as its label and value, a row wraps."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        tab = context.new_page()
        tab.goto(f"{server}/scores?bench={benchmark}")
        tab.locator("[data-testid=stMetricValue]").first.wait_for(timeout=180_000)
        _wait_idle(tab, 180_000)
        _shot(tab, f"13_scores_{benchmark}_at_1280x800")
        assert tab.locator("[data-testid=stMetricValue]").count() >= 4
        assert tab.evaluate(METRICS_CUT) == []
    finally:
        context.close()
