"""The official checks of DocILE predictions (tore_engine.scorers.docile.validation)."""

from __future__ import annotations

import json

import pytest

from tests.scorers.docile.helpers import CASES, write_case
from tore_engine.core.errors import InputError
from tore_engine.scorers.docile import score_docile


def test_predictions_for_a_document_outside_the_split(tmp_path):
    """Message checked against docile-benchmark 0.3.5 by hand (the vectors have no such case)."""
    case = next(c for c in CASES if c["name"] == "kile_perfect_localization")
    dataset_dir, files = write_case(case, tmp_path)
    predictions = json.loads(files["kile"].read_text()) | {"extra_doc": []}
    files["kile"].write_text(json.dumps(predictions))
    expected = "KILE: Predictions provided for 1 documents not in the dataset dataset:vectors."
    with pytest.raises(InputError, match=expected.replace(".", r"\.")):
        score_docile(dataset_dir, case["dataset"]["split"], files["kile"])
