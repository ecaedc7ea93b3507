"""`tore app [FOLDER] [--port N] [--address HOST]`: serve TORE Studio (the Streamlit app) from the
installed package, on the embedded demo by default, or on the evaluation saved in FOLDER (`tore
evaluate --out FOLDER`, on this machine or copied from a cluster), opened as the server starts and
shown by the link it prints. Needs the `app` extra."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlencode

from tore_engine.cli.options import integer
from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command
from tore_engine.results.saved import read_manifest
from tore_engine.studio.data_root import data_root, server_path

APP_SCRIPT = Path(__file__).resolve().parents[1] / "studio" / "app.py"
# Server settings that do not depend on the folder the app is started from (no .streamlit/ needed).
STREAMLIT_SETTINGS = {
    "server.headless": "true",
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "viewer",  # no developer menu or Deploy button
    "server.fileWatcherType": "none",
    # Streamlit's gc.collect(2) after every run holds the GIL 0.1-0.2 s with a 20,000-page evaluation
    # held, between a page switch and the next page's run; Python's own collector still runs.
    "runner.postScriptGC": "false",
    # the first element just under the header's chrome, not 6 rem below it: on a laptop's 800 px the
    # Matrices page's heatmap and the Overlays page's first pane are on the first screen
    "theme.paddingTop": "0.5rem",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "app",
        help="serve TORE Studio, the interactive app (needs the 'app' extra)",
        description=(
            "Serve TORE Studio in the browser: zoomable matrices, a click from a cell to the pages and "
            "pixels behind it, overlays on the real page, model comparison and benchmark scores. Opens "
            "on the embedded demo, or on the saved evaluation DIR; server paths are confined to $TORE_STUDIO_DATA_ROOT (default: the "
            "current folder)."
        ),
    )
    parser.add_argument("folder", nargs="?", metavar="DIR", help="a saved evaluation (the folder `tore evaluate --out` wrote), inside the "
                        "data root: opened as the server starts, at the link printed")
    parser.add_argument("--port", type=integer(1, 65535), default=8501, help="port to listen on, 1 to 65535 (default 8501)")
    parser.add_argument("--address", default="localhost", help="address to listen on (default localhost)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from streamlit.web import cli as streamlit_cli
    except ImportError:
        raise InputError(f"the app needs its extra: {install_command('app')}") from None
    from tore_engine.studio import warm_up

    saved = None if args.folder is None else saved_folder(args.folder)
    warm_up.start(saved)  # while the server starts, not in its first session
    if saved is not None:
        query = urlencode({"saved": saved.relative_to(data_root()).as_posix()})
        print(f"TORE Studio opens {args.folder} at http://{args.address}:{args.port}/?{query}", file=sys.stderr)
    settings = {**STREAMLIT_SETTINGS, "server.port": str(args.port), "server.address": args.address}
    options = [f"--{key}={value}" for key, value in settings.items()]
    return int(streamlit_cli.main(["run", str(APP_SCRIPT), *options], standalone_mode=False) or 0)


def saved_folder(text: str) -> Path:
    """The saved evaluation `text` names, checked as its link will be (inside the data root, a
    saved folder this version opens), so that a wrong folder is an error here, not on the page."""
    return read_manifest(server_path(text)).folder
