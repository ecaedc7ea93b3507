"""The app at scale (issue 24): what a user waits for in Chromium on 20,000 and 100,000 native-JSON
pages, against the targets:

- first heatmap (a fresh server, the link typed) at most the CLI's time for the same files plus 3 s;
- the same link in a new tab once the evaluation is cached within 3 s, the demo's within 2 s;
- Overlays: Next, picking a page by its id, and a row of the all-pages table opened in Overlays,
  each within 1 s; the browser's main thread never blocked more than 0.5 s (its long tasks, as
  Chromium's PerformanceObserver reports them, over the whole session);
- the server's memory (PSS of its process tree) with the evaluation held, at most 1 GB.

Beside the demo's new tab, the same browser opens tabs of the floor, a bare Streamlit app of one
title and one 2x2 Plotly heatmap (the app's chart library) served alike, one after the other with
the demo's: what any Streamlit page with such a chart costs on this machine.

The app is served by `tore app`, as `./run.sh app` serves it (benchmarks.common.served_tore_app), and driven by Playwright in
Debian's Chromium (/usr/bin/chromium; no browser download). The data are `benchmarks/synthetic.py`'s
pages (seed 0, 40 boxes a page), written once into benchmarks/_work/.

    python -m benchmarks.bench_app --pages 20000 100000 [--repeats 3] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import REPOSITORY, machine_line, served_app, served_tore_app, synthetic_files, tore_command, tree_pss

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# a Plotly figure's plot area (every chart of the app); or a Vega-Lite heatmap's cells or page image, the charts of
# the commits from 7bd9def to the Plotly app (`bench_app_ab --against` one of them)
CHART_DRAWN = ("[data-testid=stPlotlyChart] .nsewdrag, [data-testid=stVegaLiteChart] svg .mark-rect path, "
               "[data-testid=stVegaLiteChart] svg .mark-image image")
LONG_TASKS = """
window.__longest = 0;
new PerformanceObserver(list => {
    for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration);
}).observe({type: 'longtask', buffered: true});
"""
BARE_APP = """import plotly.graph_objects as go
import streamlit as st

st.title("Bare")
st.plotly_chart(go.Figure(go.Heatmap(z=[[0, 1], [2, 3]])), theme=None)
"""
TIMEOUT_MS = 300_000
MB = 2**20


def _idle(page, timeout: float = TIMEOUT_MS) -> None:
    """Until Streamlit has finished the current run (its status widget is gone)."""
    page.wait_for_timeout(150)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=timeout)


def _heatmap(page, timeout: float = TIMEOUT_MS) -> None:
    """Until the page's first chart is drawn: a heatmap's cells (Matrices) or a page's image (Overlays)."""
    page.wait_for_selector(CHART_DRAWN, state="attached", timeout=timeout)


def _timed(action: Callable[[], None]) -> float:
    start = time.monotonic()
    action()
    return time.monotonic() - start


def _shown_page(page, page_id: str) -> None:
    """Until the navigator shows `page_id` and its overlay is drawn (the run ended)."""
    page.locator("[data-testid=stMarkdownContainer]", has_text=f"Page {page_id}:").first.wait_for(timeout=TIMEOUT_MS)
    _idle(page)
    _heatmap(page)


def _cli_seconds(reference: Path, prediction: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="bench_app_cli_") as out:
        command = tore_command(["evaluate", str(reference), str(prediction), "--out", out, "-q"])
        start = time.monotonic()
        subprocess.run(command, check=True, cwd=REPOSITORY)
        return time.monotonic() - start


class Session:
    """One browser window on one app server: each tab a new page of one context (they share the
    browser's cache, as a user's tabs do; each is a new Streamlit session)."""

    def __init__(self, browser, url: str) -> None:
        self.url = url
        self.context = browser.new_context(viewport={"width": 1500, "height": 1400})
        self.context.add_init_script(LONG_TASKS)

    def open(self, path: str, query: dict[str, str]):
        """A new tab at the link; the tab and the seconds until its first plot is drawn."""
        page = self.context.new_page()
        seconds = _timed(lambda: (page.goto(f"{self.url}/{path}?{urllib.parse.urlencode(query)}"), _heatmap(page)))
        return page, seconds


def _closed(page, seconds: float) -> float:
    _idle(page)
    page.close()
    return seconds


def _forget_long_tasks(page) -> None:
    """Count long tasks from now on (not the page's first load, measured apart)."""
    page.evaluate("() => { window.__longest = 0; }")


def _longest_task(page) -> float:
    return page.evaluate("() => window.__longest") / 1000


