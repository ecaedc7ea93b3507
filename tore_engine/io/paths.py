"""The one path policy for paths named by untrusted input (docs/threat-model.md).

Paths named inside inputs (page images, PDFs, DocILE docids, Markdown files) are resolved after
symbolic links and must stay inside an allowed folder (`confine`). A refusal never says whether
anything exists outside the folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from tore_engine.core.errors import InputError


def checked_text(path: str | Path) -> str:
    """`path` as text, refused when it holds a NUL byte (no system call takes one)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise InputError("a path contains a NUL byte")
    return text


def confine(path: str | Path, root: str | Path, *, what: str = "path") -> Path:
    """The real path of `path` (relative paths are taken from `root`), if it lies inside `root`
    after every `..` and symbolic link is resolved. The refusal is the same whether or not the
    target exists, so it tells nothing about the world outside `root`."""
    text = checked_text(path)
    try:
        real_root = Path(checked_text(root)).resolve()
        real = (real_root / Path(text).expanduser()).resolve()
    except (OSError, RuntimeError):  # a symbolic-link loop, or a name the system refuses
        raise InputError(f"{what} {text!r} cannot be resolved (a symbolic-link loop, or an invalid name)") from None
    if not real.is_relative_to(real_root):
        raise InputError(f"{what} {text!r} is outside the folder it must stay in")
    return real


def inside(name: str | Path, folder: Path, *, what: str) -> Path:
    """`folder / name`, refused (`tore_engine.io.paths.confine`) when it would leave `folder`
    after `..` and symbolic links. The path is returned as written, not resolved, because it is
    shown to the user and printed in results."""
    confine(name, folder, what=what)
    return folder / name
