"""DocILE metrics (tore_engine.scorers.docile.metrics): average precision worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from tore_engine.scorers.docile.metrics import average_precision


def test_average_precision_by_hand():
    # ranks: TP, FP, TP, FP with 4 golds -> points (.25, 1), (.25, .5), (.5, 2/3), (.5, .5)
    # envelope: 1, 2/3, 2/3, .5 -> AP = .25 * 1 + .25 * 2/3
    assert average_precision(np.array([True, False, True, False]), 4) == pytest.approx(0.25 + 0.25 * 2 / 3, abs=1e-15)
    assert average_precision(np.array([True]), 0) == 0.0
    assert average_precision(np.array([], dtype=bool), 3) == 0.0
