"""Libraries that only some features need, each behind an extra of the package (pyproject.toml),
and the command that installs an extra for the way this copy of the package was installed."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlparse

from tore_engine.core.errors import InputError

DISTRIBUTION = "tore-studio"


def _direct_url() -> dict | None:
    """pip's record of where this package was installed from (PEP 610's direct_url.json), or None
    for an install from an index or a wheel file name. A stale `*.egg-info` folder in a checkout has
    none, so every installed copy is asked, not just the first one found. (`importlib.metadata`
    imported here: it costs every `tore` run 18 ms, and only a missing extra's message needs it.)"""
    import importlib.metadata

    for distribution in importlib.metadata.distributions(name=DISTRIBUTION):
        text = distribution.read_text("direct_url.json")
        if text:
            try:
                return json.loads(text)
            except ValueError:
                return None
    return None


def install_command(extra: str, direct_url: dict | None = None, prefix: str | None = None) -> str:
    """The command that adds `extra`: from a checkout installed in place (`pip install -e`), the
    checkout's own pip (`.venv/bin/pip` when the venv is the checkout's, as `./run.sh` makes it);
    from a folder copied in (`pip install .`), that folder again; otherwise the package index.
    `direct_url` and `prefix` default to this install's record and `sys.prefix` (tests pass them)."""
    record = _direct_url() if direct_url is None else direct_url
    dir_info = (record or {}).get("dir_info")
    url = (record or {}).get("url", "")
    if dir_info is None or not url.startswith("file:"):
        return f"pip install '{DISTRIBUTION}[{extra}]'"
    folder = Path(unquote(urlparse(url).path))
    if not dir_info.get("editable"):
        return f"pip install '.[{extra}]' from the folder it was installed from"
    own_venv = Path(prefix or sys.prefix).resolve() == (folder / ".venv").resolve()
    pip = ".venv/bin/pip" if own_venv else "pip"
    return f"{pip} install -e '.[{extra}]' from the checkout"


def optional_module(name: str, extra: str, package: str | None = None) -> ModuleType:
    """A module of a library only some readers need (pyarrow, docling-core), or an `InputError`
    that says which extra installs it and how (`package`: the library's name, when not the
    module's): the user asked for a format, so a missing library is their input's problem, not a
    traceback."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise _missing(name, extra, package) from None


def require_installed(name: str, extra: str, package: str | None = None) -> None:
    """`optional_module`'s error, without importing the library here: for one that another process
    uses (the drawing processes' PyMuPDF), whose import in this process would only cost time."""
    if importlib.util.find_spec(name) is None:
        raise _missing(name, extra, package)


def _missing(name: str, extra: str, package: str | None) -> InputError:
    return InputError(f"reading this format needs {package or name}, which is not installed: {install_command(extra)}")
