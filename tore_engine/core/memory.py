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
of, so that a merge holds the merged array and a few runs, not every run twice. Better still, runs
are appended as they arrive (`Appended`): each is let go of at once, its memory serves the next
one, and the system's fresh pages (about 4 ms a MB on a virtual machine, where they are zeroed on
first touch) are paid once, for the merged array alone.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache

import numpy as np


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


class Appended:
    """An array that runs of rows are appended to, in order: a merge fed as the runs arrive.

    `capacity` rows are reserved at once: when the caller knows an upper bound (the boxes of the
    inputs), the pages of the reservation that are never written cost no memory (the system maps
    them on first touch), so nothing is copied again; past it the array grows by half."""

    def __init__(self, dtype: np.dtype | type, capacity: int = 0, row_shape: tuple[int, ...] = ()) -> None:
        self._rows = np.empty((capacity, *row_shape), dtype)
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def append(self, rows: np.ndarray) -> None:
        end = self._length + len(rows)
        if end > len(self._rows):
            grown = np.empty((max(end, len(self._rows) * 3 // 2), *self._rows.shape[1:]), self._rows.dtype)
            grown[: self._length] = self._rows[: self._length]
            self._rows = grown
        self._rows[self._length : end] = rows
        self._length = end

    def array(self) -> np.ndarray:
        """The rows appended, as one array (a view of the reservation)."""
        return self._rows[: self._length]
