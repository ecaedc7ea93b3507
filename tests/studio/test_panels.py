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


def test_per_class_caption_names_each_undefined_case_and_leaves_it_out_of_the_means():
    """Issue 36 N3 in the app: Text never predicted, Formula only predicted, Code on neither side."""
    import json

    from tests.studio.helpers import _app, _bar_charts, _bars, _no_exception, _upload

    taxonomy = ["Text", "Table", "Formula", "Code"]
    reference = [{"id": "p1", "width": 40, "height": 20, "boxes": [{"label": "Text", "bbox": [2, 2, 20, 10]}, {"label": "Table", "bbox": [22, 2, 38, 18]}]}]
    predicted = [{"id": "p1", "width": 40, "height": 20, "boxes": [{"label": "Table", "bbox": [22, 2, 38, 18]}, {"label": "Formula", "bbox": [0, 12, 10, 20]}]}]
    at = _app(src="upload")
    _upload(at, "ref", "reference.json", json.dumps({"name": "gt", "taxonomy": taxonomy, "pages": reference}).encode())
    _upload(at, "a", "model.json", json.dumps({"name": "model", "taxonomy": taxonomy, "pages": predicted}).encode())
    _no_exception(at)
    caption = next(caption.value for caption in at.caption if "Unweighted means" in caption.value)
    assert "over the 2 classes shown that the reference has" in caption  # Text and Table
    assert "(precision over the 1 of them predicted)" in caption and "recall 0.500, precision 1.000, F1 0.500" in caption
    assert "Predicted only (no reference pixel, so no recall bar, and not in the means): Formula." in caption
    assert "Never predicted (no predicted pixel, so no precision bar): Text." in caption
    assert "On neither side (no pixel on either side, so no bar): Code." in caption
    assert "counts as 0" not in caption
    bars = _bars(_bar_charts(at)[0])
    assert bars[("Formula", "precision")] == 0.0 and bars.get(("Formula", "recall")) is None and bars.get(("Text", "precision")) is None
