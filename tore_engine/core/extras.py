"""Libraries that only some features need, each behind an extra of the package (pyproject.toml)."""

from __future__ import annotations

import importlib
from types import ModuleType

from tore_engine.core.errors import InputError


def optional_module(name: str, extra: str, package: str | None = None) -> ModuleType:
    """A module of a library only some readers need (pyarrow, docling-core), or an `InputError`
    that says which extra installs it (`package`: the library's name, when not the module's): the
    user asked for a format, so a missing library is their input's problem, not a traceback."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise InputError(f"reading this format needs {package or name}, which is not installed: "
                         f"pip install 'tore-studio[{extra}]'") from None
