"""The shared widgets' helpers (tore_engine.studio.panels): a matrix as CSV."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from tore_engine.studio.panels import matrix_csv


def test_matrix_csv_has_classes_on_both_axes(demo_evaluation):
    table = pd.read_csv(io.StringIO(matrix_csv(demo_evaluation.matrices.trimmed, "recall")), index_col=0)
    assert table.index.tolist() == demo_evaluation.matrices.trimmed.rows
    assert table.columns.tolist() == demo_evaluation.matrices.trimmed.columns
    assert np.allclose(table.to_numpy(), demo_evaluation.matrices.trimmed.recall)
