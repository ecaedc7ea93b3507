"""Runs of items held flat (a page's boxes, a box's polygon points, a polygon's pieces): run k is
`items[offsets[k]:offsets[k + 1]]`, and `offsets` is made from the runs' lengths here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def offsets_of(counts: np.ndarray | Sequence[int]) -> np.ndarray:
    """Where each of consecutive runs of `counts` items starts, and, last, where they end:
    (runs + 1,) int64."""
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def rows_of_runs(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The items of runs, run after run: run k is `counts[k]` items from `starts[k]` (a gather's
    indices, int64: some pages' boxes, some boxes' points)."""
    counts = np.asarray(counts, np.int64)
    return np.repeat(np.asarray(starts, np.int64) - offsets_of(counts)[:-1], counts) + np.arange(int(counts.sum()), dtype=np.int64)


def run_of_items(offsets: np.ndarray, dtype: type[np.integer] = np.int64) -> np.ndarray:
    """Each item's run (`offsets`: runs + 1): the page of each of a run of pages' boxes, say."""
    return np.repeat(np.arange(len(offsets) - 1, dtype=dtype), np.diff(offsets))


def runs_at(offsets: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The run of each item at positions `items`, found by bisection: no array of every item's run."""
    return np.searchsorted(offsets, items, side="right") - 1
