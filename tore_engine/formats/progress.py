"""How far the readers have got, for a progress bar while a large input loads; and stopping them.

A reader reports the bytes it has decoded with `advance`; whoever shows progress wraps the
loading in `reading(callback)`. A context variable carries the callback, so no reader's signature
has to change and readers that do not report simply show no progress.

Readers running in threads (both sides read at once) are stopped the same way: inside
`stoppable()`, once its event is set (the other side failed, or Ctrl-C reached the main thread),
a reader's next `advance` raises `ReadingStopped`, so it ends within a chunk instead of reading
the rest of a large file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_callback: ContextVar[Callable[[int], None] | None] = ContextVar("tore_reading_progress", default=None)
_stop: ContextVar[threading.Event | None] = ContextVar("tore_reading_stop", default=None)


class ReadingStopped(Exception):
    """A reader's caller no longer wants what it reads."""


@contextmanager
def stoppable() -> Iterator[threading.Event]:
    """An event that stops the readers started in this context (and in copies of it) when set."""
    event = threading.Event()
    token = _stop.set(event)
    try:
        yield event
    finally:
        _stop.reset(token)


@contextmanager
def reading(callback: Callable[[int], None] | None) -> Iterator[None]:
    """Send the readers' `advance(bytes)` calls to `callback` while the block runs."""
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)


def advance(done: int) -> None:
    """Say that `done` more bytes of the input have been read (or stop, if asked to)."""
    stop = _stop.get()
    if stop is not None and stop.is_set():
        raise ReadingStopped
    callback = _callback.get()
    if callback is not None and done:
        callback(done)
