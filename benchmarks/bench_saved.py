"""Reopening a saved evaluation (issue 39): `tore evaluate --out DIR` on the synthetic pages, then
`tore.open(DIR)` in fresh processes (imports included), against the evaluation's own time, with the
process's peak PSS; and a check that the reopened evaluation writes report.json, pages.csv and
cells.csv again byte for byte.

    python -m benchmarks.bench_saved --pages 100000 [--data DIR] [--opens 3] [--app 3]

`--app N`: then N new tabs of `tore app` (Debian's Chromium) at `?saved=<the folder>`, each timed until
its heatmap is drawn, the first on a server just started (nothing evaluated: the app reopens the folder).
`--cold N`: N trials of the first two tabs on a just-started server, each after the floor's (a bare
Streamlit page with one Plotly chart, `bench_app.BARE_APP`) first two tabs on its own new server.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from benchmarks.common import WORK, load_average, run_command, served_tore_app, synthetic_files, tore_command, tore_environment

OPEN = "import sys, tore_engine as tore; tore.open(sys.argv[1])"
CHECK = """
import sys, tempfile, pathlib, tore_engine as tore
from tore_engine.writers.outputs import write_outputs
out = pathlib.Path(sys.argv[1]); ev = tore.open(out)
with tempfile.TemporaryDirectory() as again:
    write_outputs(ev.report_content(), pathlib.Path(again), ["cells"])
    differ = [p.name for p in sorted(pathlib.Path(again).iterdir()) if p.read_bytes() != (out / p.name).read_bytes()]
print("differ:", differ or "none")
"""


def saved_link_seconds(out: Path, tabs: int) -> list[float]:
    """Seconds from a new tab at `?saved=` to its heatmap, for each of `tabs` tabs of one new server."""
    from playwright.sync_api import sync_playwright

    from benchmarks.bench_app import CHROMIUM, CHROMIUM_ARGS, Session, _closed

    with served_tore_app(out.parent) as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        session = Session(browser, url)
        return [_closed(*session.open("", {"saved": out.name})) for _ in range(tabs)]


def cold_first_tabs(out: Path, trials: int) -> list[tuple[list[float], list[float], list[float]]]:
    """For each trial: the floor's first two tabs on a new server, then the `?saved=` link's on a
    new `tore app`, then on a new `tore app FOLDER` (which opens it as it starts)."""
    import tempfile

    from playwright.sync_api import sync_playwright

    from benchmarks.bench_app import BARE_APP, CHROMIUM, CHROMIUM_ARGS, Session, _closed
    from benchmarks.common import served_app

    results = []
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        script = Path(folder) / "bare.py"
        script.write_text(BARE_APP, encoding="utf-8")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for _ in range(trials):
            with served_app(Path(folder), script=script) as (url, _):
                floor = [_closed(*Session(browser, url).open("", {})) for _ in range(2)]
            tabs = []
            for folder in (None, out.name):
                with served_tore_app(out.parent, folder=folder) as (url, _):
                    session = Session(browser, url)
                    tabs.append([_closed(*session.open("", {"saved": out.name})) for _ in range(2)])
            results.append((floor, *tabs))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--data", type=Path, help="a folder of reference.json and prediction.json (default: the synthetic pages)")
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--app", type=int, default=0, help="tabs of the app opened at ?saved= (0: none)")
    parser.add_argument("--cold", type=int, default=0, help="trials of a new server's first ?saved= tabs beside the floor's (0: none)")
    parser.add_argument("--reuse", action="store_true", help="open the folder a previous run saved instead of evaluating again")
    args = parser.parse_args(argv)
    data = args.data or synthetic_files(args.pages)
    out = WORK / f"saved_n{args.pages}"
    print(f"load before: {load_average()}")
    if args.reuse:
        _print_cold(out, args.cold)
        print(f"load after: {load_average()}")
        return 0
    evaluation = run_command(tore_command(["evaluate", str(data / "reference.json"), str(data / "prediction.json"), "--out", str(out),
                                           "--cells", "-q", "--workers", str(args.workers)]), env=tore_environment(), sample_every=0.2)
    saved = sum((out / name).stat().st_size for name in ("saved.json", "saved-text.json", "saved-arrays.npz"))
    print(f"evaluate {args.pages:,} pages: {evaluation.seconds:.2f} s, peak PSS {evaluation.peak_pss / 2**20:.0f} MB; saved files {saved / 2**20:.1f} MB")
    opens = [run_command([sys.executable, "-c", OPEN, str(out)], sample_every=0.05) for _ in range(args.opens)]
    seconds = [run.seconds for run in opens]
    print(f"tore.open in a fresh process: median {statistics.median(seconds):.2f} s (runs {', '.join(f'{s:.2f}' for s in seconds)}), "
          f"{statistics.median(seconds) / evaluation.seconds:.3f} of the evaluation; peak PSS {max(run.peak_pss for run in opens) / 2**20:.0f} MB")
    bare = run_command([sys.executable, "-c", "import tore_engine"])
    print(f"import tore_engine alone: {bare.seconds:.2f} s")
    print(run_command([sys.executable, "-c", CHECK, str(out)]).stdout.strip())
    if args.app:
        tabs = saved_link_seconds(out, args.app)
        print(f"app ?saved= new tab to heatmap: {', '.join(f'{s:.2f}' for s in tabs)} s (first on a new server)")
    _print_cold(out, args.cold)
    print(f"load after: {load_average()}")
    return 0


def _print_cold(out: Path, trials: int) -> None:
    def shown(seconds: list[float]) -> str:
        return ", ".join(f"{s:.2f}" for s in seconds)

    for floor, saved_tabs, opened_tabs in cold_first_tabs(out, trials):
        print(f"first tabs: floor {shown(floor)} s; `tore app` then ?saved= {shown(saved_tabs)} s; `tore app FOLDER` {shown(opened_tabs)} s")


if __name__ == "__main__":
    sys.exit(main())
