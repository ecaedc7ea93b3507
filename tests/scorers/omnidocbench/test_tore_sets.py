"""OmniDocBench as TORE layout sets (tore_engine.scorers.omnidocbench.tore_sets): both taxonomies kept, so TORE
runs in dual mode on the demo."""

from __future__ import annotations

import json

from tests.helpers import shared_path
from tests.scorers.omnidocbench.helpers import DEMO
from tore_engine.scorers.omnidocbench.tore_sets import omnidocbench_layout_sets


def test_layout_sets_keep_both_taxonomies(prediction_file):
    gt, prediction = omnidocbench_layout_sets(shared_path(*DEMO, "OmniDocBench_demo.json"), prediction_file)
    assert gt.name == "omnidocbench" and len(gt.pages) == 18
    assert sum(page.box_count for page in gt.pages) == 374
    assert set(gt.labels_in_use()) <= set(gt.taxonomy) and "text_block" in gt.taxonomy
    pages = json.loads(shared_path(*DEMO, "OmniDocBench_demo.json").read_text())  # each page's image, in the images folder beside
    assert [page.image.path for page in gt.pages] == [shared_path(*DEMO, "images", page["page_info"]["image_path"]) for page in pages]
    categories = json.loads(prediction_file.read_text())["categories"]
    assert prediction.taxonomy == [categories[key] for key in sorted(categories, key=int)]
    assert sum(page.box_count for page in prediction.pages) == 436
    assert [p.id for p in prediction.pages] == [p.id for p in gt.pages]
    assert [(p.width, p.height) for p in prediction.pages] == [(p.width, p.height) for p in gt.pages]
    assert not set(prediction.labels_in_use()) <= set(gt.class_list())  # so TORE runs in dual mode
    assert omnidocbench_layout_sets(shared_path(*DEMO, "OmniDocBench_demo.json"))[1] is None


def test_tore_runs_in_dual_taxonomy_mode_on_the_demo(prediction_file):
    from tore_engine.run.runner import evaluate_dataset

    gt, prediction = omnidocbench_layout_sets(shared_path(*DEMO, "OmniDocBench_demo.json"), prediction_file)
    evaluation = evaluate_dataset(gt, prediction)
    assert evaluation.taxonomy.mode == "dual"
    assert evaluation.taxonomy.classes == (
        ["Background"] + [f"omnidocbench_{c}" for c in gt.taxonomy] + [f"detection_prediction_{c}" for c in prediction.taxonomy]
    )
    assert evaluation.pixels == sum(int(page.width) * int(page.height) for page in gt.pages)
    assert evaluation.warnings == []  # every box lies inside its (swap-corrected) page


def test_rotated_polys_are_polygons_and_rectangles_stay_boxes(tmp_path):
    """A block whose `poly` is its official box's rectangle stays that box (bit for bit); a rotated
    one is its polygon, its bbox the polygon's bounding box, painted as drawn."""
    import json as json_module

    import numpy as np

    from tore_engine.scorers.omnidocbench.tore_sets import omnidocbench_layout_sets

    rectangle = [10.0, 10.0, 50.0, 10.0, 50.0, 30.0, 10.0, 30.0]
    rotated = [60.0, 20.0, 90.0, 10.0, 95.0, 25.0, 65.0, 35.0]
    page = {"page_info": {"page_no": 0, "height": 100, "width": 120, "image_path": "p.jpg", "page_attribute": {}},
            "layout_dets": [{"category_type": "text_block", "poly": rectangle, "ignore": False, "order": 1, "anno_id": 1},
                            {"category_type": "figure", "poly": rotated, "ignore": False, "order": 2, "anno_id": 2}],
            "extra": {"relation": []}}
    path = tmp_path / "gt.json"
    path.write_text(json_module.dumps([page]))
    reference, _ = omnidocbench_layout_sets(path)
    built = reference.pages[0]
    assert built.bboxes.tolist() == [[10, 10, 50, 30], [60, 10, 95, 35]]
    assert built.polygons.outline(0) is None
    assert np.array_equal(built.polygons.outline(1).reshape(-1), rotated)
