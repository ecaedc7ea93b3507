"""Work a run hands to a thread once the browser has drawn its page (the page index of an
evaluation, 0.8 s at 100,000 pages, which Overlays then finds made). Started during the run, such a
thread took the GIL from the run and from the server's sending of the page; started as the run
ended, it took a core from the browser drawing it: a just-started server's first `?saved=` tab at
100,000 pages drew its heatmap about 0.5 s later either way (benchmarks/RESULTS.md, "A saved
evaluation's first tab"). `later` queues the work in the session; `start_queued`, at the end of the
app's run (`app.main`), starts each in a daemon thread `DRAWN_AFTER` seconds later. Whatever needs
the result sooner makes it itself (`Evaluated.index` is derived once, by whichever asks first).
`wait_first_page` lets server-wide work (the warm-up's kernels when `tore app FOLDER` opened a
saved evaluation) wait, the same way, for the server's first page to be drawn."""

from __future__ import annotations

import threading
from collections.abc import Callable

import streamlit as st

from tore_engine.studio import state

DRAWN_AFTER = 2.0  # seconds from a run's end to the browser's first heatmap: 1.4-1.9 s in a new tab on 2 cores (measured)
_first_page_drawn = threading.Event()  # set DRAWN_AFTER seconds after the end of the server's first run


def later(name: str, work: Callable[[], object]) -> None:
    """Run `work` in a thread named `name` once the page of this run is drawn."""
    st.session_state.setdefault(state.AFTER_RUN, []).append((name, work))


def start_queued() -> None:
    """Start the work this run queued, each in its own daemon thread, `DRAWN_AFTER` seconds from now."""
    queued = st.session_state.pop(state.AFTER_RUN, [])
    if not _first_page_drawn.is_set():
        queued.append(("tore-first-page", _first_page_drawn.set))
    for name, work in queued:
        timer = threading.Timer(DRAWN_AFTER, work)
        timer.name, timer.daemon = name, True
        timer.start()


def wait_first_page(timeout: float) -> None:
    """Return once the server's first page has been drawn (`DRAWN_AFTER` seconds after its first
    run ended), or after `timeout` seconds when no session has come."""
    _first_page_drawn.wait(timeout)
