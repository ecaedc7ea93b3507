"""FUNSD entities as TORE layout sets (tore_engine.scorers.funsd.tore_sets), page sizes from the PNGs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import shared_path, write_json
from tests.scorers.funsd.helpers import FUNSD_DATA, cases, vectors
from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd import funsd_layout_sets


def test_funsd_layout_sets_from_the_real_folder(tmp_path):
    annotations = shared_path(*FUNSD_DATA, "annotations")
    prediction = tmp_path / "pred"
    prediction.mkdir()
    for case in cases("funsd_cases", perturbation="relabel"):
        write_json(prediction / f"{case['doc']}.json", case["pred"])
    write_json(prediction / "not_a_reference.json", {"form": []})
    reference_set, prediction_set = funsd_layout_sets(annotations, prediction)
    assert reference_set.taxonomy == prediction_set.taxonomy == ["header", "question", "answer", "other"]
    assert [page.id for page in reference_set.pages] == sorted(path.stem for path in annotations.glob("*.json"))
    assert [page.id for page in prediction_set.pages] == sorted(vectors()["documents"])
    for page in reference_set.pages + prediction_set.pages:
        assert page.image.path.name == f"{page.id}.png"
        assert (page.width, page.height) == _png_header_size(page.image.path)
    for doc_id, document in vectors()["documents"].items():
        page = next(p for p in prediction_set.pages if p.id == doc_id)
        assert [page.width, page.height] == document["image_size_wh"]
    for doc_id in vectors()["documents"]:
        form = vectors()["documents"][doc_id]["gt"]["form"]
        page = next(p for p in reference_set.pages if p.id == doc_id)
        valid = [e for e in form if any(w["text"].strip() for w in e["words"])]
        assert page.labels == [e["label"] for e in valid]
        assert page.bboxes.tolist() == [[float(v) for v in e["box"]] for e in valid]
    assert [(w.page, w.side) for w in prediction_set.warnings] == [("not_a_reference", "prediction")]


def _png_header_size(path: Path) -> tuple[int, int]:
    """Width and height straight from the PNG IHDR chunk, without Pillow."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def test_funsd_layout_sets_need_the_page_image(tmp_path):
    reference, prediction = tmp_path / "ref", tmp_path / "pred"
    reference.mkdir(), prediction.mkdir()
    write_json(reference / "form.json", {"form": []})
    with pytest.raises(InputError, match="no PNG image form.png"):
        funsd_layout_sets(reference, prediction)


def test_funsd_layout_sets_read_the_size_from_a_png_beside_the_json(tmp_path):
    from PIL import Image

    reference, prediction = tmp_path / "ref", tmp_path / "pred"
    reference.mkdir(), prediction.mkdir()
    Image.new("L", (30, 20)).save(reference / "form.png")
    write_json(reference / "form.json", {"form": [
        {"id": 0, "label": "header", "box": [1, 2, 3, 4], "words": [{"box": [1, 2, 3, 4], "text": "A"}], "linking": []},
        {"id": 1, "label": "other", "box": [5, 5, 9, 9], "words": [{"box": [5, 5, 9, 9], "text": " "}], "linking": []},
    ]})
    reference_set, prediction_set = funsd_layout_sets(reference, prediction)
    page = reference_set.pages[0]
    assert (page.width, page.height, page.labels, page.bboxes.tolist()) == (30, 20, ["header"], [[1, 2, 3, 4]])
    assert prediction_set.pages == []