def _overlays(session: Session, query: dict[str, str], page_ids: list[str], repeats: int) -> dict[str, list[float]]:
    """Next, a page picked by its id, on the Overlays page."""
    page, _ = session.open("overlays", {**query, "page": page_ids[0]})
    _shown_page(page, page_ids[0])
    _forget_long_tasks(page)
    times: dict[str, list[float]] = {"next_s": [], "pick_by_id_s": []}
    for k in range(repeats):
        times["next_s"].append(_timed(lambda k=k: (page.get_by_role("button", name="Next ▶").click(), _shown_page(page, page_ids[k + 1]))))
    field = page.get_by_role("textbox", name="Find a page by id")
    for target in page_ids[-repeats:]:
        times["pick_by_id_s"].append(_timed(lambda target=target: (field.fill(target), field.press("Enter"), _shown_page(page, target))))
    times["longest_task_next_and_pick_s"] = [_longest_task(page)]
    page.close()
    return times


def _open_first_row(page, first_page: str) -> None:
    page.locator(".st-key-open-button-all-A-A button").click()
    page.wait_for_url("**/overlays**", timeout=TIMEOUT_MS)
    _shown_page(page, first_page)


def row_to_overlays(session: Session, query: dict[str, str], first_page: str) -> tuple[float, float]:
    """A page of the all-pages table opened in Overlays (the table's button, as the keyboard does;
    the first row: pages in file order), in a new tab with the table's section open, clicked as soon
    as the page is drawn: the seconds, and the longest main-thread task."""
    page, _ = session.open("", {**query, "pages_open": "1"})
    _idle(page)
    page.locator(".st-key-open-button-all-A-A button").scroll_into_view_if_needed()
    _forget_long_tasks(page)
    seconds = _timed(functools.partial(_open_first_row, page, first_page))
    longest = _longest_task(page)
    page.close()
    return seconds, longest


def _rows_to_overlays(session: Session, query: dict[str, str], first_page: str, repeats: int) -> dict[str, list[float]]:
    times = [row_to_overlays(session, query, first_page) for _ in range(repeats)]
    return {"row_to_overlays_s": [seconds for seconds, _ in times], "longest_task_row_to_overlays_s": [longest for _, longest in times]}


def link_query(folder: Path) -> dict[str, str]:
    """The link's parameters for `synthetic_files`' reference and prediction in `folder` (the data
    root is its parent)."""
    return {"src": "path", "ref": str((folder / "reference.json").relative_to(folder.parent)),
            "a": str((folder / "prediction.json").relative_to(folder.parent))}


def measure(pages: int, repeats: int) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    folder = synthetic_files(pages)
    reference, prediction = folder / "reference.json", folder / "prediction.json"
    result: dict[str, object] = {"pages": pages, "machine": machine_line(), "cli_s": _cli_seconds(reference, prediction)}
    query = link_query(folder)
    page_ids = [f"page_{k:06d}" for k in range(pages)]
    with served_tore_app(folder.parent) as (url, server), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        session = Session(browser, url)
        page, result["first_heatmap_s"] = session.open("", query)
        _idle(page)
        result["longest_task_first_load_s"] = _longest_task(page)
        page.close()
        result["server_pss_mb"] = tree_pss(server.pid) / MB
        result["cached_new_tab_s"] = [_closed(*session.open("", query)) for _ in range(repeats)]
        result |= _overlays(session, query, page_ids, repeats)
        result |= _rows_to_overlays(session, query, page_ids[0], repeats)
        result["server_pss_after_mb"] = tree_pss(server.pid) / MB
        result |= _demo_beside_floor(browser, session, repeats)
        browser.close()
    return result


def _demo_beside_floor(browser, demo: Session, repeats: int) -> dict[str, list[float]]:
    """The demo in a new tab, each beside a new tab of the bare app (`BARE_APP`)."""
    times: dict[str, list[float]] = {"demo_new_tab_s": [], "bare_app_new_tab_s": []}
    with tempfile.TemporaryDirectory(prefix="bench_app_bare_") as folder:
        script = Path(folder) / "bare.py"
        script.write_text(BARE_APP, encoding="utf-8")
        with served_app(Path(folder), script=script) as (url, _):
            bare = Session(browser, url)
            _closed(*demo.open("", {}))  # the demo, evaluated once
            _closed(*bare.open("", {}))
            for _ in range(repeats):
                times["demo_new_tab_s"].append(_closed(*demo.open("", {})))
                times["bare_app_new_tab_s"].append(_closed(*bare.open("", {})))
    return times


def _summary(result: dict[str, object]) -> str:
    def shown(value: object) -> str:
        if isinstance(value, list):
            return f"median {statistics.median(value):.2f}, max {max(value):.2f}"
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    return "\n".join(f"  {key}: {shown(value)}" for key, value in result.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_app", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args(argv)
    results = []
    for pages in args.pages:
        results.append(measure(pages, args.repeats))
        print(f"{pages:,} pages\n{_summary(results[-1])}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
