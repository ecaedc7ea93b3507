"""The app at 20,000 pages in a real browser (issue 24): Playwright in Debian's Chromium drives the
Overlays navigator and the all-pages table, and reads every websocket frame the server sends.

The page navigation must send the browser a page of results, never every page id: over the whole
session (the link opened, Next, a page picked by its id, the Worst first order, a row of the
all-pages table opened in Overlays) the frames name at most a few hundred of the 20,000 ids, and
each step is timed. The pages have 10 boxes each (40 in the benchmark) so that writing them fits
the suite's time; the number of pages is what the navigator scales with. Timings go to
tests/_artifacts/browser_scale_timings.json; the bounds leave room for a loaded CI machine (the
targets are measured by benchmarks/bench_app.py).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse

import numpy as np
import pytest

from tests.studio.helpers import app_server
from tests.studio.test_browser import ARTIFACTS, _shot, _wait_for_plot, _wait_idle, launched_chromium

PAGES = 20_000
PAGE_ID = re.compile(rb"page_\d{6}")
MAX_IDS_SENT = 400  # the ids a session may see: a screen of rows, a list of matches, the pages shown
STEP_LIMIT_S = 10  # per step on a loaded CI machine; the benchmark holds the 1 s target


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    synthetic = pytest.importorskip("benchmarks.synthetic", reason="benchmarks/synthetic.py is not available")
    folder = tmp_path_factory.mktemp("scale")
    synthetic.write_layout_files(folder / "data", pages=PAGES, seed=7, boxes=10)
    return folder


def _shown_page(page, page_id: str) -> None:
    page.locator("[data-testid=stMarkdownContainer]", has_text=f"Page {page_id}:").first.wait_for(timeout=60_000)
    _wait_idle(page, timeout=60_000)
    _wait_for_plot(page)


def _timed(timings: dict, name: str, action) -> None:
    start = time.monotonic()
    action()
    timings[name] = round(time.monotonic() - start, 2)


def test_twenty_thousand_pages_are_browsed_without_sending_their_ids(dataset):
    worst = _worst_page(dataset)
    query = urllib.parse.urlencode({"src": "path", "ref": "data/reference.json", "a": "data/prediction.json"})
    received: list[bytes] = []
    timings: dict[str, float] = {}
    with app_server(dataset) as url, launched_chromium() as browser:
        page = browser.new_context(viewport={"width": 1500, "height": 1400}).new_page()
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: received.append(
            frame if isinstance(frame, bytes) else frame.encode())))
        _timed(timings, "first_heatmap_s", lambda: (page.goto(f"{url}/overlays?{query}&page=page_000000"), _wait_for_plot(page, 120_000)))
        _shown_page(page, "page_000000")
        _timed(timings, "next_s", lambda: (page.get_by_role("button", name="Next ▶").click(), _shown_page(page, "page_000001")))
        find = page.get_by_role("textbox", name="Find a page by id")
        _timed(timings, "pick_by_id_s", lambda: (find.fill("page_019999"), find.press("Enter"), _shown_page(page, "page_019999")))
        find.fill("page_01234")  # 10 matches: listed, not opened
        find.press("Enter")
        page.get_by_text("10 pages match").wait_for(timeout=60_000)
        order = page.locator(".st-key-order").get_by_role("combobox")
        order.click()
        page.get_by_role("option", name="worst reduced F1 first").click()
        _shown_page(page, worst)  # worst first opens on the worst page
        _shot(page, "11_scale_overlays_worst_first")
        page.goto(f"{url}/?{query}&pages_open=1")
        _wait_for_plot(page, 60_000)
        _wait_idle(page, 60_000)
        open_button = page.locator(".st-key-open-button-all-A-A button")
        open_button.scroll_into_view_if_needed()
        page.get_by_text("Rows 1 to 50 of 20,000").wait_for()
        _timed(timings, "row_to_overlays_s", lambda: (open_button.click(), page.wait_for_url("**/overlays**", timeout=60_000),
                                                      _shown_page(page, "page_000000")))
        browser.close()
    sent = {match for frame in received for match in PAGE_ID.findall(frame)}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = {**timings, "page_ids_sent": len(sent), "bytes_received": sum(map(len, received))}
    (ARTIFACTS / "browser_scale_timings.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    assert worst.encode() in sent and len(sent) <= MAX_IDS_SENT, len(sent)
    assert all(seconds < STEP_LIMIT_S for name, seconds in timings.items() if name != "first_heatmap_s"), timings


def _worst_page(folder) -> str:
    """The page with the lowest reduced Foreground F1, from the engine (ties: the first)."""
    from tore_engine.api import evaluate_pair

    evaluation = evaluate_pair(folder / "data" / "reference.json", folder / "data" / "prediction.json", workers=2).evaluation
    f1 = evaluation.pages["foreground_f1"].to_numpy()
    return evaluation.page_ids[int(np.argmin(f1))]
