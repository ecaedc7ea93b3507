"""The app's new-tab and Overlays times of this checkout against another commit's, in one run (the
machine is shared and noisy: runs minutes apart differ by more than most changes do). Both are
served at once by `tore app` (the other commit from a temporary `git worktree`, imported through
PYTHONPATH), and one browser opens their tabs in turn: the demo in a new tab, a cached link to
`benchmarks/synthetic.py`'s pages in a new tab, and that page's first all-pages row opened in
Overlays (as `bench_app` measures them). With `--first-heatmaps N`, instead: a fresh server's first
heatmap of those pages, the link typed as soon as it answers in a fresh browser (`bench_app`'s
first step), N times for each version, in turn. With `--saved-tabs N`: `tore app DIR` of the
folder `bench_saved` saved for those pages, a new server of each version in turn, its first two
tabs at the link it prints opened as soon as it answers (issue 39's "within 3 s").

    python -m benchmarks.bench_app_ab --against REV [--pages 20000] [--tabs 6]
    python -m benchmarks.bench_app_ab --against REV --pages 100000 --first-heatmaps 3
    python -m benchmarks.bench_app_ab --against REV --pages 100000 --saved-tabs 6
"""

from __future__ import annotations

import argparse
import contextlib
import statistics

from benchmarks.bench_app import CHROMIUM, CHROMIUM_ARGS, Session, _closed, link_query, row_to_overlays
from benchmarks.common import REPOSITORY, WORK, machine_line, served_tore_app, synthetic_files, worktree


def measure(revision: str, pages: int, tabs: int) -> dict[str, dict[str, list[float]]]:
    from playwright.sync_api import sync_playwright

    folder = synthetic_files(pages)
    query = link_query(folder)
    steps = {"demo_new_tab_s": lambda s: _closed(*s.open("", {})), "cached_new_tab_s": lambda s: _closed(*s.open("", query)),
             "row_to_overlays_s": lambda s: row_to_overlays(s, query, "page_000000")[0]}
    times: dict[str, dict[str, list[float]]] = {step: {revision: [], "this checkout": []} for step in steps}
    with contextlib.ExitStack() as stack, sync_playwright() as playwright:
        trees = {revision: stack.enter_context(worktree(revision)), "this checkout": REPOSITORY}
        urls = {name: stack.enter_context(served_tore_app(folder.parent, tree=tree))[0] for name, tree in trees.items()}
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        sessions = {name: Session(browser, url) for name, url in urls.items()}
        for session in sessions.values():  # each evaluated once: every later tab finds it cached
            _closed(*session.open("", {}))
            _closed(*session.open("", query))
        for _ in range(tabs):
            for step, action in steps.items():
                for name, session in sessions.items():
                    times[step][name].append(action(session))
        browser.close()
    return times


def first_heatmaps(revision: str, pages: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Each version's first heatmap on a server of its own started for it, in turn."""
    from playwright.sync_api import sync_playwright

    folder = synthetic_files(pages)
    query = link_query(folder)
    times: dict[str, list[float]] = {revision: [], "this checkout": []}
    with worktree(revision) as tree, sync_playwright() as playwright:
        trees = {revision: tree, "this checkout": REPOSITORY}
        for _ in range(rounds):
            for name, checkout in trees.items():
                with served_tore_app(folder.parent, tree=checkout) as (url, _):
                    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                    times[name].append(_closed(*Session(browser, url).open("", query)))
                    browser.close()
    return {"first_heatmap_s": times}


def saved_tabs(revision: str, pages: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Each version's `tore app DIR` on a server of its own started for it, in turn (the order
    reversed every other round), its first and second tabs at the saved folder's link."""
    from playwright.sync_api import sync_playwright

    out = WORK / f"saved_n{pages}"
    if not (out / "saved.json").is_file():
        raise SystemExit(f"{out} holds no saved evaluation: run `python -m benchmarks.bench_saved --pages {pages}` first")
    times: dict[str, dict[str, list[float]]] = {"saved_first_tab_s": {revision: [], "this checkout": []},
                                                "saved_second_tab_s": {revision: [], "this checkout": []}}
    with worktree(revision) as tree, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        trees = {revision: tree, "this checkout": REPOSITORY}
        for round_ in range(rounds):
            for name in list(trees)[:: 1 if round_ % 2 == 0 else -1]:
                with served_tore_app(out.parent, tree=trees[name], folder=out.name) as (url, _):
                    session = Session(browser, url)
                    for step in ("saved_first_tab_s", "saved_second_tab_s"):
                        times[step][name].append(_closed(*session.open("", {"saved": out.name})))
        browser.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_app_ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the commit to compare with (any git revision)")
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--tabs", type=int, default=6, help="tabs of each step and each version, opened in turn")
    parser.add_argument("--first-heatmaps", type=int, default=0, metavar="N", help="measure N fresh servers' first heatmaps of each version instead")
    parser.add_argument("--saved-tabs", type=int, default=0, metavar="N", help="measure N fresh `tore app DIR` servers' first two tabs of each version instead")
    args = parser.parse_args(argv)
    print(machine_line(), flush=True)
    if args.saved_tabs:
        measured = saved_tabs(args.against, args.pages, args.saved_tabs)
    elif args.first_heatmaps:
        measured = first_heatmaps(args.against, args.pages, args.first_heatmaps)
    else:
        measured = measure(args.against, args.pages, args.tabs)
    for step, by_version in measured.items():
        before, after = (statistics.median(values) for values in by_version.values())
        shown = "; ".join(f"{name} median {statistics.median(values):.2f} s {[round(v, 2) for v in values]}" for name, values in by_version.items())
        print(f"{step} ({args.pages:,} pages): {shown}; ratio {after / before:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
