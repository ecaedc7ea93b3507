"""`offsets_of`: runs' lengths to where each starts, against Python's running sum."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tore_engine.core.offsets import offsets_of


@pytest.mark.parametrize("counts", [[], [0], [3, 0, 2], list(range(50)), np.array([2**40, 1, 0, 7], np.int64)])
def test_each_run_starts_where_the_ones_before_end(counts):
    offsets = offsets_of(counts)
    assert offsets.dtype == np.int64
    assert offsets.tolist() == [0, *itertools.accumulate(int(count) for count in counts)]
