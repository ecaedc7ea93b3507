"""How far the readers have got, for a progress bar while a large input loads.

A reader reports the bytes it has decoded with `advance`; whoever shows progress wraps the
loading in `reading(callback)`. A context variable carries the callback, so no reader's signature
has to change and readers that do not report simply show no progress.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_callback: ContextVar[Callable[[int], None] | None] = ContextVar("tore_reading_progress", default=None)


@contextmanager
def reading(callback: Callable[[int], None] | None) -> Iterator[None]:
    """Send the readers' `advance(bytes)` calls to `callback` while the block runs."""
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)


def advance(done: int) -> None:
    """Say that `done` more bytes of the input have been read."""
    callback = _callback.get()
    if callback is not None and done:
        callback(done)
