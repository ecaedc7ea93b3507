"""`offsets_of` and `rows_of_runs`, against Python's running sums and loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tore_engine.core.offsets import offsets_of, rows_of_runs


@pytest.mark.parametrize("counts", [[], [0], [3, 0, 2], list(range(50)), np.array([2**40, 1, 0, 7], np.int64)])
def test_each_run_starts_where_the_ones_before_end(counts):
    offsets = offsets_of(counts)
    assert offsets.dtype == np.int64
    assert offsets.tolist() == [0, *itertools.accumulate(int(count) for count in counts)]


@pytest.mark.parametrize("starts, counts", [([], []), ([5], [0]), ([7, 0, 3], [2, 3, 0]), ([10, 2, 2], [1, 4, 2])])
def test_rows_of_runs_lists_each_run_in_turn(starts, counts):
    expected = [start + k for start, count in zip(starts, counts) for k in range(count)]
    rows = rows_of_runs(np.array(starts, np.int64), np.array(counts, np.int64))
    assert rows.dtype == np.int64 and rows.tolist() == expected
