"""The figures' shared evaluation."""

from __future__ import annotations

import pytest

from tore_engine.formats.native import from_document as from_native
from tore_engine.run.runner import evaluate_dataset


@pytest.fixture(scope="module")
def evaluation():
    """Two classes of four, one page 10 x 10: Text [0,0,4,2] (8 px) predicted as Title on its right
    half; Title [0,5,2,6] (2 px) predicted right; nothing else."""
    def layout(name, boxes):
        document = {"name": name, "taxonomy": ["Caption", "Table", "Text", "Title"],
                    "pages": [{"id": "p", "width": 10, "height": 10, "boxes": [{"label": l, "bbox": b} for l, b in boxes]}]}
        return from_native(document, name)

    reference = layout("gt", [("Text", [0, 0, 4, 2]), ("Title", [0, 5, 2, 6])])
    prediction = layout("model", [("Text", [0, 0, 2, 2]), ("Title", [2, 0, 4, 2]), ("Title", [0, 5, 2, 6])])
    return evaluate_dataset(reference, prediction)
