"""Layout sets and pages (tore_engine.layout) built by hand are checked as a reader's are."""

from __future__ import annotations

import numpy as np
import pytest

import tore_engine as tore


def test_layout_sets_built_by_hand_are_checked():
    with pytest.raises(tore.InputError, match="bboxes has shape"):
        tore.Page("p", 10, 10, ["Text", "Table"], np.zeros((1, 4)))
    with pytest.raises(tore.InputError, match="duplicate page id"):
        tore.LayoutSet("m", [tore.Page.empty("p", 5, 5), tore.Page.empty("p", 5, 5)])
    with pytest.raises(tore.InputError, match="labels not in the declared taxonomy"):
        tore.LayoutSet("m", [tore.Page("p", 5, 5, ["x"], np.array([[0, 0, 1, 1]]))], taxonomy=["y"])
