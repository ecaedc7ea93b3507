"""LabelMe JSON: polygons and rectangles as regions, other shapes skipped with a warning, detection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tore_engine.core.errors import InputError
from tore_engine.formats.detect import detect_format
from tore_engine.formats.labelme import read


def labelme(shapes: list[dict], width: int = 100, height: int = 50) -> dict:
    """A file as LabelMe 5 saves it (its own extra keys included)."""
    return {"version": "5.4.1", "flags": {}, "shapes": [{"group_id": None, "description": "", "flags": {}, "mask": None} | shape for shape in shapes],
            "imagePath": "page.png", "imageData": None, "imageHeight": height, "imageWidth": width}


def test_polygons_and_rectangles_are_regions(tmp_path):
    shapes = [
        {"label": "table", "points": [[10, 5], [60.5, 8], [40, 30]], "shape_type": "polygon"},
        {"label": "text", "points": [[50, 40], [20, 10]], "shape_type": "rectangle"},
        {"label": "dot", "points": [[1, 1]], "shape_type": "point"},
    ]
    (tmp_path / "p1.json").write_text(json.dumps(labelme(shapes)))
    (tmp_path / "p2.json").write_text(json.dumps(labelme([], 30, 20)))
    assert detect_format(tmp_path / "p1.json") == "labelme" and detect_format(tmp_path) == "labelme"
    layout = read(tmp_path)
    first, second = layout.pages
    assert (first.id, first.width, first.height, first.labels) == ("p1", 100, 50, ["table", "text"])
    assert first.bboxes.tolist() == [[10, 5, 60.5, 30], [20, 10, 50, 40]]
    assert first.polygons.outline(0).tolist() == [[10, 5], [60.5, 8], [40, 30]] and first.polygons.outline(1) is None
    assert (second.width, second.height, second.box_count) == (30, 20, 0)
    skipped = [w for w in layout.warnings if "shape 2" in w.message]
    assert len(skipped) == 1 and skipped[0].page == "p1" and "p1.json" in skipped[0].message


def test_a_bad_point_names_the_file_and_page(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps(labelme([{"label": "x", "points": [[1, "a"], [2, 2], [3, 1]], "shape_type": "polygon"}])))
    with pytest.raises(InputError, match="page 'p'") as error:
        read(tmp_path / "p.json")
    assert "p.json" in str(error.value)


REAL = Path(os.environ.get("TORE_REAL_LABELME", "/tmp/tore-real"))


@pytest.mark.skipif(not (REAL / "labelme_coco_annotations.json").exists(), reason=(
    f"no real LabelMe files in {REAL}: labelme's examples/instance_segmentation (data_annotated/*.json and "
    "data_dataset_coco/annotations.json, wkentaro/labelme; GPL-3.0, so read from there, not committed)"))
def test_real_labelme_files_read_to_the_polygons_labelme2coco_wrote():
    """labelme's own converter (labelme2coco) wrote the COCO file from these LabelMe files: every
    one-polygon segmentation it wrote is a polygon region, of the same class, that the LabelMe
    reader reads; read through the COCO reader too, the polygons agree."""
    from tore_engine.formats import coco

    regions = {}
    for page in read(REAL / "labelme").pages:
        for k, label in enumerate(page.labels):
            outline = page.polygons.outline(k) if page.polygons is not None else None
            if outline is not None:
                regions.setdefault(page.id, []).append((label, outline.reshape(-1).tolist(), (page.width, page.height)))
    converted = coco.read(REAL / "labelme_coco_annotations.json")
    compared = 0
    for page in converted.pages:
        stem = Path(page.id).stem
        for k, label in enumerate(page.labels):
            outline = page.polygons.outline(k) if page.polygons is not None else None
            if outline is None:
                continue
            assert (label, outline.reshape(-1).tolist(), (page.width, page.height)) in regions[stem]
            compared += 1
    assert compared >= 5
