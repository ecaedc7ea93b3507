"""Compare at 100,000 pages (issue 40): two predictions of the synthetic pages (the second a copy of the
first under another name, so the app evaluates it as another model) against one reference, each
evaluated first in the app (Matrices); then Compare in a new tab, and Compare reached from Matrices
by its link in the same tab, each timed until its charts are drawn.

    python -m benchmarks.bench_compare [--pages 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time

from benchmarks.bench_app import CHROMIUM, CHROMIUM_ARGS, Session, _heatmap, _idle
from benchmarks.common import load_average, served_tore_app, synthetic_files

TIMEOUT_MS = 300_000


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    folder = synthetic_files(args.pages)
    second = folder / "prediction_b.json"
    if not second.exists():
        shutil.copyfile(folder / "prediction.json", second)
    query = {"src": "path", "ref": f"{folder.name}/reference.json", "a": f"{folder.name}/prediction.json",
             "b": f"{folder.name}/prediction_b.json", "models": "2"}
    print(f"load before: {load_average()}")
    with served_tore_app(folder.parent) as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        session = Session(browser, url)
        for model in ("A", "B"):
            page, seconds = session.open("", {**query, "model": model})
            _idle(page, TIMEOUT_MS)
            print(f"model {model} evaluated, first heatmap {seconds:.2f} s", flush=True)
            page.close()
        for _ in range(args.repeats):
            page = session.context.new_page()
            start = time.monotonic()
            page.goto(f"{url}/compare?" + "&".join(f"{key}={value}" for key, value in query.items()))
            _heatmap(page, TIMEOUT_MS)
            print(f"Compare in a new tab: first chart {time.monotonic() - start:.2f} s", flush=True)
            page.close()
        for _ in range(args.repeats):
            page, _ = session.open("", {**query, "model": "A"})
            _idle(page, TIMEOUT_MS)
            start = time.monotonic()
            page.get_by_role("link", name="Compare").click()
            page.wait_for_selector("text=Reference, A and B on one page", timeout=TIMEOUT_MS)
            page.wait_for_function("() => document.querySelectorAll('[data-testid=stPlotlyChart] .nsewdrag').length >= 3", timeout=TIMEOUT_MS)
            drawn = time.monotonic() - start
            _idle(page, TIMEOUT_MS)
            print(f"Compare from Matrices' link: its three matrices drawn {drawn:.2f} s, run done {time.monotonic() - start:.2f} s", flush=True)
            page.close()
    print(f"load after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
