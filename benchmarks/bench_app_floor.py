"""What a new tab costs the browser, piece by piece, beside the demo's (issue 24's 2 s target for
the demo in a new tab): bare Streamlit apps served alike, their tabs opened in turn with the
demo's in one browser (the machine is noisy: only tabs of one run compare).

- the floor: one title and a 2x2 Plotly heatmap (`bench_app.BARE_APP`);
- the demo's own heatmap figure (model A, row-normalised, as the Matrices page draws it) alone;
- the same figure after 20 radios, or after 20 select boxes: what a widget above the heatmap
  costs the browser before the heatmap is drawn ((that tab - the figure's) / 20);
- the demo (`tore app`), whose page holds about 20 widgets, six metrics and some text above its
  heatmap.

Beside each tab's seconds, the longest task Chromium reported on its main thread while it loaded
(`bench_app`'s PerformanceObserver).

    python -m benchmarks.bench_app_floor [--tabs 9]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
from pathlib import Path

from benchmarks.bench_app import BARE_APP, CHROMIUM, CHROMIUM_ARGS, Session, _closed, _idle, _longest_task
from benchmarks.common import machine_line, served_app, served_tore_app

FIGURE_APP = """import json

import streamlit as st

st.set_page_config(layout="wide")
st.title("Bare")
{widgets}
st.plotly_chart(json.loads(open({figure!r}, encoding="utf-8").read()), on_select="rerun", selection_mode="points", key="heatmap",
                theme=None, width="content")
"""
WIDGET_COUNT = 20
WIDGETS = {  # a widget, its plural, the lines that draw WIDGET_COUNT of them
    "radio": ("radios", 'for k in range(20):\n    st.radio(f"Radio {k}", ["full", "zero-trimmed", "reduced 2x2"], horizontal=True, key=f"r{k}")'),
    "select box": ("select boxes", 'for k in range(20):\n    st.selectbox(f"Select {k}", ["linear", "log", "power"], key=f"s{k}")'),
}
ALONE = "the demo's heatmap alone"


def demo_figure_json() -> str:
    """The demo's heatmap as the Matrices page first draws it: model A, full view, row-normalised."""

    from tore_engine.api import evaluate
    from tore_engine.plots import heatmaps
    from tore_engine.results.evaluation import shown_matrices
    from tore_engine.studio.data_root import DEMO_DIR
    from tore_engine.studio.sidebar import DEMO_FILES

    evaluation = evaluate(DEMO_DIR / DEMO_FILES["reference"], DEMO_DIR / DEMO_FILES["A"])
    figure = heatmaps.matrix_heatmap(shown_matrices(evaluation.matrices, "full", None), "recall", outline_diagonal=True,
                                     title="row (recall), full: model A")
    return figure.to_json()


def _after(widget: str) -> str:
    return f"the demo's heatmap after {WIDGET_COUNT} {WIDGETS[widget][0]}"


def _scripts(folder: Path) -> dict[str, Path]:
    """The bare apps, as scripts in `folder` (the figure written beside them)."""
    figure = folder / "figure.json"
    figure.write_text(demo_figure_json(), encoding="utf-8")
    scripts = {"floor: a 2x2 heatmap": BARE_APP, ALONE: FIGURE_APP.format(widgets="", figure=str(figure))}
    scripts |= {_after(widget): FIGURE_APP.format(widgets=lines, figure=str(figure)) for widget, (_, lines) in WIDGETS.items()}
    paths = {}
    for k, (name, text) in enumerate(scripts.items()):
        paths[name] = folder / f"app_{k}.py"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def measure(tabs: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each app's new-tab seconds, and the longest task on its main thread while the tab loaded."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench_app_floor_") as folder, sync_playwright() as playwright, contextlib.ExitStack() as stack:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        sessions = {}
        for name, script in _scripts(Path(folder)).items():
            url, _ = stack.enter_context(served_app(Path(folder), script=script))
            sessions[name] = Session(browser, url)
        url, _ = stack.enter_context(served_tore_app(Path(folder)))
        sessions["the demo (tore app)"] = Session(browser, url)
        for session in sessions.values():  # each app's first tab: the browser's cache, the demo evaluated
            _closed(*session.open("", {}))
        times: dict[str, list[float]] = {name: [] for name in sessions}
        longest: dict[str, list[float]] = {name: [] for name in sessions}
        for _ in range(tabs):
            for name, session in sessions.items():
                page, seconds = session.open("", {})
                _idle(page)
                longest[name].append(_longest_task(page))
                times[name].append(_closed(page, seconds))
        browser.close()
    return times, longest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_app_floor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tabs", type=int, default=9, help="new tabs of each app, opened in turn")
    args = parser.parse_args(argv)
    print(machine_line(), flush=True)
    times, longest = measure(args.tabs)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"{name}: median {medians[name]:.2f} s, max {max(values):.2f} {[round(v, 2) for v in values]}; "
              f"longest task while it loaded: median {statistics.median(longest[name]):.2f} s, max {max(longest[name]):.2f}")
    for widget in WIDGETS:
        print(f"a {widget} above the heatmap: {(medians[_after(widget)] - medians[ALONE]) / WIDGET_COUNT * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
