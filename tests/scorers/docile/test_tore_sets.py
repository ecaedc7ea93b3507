"""DocILE fields as TORE layout sets (tore_engine.scorers.docile.tore_sets), on the real sample."""

from __future__ import annotations

import json

import pytest

from tests.scorers.docile.helpers import SAMPLE, _gold_as_predictions, _sample_dataset
from tore_engine.core.errors import InputError


def test_layout_sets_of_the_real_sample(tmp_path):
    from tore_engine.scorers.docile.tore_sets import docile_layout_sets

    dataset = _sample_dataset()
    (document,) = dataset.documents
    predictions = _gold_as_predictions(dataset, "kile")
    for k, field in enumerate(predictions[document.docid]):
        field["score"] = k / 10
    predictions[document.docid].append({"bbox": [0, 0, 0.1, 0.1], "page": 3, "fieldtype": "x", "score": 1.0})
    path = tmp_path / "kile.json"
    path.write_text(json.dumps(predictions))
    gold, predicted = docile_layout_sets(SAMPLE, "dev", path)
    assert [page.id for page in gold.pages] == [f"{document.docid}/p0"] == [page.id for page in predicted.pages]
    page = gold.pages[0]
    assert (page.width, page.height) == (1692, 2245)
    assert page.labels == [field.fieldtype for field in document.kile_golds]
    first = document.kile_golds[0].bbox
    assert page.bboxes[0].tolist() == [first[0] * 1692, first[1] * 2245, first[2] * 1692, first[3] * 2245]
    assert page.image.path == SAMPLE / "pdfs" / f"{document.docid}.pdf" and page.image.pdf_page == 0
    assert page.scores is None
    assert predicted.pages[0].box_count == 11  # the page-3 prediction is left out ...
    assert predicted.pages[0].scores.tolist() == [k / 10 for k in range(11)]
    (warning,) = predicted.warnings  # ... with a warning
    assert (warning.page, warning.box, warning.side) == (f"{document.docid}/p3", 11, "prediction")
    # Without a split, the documents of the prediction file; LIR detected from line_item_id.
    lir = tmp_path / "lir.json"
    lir.write_text(json.dumps(_gold_as_predictions(dataset, "lir")))
    gold, predicted = docile_layout_sets(SAMPLE, None, lir)
    assert gold.pages[0].box_count == predicted.pages[0].box_count == 40
    assert set(gold.pages[0].labels) == {field.fieldtype for field in document.lir_golds}


def test_layout_sets_apply_the_official_checks(tmp_path):
    from tore_engine.scorers.docile.tore_sets import docile_layout_sets

    dataset = _sample_dataset()
    predictions = _gold_as_predictions(dataset, "kile")
    next(iter(predictions.values()))[0]["bbox"] = [0.5, 0, 0.4, 1]
    path = tmp_path / "kile.json"
    path.write_text(json.dumps(predictions))
    with pytest.raises(InputError, match="KILE: Prediction bbox does not have valid relative coordinates."):
        docile_layout_sets(SAMPLE, "dev", path)
