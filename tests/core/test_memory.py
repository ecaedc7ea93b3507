"""Appending runs of rows as they come (`memory.Appended`)."""

from __future__ import annotations

import numpy as np
import pytest

from tore_engine.core.memory import Appended


@pytest.mark.parametrize("capacity", [0, 1, 7, 60, 1000])
def test_appended_runs_are_their_concatenation_whatever_the_reservation(capacity):
    rng = np.random.default_rng(capacity)
    runs = [rng.integers(-5, 5, size=(int(rng.integers(0, 9)), 3)) for _ in range(20)]
    appended = Appended(np.int64, capacity, row_shape=(3,))
    for run in runs:
        appended.append(run)
    assert len(appended) == sum(len(run) for run in runs)
    assert np.array_equal(appended.array(), np.concatenate(runs)) and appended.array().dtype == np.int64


def test_a_reservation_larger_than_its_rows_is_not_copied():
    appended = Appended(np.float64, 100)
    reservation = appended.array().base
    appended.append(np.arange(30.0))
    appended.append(np.arange(70.0))
    assert appended.array().base is reservation and np.array_equal(appended.array(), np.r_[np.arange(30.0), np.arange(70.0)])
