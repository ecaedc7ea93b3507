"""What a fresh server's first session would wait for, done in the background as soon as the server
starts: the app's modules imported (pandas, Plotly for the reports and the pages' own, about 1 s) and the compiled
kernels the server process itself runs loaded (the page parser and the JSON scan, about 1 s; the
page kernel runs in the worker processes; a cold cache is compiled here, once a machine).

`tore app` starts it before Streamlit's server, and `tore app FOLDER` has it open that saved
evaluation after the imports, so that the link it prints finds it held, and load the kernels only
some seconds after that link's first page is drawn (they held the GIL and a core while the first
tabs' pages were sent and drawn; a saved evaluation's heatmaps need none, and Overlays loads the
parser itself if it comes first); a server started otherwise (`streamlit run app.py`) starts it
with its first run. Measured at 20,000 pages: these took 1.8 s between the first run's start and
the first evaluation's (benchmarks/RESULTS.md, "App at scale").
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

_lock = threading.Lock()
_thread: threading.Thread | None = None
KERNELS_WAIT_AT_MOST = 30.0  # seconds the kernels wait for a saved evaluation's first page: a server nobody opens loads them then
KERNELS_AFTER_FIRST_PAGE = 8.0  # seconds more, past the tabs a user opens next (the kernels took 0.2 s from a second tab 1 s after the first)


def start(saved: Path | None = None) -> None:
    """Start the warm-up once a process, opening the evaluation saved in `saved` when given; later
    calls do nothing."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm_up, args=(saved,), name="tore-warm-up", daemon=True)
            _thread.start()


def _warm_up(saved: Path | None = None) -> None:
    _streamlits_first_element_check()
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401

    from tore_engine.formats import page_parser
    from tore_engine.io import json_compiled
    from tore_engine.studio import background, documents, downloads, map_views, navigator, overlay_panels, page_tables, sweep_view  # noqa: F401

    _plotly_figures()
    if saved is not None:  # before the kernels, which its first tab does not need
        from tore_engine.core.errors import InputError
        from tore_engine.studio import evaluations

        try:
            evaluations.open_saved_first(saved)
        except InputError:  # changed since `tore app` checked it: the link's page says why
            pass
        background.wait_first_page(KERNELS_WAIT_AT_MOST)
        time.sleep(KERNELS_AFTER_FIRST_PAGE)
    page_parser.warm()
    json_compiled.warm()


def _plotly_figures() -> None:
    """Plotly makes a trace type's validators when the first trace of that type is made: the first
    run's per-class bars took 80 ms, the second's 11 ms. A 2-class heatmap and bars made here make
    them before any session."""
    import numpy as np

    from tore_engine.metrics.matrices import MatrixSet
    from tore_engine.plots import bars, heatmaps

    both = np.eye(2)
    heatmaps.matrix_heatmap(MatrixSet(["a", "b"], ["a", "b"], both, both, both), "recall", outline_diagonal=True, title="a").to_json()
    bars.per_class_bars({"a": {"recall": 1.0, "precision": 1.0, "f1": 1.0, "ap": 1.0, "ar_100": 1.0}}, title="a").to_json()


def _streamlits_first_element_check() -> None:
    """Streamlit checks once a process, as the first element of its first run is sent, whether it
    runs in a REPL (to print how to run an app), with `inspect.stack()`, which reads the source of
    every frame of that run's deep stack: 0.14 s before a new server's first tab gets its first
    element (py-spy). A server is no REPL and prints nothing there: the check is marked done, as it
    marks it itself; a Streamlit without that flag is left alone."""
    from streamlit import delta_generator

    if hasattr(delta_generator, "_use_warning_has_been_displayed"):
        delta_generator._use_warning_has_been_displayed = True
