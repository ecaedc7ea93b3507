"""Paths typed into the app are confined to one data root on the server.

The root is `$TORE_STUDIO_DATA_ROOT`, or by default the folder the app was started in. A path that resolves outside
it, through `..` or a symbolic link, is refused with a clear message.
"""

from __future__ import annotations

import os
from pathlib import Path

from tore_engine.errors import InputError

DATA_ROOT_VARIABLE = "TORE_STUDIO_DATA_ROOT"

def data_root() -> Path:
    return Path(os.environ.get(DATA_ROOT_VARIABLE) or Path.cwd()).resolve()


def server_path(text: str) -> Path:
    """The real path of `text` (relative paths are taken from the data root), if it lies inside
    the data root."""
    root = data_root()
    path = (root / Path(text).expanduser()).resolve()
    if not path.is_relative_to(root):
        raise InputError(f"{text!r} is outside the data root {root}; set {DATA_ROOT_VARIABLE} to open other folders")
    return path
