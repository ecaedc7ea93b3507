"""Paths typed into the app are confined to one data root on the server.

The root is `$TORE_STUDIO_DATA_ROOT`, or by default the folder the app was started in. A path is
resolved by `tore_engine.io.paths.confine` (the project's one path policy): one that leaves the root,
through `..`, an absolute path or a symbolic link, is refused with a clear message, and so is one
that names something other than a file or a folder (a FIFO, a device, a socket), before anything
opens it: reading a FIFO would block the session.
"""

from __future__ import annotations

import os
from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.io.files import is_regular_file
from tore_engine.io.paths import confine

DATA_ROOT_VARIABLE = "TORE_STUDIO_DATA_ROOT"
DEMO_DIR = Path(__file__).resolve().parents[1] / "demo" / "data"  # the embedded demo, in the package


def data_root() -> Path:
    return Path(os.environ.get(DATA_ROOT_VARIABLE) or Path.cwd()).resolve()


def server_path(text: str) -> Path:
    """The real path of `text` (relative paths are taken from the data root), if it lies inside
    the data root and is a regular file, a folder, or nothing yet (the reader then says it is
    missing)."""
    try:
        path = confine(text, data_root())
    except InputError as error:
        raise InputError(f"{error.problem} (the data root; set {DATA_ROOT_VARIABLE} to open other folders)") from None
    if path.exists() and not (path.is_dir() or is_regular_file(path)):
        raise InputError("is not a regular file or a folder (a device, pipe or socket); it is not opened", file=text)
    return path
