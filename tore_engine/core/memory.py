"""Giving freed memory back to the system after a phase that churned through it (glibc only).

glibc's malloc serves a block from its heap rather than by a fresh mmap once a block of that size
has been freed (its mmap threshold rises, up to 32 MB), and a heap is given back to the system only
from its top. So after reading a large file in chunks of 8 MB, or receiving a worker's results batch
by batch, a process stays 50-100 MB larger than what it holds. `malloc_trim(0)` gives the free
pages back, in a few milliseconds; called between phases, not on every free (a lower threshold for
all blocks, `M_MMAP_THRESHOLD` or `M_TRIM_THRESHOLD`, costs 15-35 % of a large evaluation's time).
Elsewhere, and without a usable libc, it does nothing.

A merge that copies many small runs (the workers' results) into one large array frees the runs as
it goes, but the heap keeps them until trimmed: `FreedMemory` trims every `TRIM_EVERY_BYTES` let go
of, so that a merge holds the merged array and a few runs, not every run twice.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


def give_back_free_memory() -> None:
    """Return the heap's free pages to the system."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


TRIM_EVERY_BYTES = 32 * 2**20


class FreedMemory:
    """Counts the bytes a merge lets go of and gives them back every `TRIM_EVERY_BYTES`."""

    def __init__(self) -> None:
        self._since = 0

    def let_go(self, count: int) -> None:
        """`count` bytes were just freed."""
        self._since += count
        if self._since >= TRIM_EVERY_BYTES:
            give_back_free_memory()
            self._since = 0
