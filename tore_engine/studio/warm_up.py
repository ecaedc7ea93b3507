"""What a fresh server's first session would wait for, done in the background as soon as the server
starts: the app's modules imported (pandas, Plotly for the reports and the pages' own, about 1 s) and the compiled
kernels the server process itself runs loaded (the page parser and the JSON scan, about 1 s; the
page kernel runs in the worker processes; a cold cache is compiled here, once a machine).

`tore app` starts it before Streamlit's server, and `tore app FOLDER` has it open that saved
evaluation after the imports, before the kernels, so that the link it prints finds it held; a server started otherwise (`streamlit
run app.py`) starts it with its first run. Measured at 20,000 pages: these took 1.8 s between the first run's
start and the first evaluation's (benchmarks/RESULTS.md, "App at scale").
"""

from __future__ import annotations

import threading
from pathlib import Path

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start(saved: Path | None = None) -> None:
    """Start the warm-up once a process, opening the evaluation saved in `saved` when given; later
    calls do nothing."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm_up, args=(saved,), name="tore-warm-up", daemon=True)
            _thread.start()


def _warm_up(saved: Path | None = None) -> None:
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401

    from tore_engine.formats import page_parser
    from tore_engine.io import json_compiled
    from tore_engine.studio import documents, downloads, map_views, navigator, overlay_panels, page_tables, sweep_view  # noqa: F401

    if saved is not None:  # before the kernels, which its first tab does not need
        from tore_engine.core.errors import InputError
        from tore_engine.studio import evaluations

        try:
            evaluations.open_saved_first(saved)
        except InputError:  # changed since `tore app` checked it: the link's page says why
            pass
    page_parser.warm()
    json_compiled.warm()
