"""OmniDocBench scorer against the official demo results shipped in ../shared/data/omnidocbench."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from tests.helpers import load_shared_json, shared_path, write_json
from PIL import Image

from tore_engine.errors import InputError
from tore_engine.omnidocbench.aggregation import (
    breakdown_by_attribute,
    character_weighted_page_edit,
    mean_over_pages,
    overall,
    page_mean,
)
from tore_engine.omnidocbench.categories import EVAL_CLASSES, PAGE_ATTRIBUTES
from tore_engine.omnidocbench.end_to_end import score_end_to_end
from tore_engine.omnidocbench.layout_ap import coco_ground_truth, score_layout
from tore_engine.omnidocbench.layout_predictions import load_layout_prediction
from tore_engine.omnidocbench.markdown import load_markdown_predictions, parse_markdown
from tore_engine.omnidocbench.matching import ground_truth_elements
from tore_engine.omnidocbench.pair_metrics import edit_pair, normalize_text, sequence_edit, teds
from tore_engine.omnidocbench.reference import load_reference
from tore_engine.omnidocbench.tore_sets import omnidocbench_layout_sets

DEMO = ("data", "omnidocbench")
OFFICIAL = (*DEMO, "reference_results", "v1.6_official_rerun_noCDM")
TOLERANCE = 1e-9


def official(name: str):
    return load_shared_json(*OFFICIAL, f"end2end_quick_match_{name}.json")


@pytest.fixture(scope="module")
def reference():
    return load_reference(shared_path(*DEMO, "OmniDocBench_demo.json"))


@pytest.fixture(scope="module")
def prediction_file():
    return shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")


@pytest.fixture(scope="module")
def layout_scores(reference, prediction_file):
    return score_layout(reference, load_layout_prediction(prediction_file, reference))


# --- reference loading ---------------------------------------------------------------------------


def test_frames_come_from_the_images_and_ten_sizes_are_swapped(reference):
    assert len(reference.pages) == 18
    for page in reference.pages:
        with Image.open(page.image_path) as image:
            assert (page.width, page.height) == (image.width, image.height)
    assert len(reference.swapped_pages) == 10
    assert {page.frame_source for page in reference.pages} == {"image"}


def test_without_images_the_swap_is_detected_from_the_polygons(reference, tmp_path):
    copy = tmp_path / "OmniDocBench.json"
    shutil.copy(shared_path(*DEMO, "OmniDocBench_demo.json"), copy)
    alone = load_reference(copy)
    assert [(p.width, p.height) for p in alone.pages] == [(p.width, p.height) for p in reference.pages]
    swapped = {p.id for p in alone.pages if p.frame_source == "page_info_swapped"}
    assert swapped == set(reference.swapped_pages)
    assert all(page.image_path is None for page in alone.pages)


def test_boxes_and_sizes_agree_with_the_derived_coco_file(reference):
    coco = load_shared_json(*DEMO, "coco", "gt_eval10.coco.json")
    for image, page in zip(coco["images"], reference.pages):
        assert (image["width"], image["height"]) == (page.width, page.height)
    categories = {c["id"]: c["name"] for c in coco["categories"]}
    ours = coco_ground_truth(reference)
    theirs = sorted((a["image_id"], categories[a["category_id"]], *np.round(a["bbox"], 9)) for a in coco["annotations"])
    mine = sorted((a["image_id"], EVAL_CLASSES[a["category_id"] - 1], *np.round(a["bbox"], 9)) for a in ours.dataset["annotations"])
    assert mine == theirs


def test_malformed_reference_names_page_and_box(tmp_path):
    page = {"page_info": {"image_path": "a.jpg", "width": 100, "height": 200}, "layout_dets": [
        {"category_type": "title", "poly": [0, 0, 10, 0, 10, 10, 0, 10]},
        {"category_type": "text_block", "poly": [0, 0, 10]},
    ]}
    with pytest.raises(InputError) as error:
        load_reference(write_json(tmp_path / "gt.json", [page]))
    assert (error.value.page, error.value.box) == ("a.jpg", 1) and "(at [0].layout_dets[1].poly)" in error.value.problem
    with pytest.raises(InputError, match=r"expected array, got object"):
        load_reference(write_json(tmp_path / "bad.json", {"pages": []}))


# --- layout detection AP -------------------------------------------------------------------------


def test_layout_ap_equals_the_official_demo_result(layout_scores):
    expected = load_shared_json(*DEMO, "reference_results", "layout_detection_official_demo_mAP.json")
    pairs = {"mAP": "bbox_mAP", "AP50": "bbox_mAP_50", "AP75": "bbox_mAP_75",
             "AP_small": "bbox_mAP_s", "AP_medium": "bbox_mAP_m", "AP_large": "bbox_mAP_l"}
    for ours, theirs in pairs.items():
        assert layout_scores[ours] == pytest.approx(expected[theirs], abs=TOLERANCE)
    assert list(layout_scores["per_class"]) == list(EVAL_CLASSES)
    for name, value in layout_scores["per_class"].items():
        assert value == pytest.approx(expected[f"bbox_{name}_precision"], abs=TOLERANCE)
    assert layout_scores["mAP"] == pytest.approx(0.5999473124324551, abs=TOLERANCE)


def test_the_coco_results_form_gives_the_same_ap(reference, layout_scores):
    results = shared_path(*DEMO, "coco", "pred_eval10.coco_results.json")
    scores = score_layout(reference, load_layout_prediction(results, reference))
    assert scores["mAP"] == pytest.approx(layout_scores["mAP"], abs=TOLERANCE)
    assert scores["per_class"] == pytest.approx(layout_scores["per_class"], abs=TOLERANCE)


def _as_layout_json(prediction_file, reference, strip_extension=True, scores=True, zoom=1.0) -> dict:
    """The official prediction rewritten as a layout JSON, its pages `zoom` times the image size."""
    data = json.loads(prediction_file.read_text())
    frames = {page.stem: (page.width, page.height) for page in reference.pages}
    pages: dict[str, list] = {}
    for item in data["results"]:
        box = {"label": data["categories"][str(item["category_id"])], "bbox": [v * zoom for v in item["bbox"]]}
        if scores:
            box["score"] = item["score"]
        pages.setdefault(item["image_name"], []).append(box)
    return {"name": "doclayout", "pages": [
        {"id": stem if strip_extension else stem + ".jpg", "width": frames[stem][0] * zoom,
         "height": frames[stem][1] * zoom, "boxes": boxes} for stem, boxes in pages.items()]}


def test_the_layout_json_form_gives_the_same_ap(reference, prediction_file, layout_scores, tmp_path):
    path = write_json(tmp_path / "pred.json", _as_layout_json(prediction_file, reference, strip_extension=False))
    prediction = load_layout_prediction(path, reference)
    assert prediction.name == "doclayout" and prediction.box_count == 436
    assert score_layout(reference, prediction)["mAP"] == pytest.approx(layout_scores["mAP"], abs=TOLERANCE)
    # pages at half the image size are scaled back into the reference frame
    half = write_json(tmp_path / "half.json", _as_layout_json(prediction_file, reference, zoom=0.5))
    assert score_layout(reference, load_layout_prediction(half, reference))["mAP"] == pytest.approx(
        layout_scores["mAP"], abs=TOLERANCE)


def _greedy_tp_at_iou50(reference, prediction) -> int:
    """Independent brute force: per page and class, boxes by score (stable), each takes the unmatched
    ground truth of highest IoU >= 0.5."""
    from tore_engine.omnidocbench.categories import eval_class_of_gt, eval_class_of_prediction

    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
        return w * h / union if union > 0 else 0.0

    tp = 0
    for page, predicted in zip(reference.pages, prediction.pages):
        for name in EVAL_CLASSES:
            truth = [b.bbox for b in page.blocks if eval_class_of_gt(b.category) == name]
            boxes = [(s if not math.isnan(s) else 1.0, i, box) for i, (label, box, s) in
                     enumerate(zip(predicted.labels, predicted.bboxes, predicted.scores)) if eval_class_of_prediction(label) == name]
            taken = set()
            for _, _, box in sorted(boxes, key=lambda item: (-item[0], item[1])):
                best, best_iou = None, 0.5 - 1e-10
                for j, gt_box in enumerate(truth):
                    value = iou(box, gt_box)
                    if j not in taken and value >= best_iou:
                        best, best_iou = j, value
                if best is not None:
                    taken.add(best)
                    tp += 1
    return tp


def test_f1_at_iou50_matches_a_brute_force_greedy_matcher(reference, prediction_file, layout_scores):
    prediction = load_layout_prediction(prediction_file, reference)
    tp = _greedy_tp_at_iou50(reference, prediction)
    iou50 = layout_scores["iou50"]
    assert iou50["tp"] == tp
    assert (iou50["tp"] + iou50["fp"], iou50["tp"] + iou50["fn"]) == (436, 373)
    assert iou50["f1"] == pytest.approx(2 * tp / (436 + 373))
    assert sum(row["tp"] for row in layout_scores["per_page"]) == tp


def test_predictions_without_scores_are_flagged_and_still_give_f1(reference, prediction_file, tmp_path):
    path = write_json(tmp_path / "pred.json", _as_layout_json(prediction_file, reference, scores=False))
    prediction = load_layout_prediction(path, reference)
    scores = score_layout(reference, prediction)
    assert scores["has_scores"] is False
    assert scores["iou50"]["tp"] == _greedy_tp_at_iou50(reference, prediction)


def test_unknown_pages_and_bad_categories_are_reported(reference, tmp_path):
    data = {"categories": {"0": "title"}, "results": [
        {"image_name": "nowhere", "bbox": [0, 0, 5, 5], "category_id": 0, "score": 0.5}]}
    prediction = load_layout_prediction(write_json(tmp_path / "p.json", data), reference)
    assert prediction.unknown_pages == ["nowhere"] and prediction.box_count == 0
    assert score_layout(reference, prediction)["mAP"] == 0.0
    data["results"][0]["category_id"] = 7
    with pytest.raises(InputError, match="category_id 7"):
        load_layout_prediction(write_json(tmp_path / "q.json", data), reference)


# --- end-to-end per-pair metrics (exact) ---------------------------------------------------------


def test_teds_equals_the_official_values_on_the_ten_demo_tables():
    rows = official("table_result")
    assert len(rows) == 10
    for row in rows:
        assert teds(row["norm_pred"], row["norm_gt"]) == row["metric"]["TEDS"]
        assert teds(row["norm_pred"], row["norm_gt"], structure_only=True) == row["metric"]["TEDS_structure_only"]
    assert teds("", rows[0]["norm_gt"]) == 0.0


def test_text_edit_pairs_equal_the_official_ones():
    rows = official("text_block_result")
    for row in rows:
        pair = edit_pair(row["norm_pred"], row["norm_gt"])
        assert (pair.edit_num, pair.upper_len) == (row["Edit_num"], row["upper_len"])
    # The normalisation itself: 236 of the 237 ground-truth strings come out as upstream's (upstream
    # keeps one `\begin{array}` formula unrendered), 234 of the prediction strings.
    assert sum(normalize_text(row["gt"]) != row["norm_gt"] for row in rows) <= 1
    assert sum(normalize_text(row["pred"]) != row["norm_pred"] for row in rows) <= 3


def test_reading_order_edit_equals_the_official_one():
    for row in official("reading_order_result"):
        assert sequence_edit(row["gt"], row["pred"]) == row["edit"]


# --- aggregation (exact) -------------------------------------------------------------------------


def test_aggregates_from_the_official_per_element_files():
    text = character_weighted_page_edit((r["image_name"], r["Edit_num"], r["upper_len"]) for r in official("text_block_result"))
    assert text == official("text_block_per_page_edit")
    assert len(text) == 18 and mean_over_pages(text) == pytest.approx(0.3356214754013134, abs=TOLERANCE)
    tables = official("table_result")
    table_teds = page_mean((r["image_name"], r["metric"]["TEDS"]) for r in tables)
    assert len(table_teds) == 9 and mean_over_pages(table_teds) == pytest.approx(0.8144908741318889, abs=TOLERANCE)
    assert np.mean([r["metric"]["TEDS"] for r in tables]) == pytest.approx(0.7967474695389661, abs=TOLERANCE)
    teds_s = page_mean((r["image_name"], r["metric"]["TEDS_structure_only"]) for r in tables)
    assert mean_over_pages(teds_s) == pytest.approx(0.9145518147659233, abs=TOLERANCE)
    table_edit = character_weighted_page_edit((r["image_name"], r["Edit_num"], r["upper_len"]) for r in tables)
    assert mean_over_pages(table_edit) == pytest.approx(0.1905124455615901, abs=TOLERANCE)
    formula = character_weighted_page_edit(
        (r["image_name"], r["Edit_num"], r["upper_len"]) for r in official("display_formula_result"))
    assert len(formula) == 2 and mean_over_pages(formula) == pytest.approx(0.23663476303352862, abs=TOLERANCE)
    order = {r["image_name"]: r["edit"] for r in official("reading_order_result")}
    assert order == official("reading_order_per_page_edit")
    assert mean_over_pages(order) == pytest.approx(0.22430037417144588, abs=TOLERANCE)


def test_page_attribute_breakdowns_equal_the_official_page_tables(reference):
    attributes = {page.id: page.attributes for page in reference.pages}
    metrics = official("metric_result")
    per_page = {
        ("text_block", "Edit_dist"): official("text_block_per_page_edit"),
        ("reading_order", "Edit_dist"): official("reading_order_per_page_edit"),
        ("table", "TEDS"): page_mean((r["image_name"], r["metric"]["TEDS"]) for r in official("table_result")),
    }
    for (group, metric), values in per_page.items():
        ours = breakdown_by_attribute(values, attributes, PAGE_ATTRIBUTES)
        flat = {"ALL": mean_over_pages(values)}
        for attribute, groups in ours.items():
            for value, mean in groups.items():
                flat[value if attribute == "special_issue" else f"{attribute}: {value}"] = mean
        assert flat == pytest.approx(metrics[group]["page"][metric], abs=TOLERANCE)


def test_overall_formula_and_its_absence_without_cdm():
    assert overall(0.157, 0.8524, 0.6577) == pytest.approx(78.44, abs=0.005)  # Marker, v1.6 leaderboard
    assert overall(0.157, None, 0.6577) is None


# --- end to end on this project's matcher ---------------------------------------------------------


def test_markdown_parser_finds_tables_formulas_and_paragraphs():
    text = ("```markdown\n# Title\n\nSome *text* ![img](a.png)\nsecond line\n\n$$\nx^2\n$$\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n<table><tr><td>c</td></tr></table>\n\n\\[ y \\]\n```")
    elements = parse_markdown(text)
    assert [e.kind for e in elements] == ["text", "text", "formula", "table", "table", "formula"]
    assert elements[1].content == "Some *text* \nsecond line"
    assert elements[3].content == "<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table>"
    assert [e.position for e in elements] == list(range(6))


def test_matcher_splits_merged_paragraphs_and_merges_split_ones():
    from tore_engine.omnidocbench.matching import GroundTruthElement, match_page

    gt = [GroundTruthElement("text", "title", "Human Factors", 1, {}),
          GroundTruthElement("text", "text_block", "the process molds to the people", 2, {}),
          GroundTruthElement("text", "text_block", "first half of a paragraph second half of it", 3, {}),
          GroundTruthElement("text", "text_block", "nothing like this was predicted at all", 4, {})]
    markdown = ("- **Human Factors**\n  - the process molds to the people\n\n"
                "first half of a paragraph\n\nsecond half of it")
    matches = match_page(gt, parse_markdown(markdown))
    assert [m.prediction.content if m.prediction else None for m in matches] == [
        "- **Human Factors**", "  - the process molds to the people",
        "first half of a paragraph\n\nsecond half of it", None]
    assert [m.prediction.position for m in matches[:3]] == [(0, 0), (0, 1), (1, 0)]


def _markdown_from_ground_truth(reference, folder):
    """Each page's GT elements in reading order: text as paragraphs, formulas as $$, tables as HTML."""
    folder.mkdir()
    for page in reference.pages:
        parts = []
        for element in sorted(ground_truth_elements(page), key=lambda e: (e.order is None, e.order or 0)):
            if element.kind == "table":
                parts.append(element.content)
            elif element.kind == "formula":
                parts.append(f"$$\n{element.content}\n$$")
            else:
                parts.append(element.content.replace("\n\n", "\n"))
        (folder / f"{page.stem}.md").write_text("\n\n".join(parts), encoding="utf-8")


def test_ground_truth_rendered_as_markdown_scores_perfectly(reference, tmp_path):
    _markdown_from_ground_truth(reference, tmp_path / "md")
    scores = score_end_to_end(reference, load_markdown_predictions(tmp_path / "md", reference))
    assert scores["text_edit"] == 0.0
    assert scores["table_teds"] == 1.0 and scores["table_teds_s"] == 1.0
    assert scores["reading_order_edit"] == 0.0
    assert scores["overall"] is None
    assert scores["page_counts"]["text_edit"] == 18 and scores["page_counts"]["table_teds"] == 9


def test_demo_predictions_are_scored_and_missing_pages_are_empty(reference, tmp_path):
    folder = shared_path(*DEMO, "pred_end2end_markdown")
    scores = score_end_to_end(reference, load_markdown_predictions(folder, reference))
    assert scores["page_counts"] == {"text_edit": 18, "formula_edit": 2, "table_teds": 9, "table_teds_s": 9,
                                     "table_edit": 9, "reading_order_edit": 18}
    assert 0 < scores["text_edit"] < 1 and 0 < scores["table_teds"] < 1
    partial = tmp_path / "partial"
    partial.mkdir()
    empty = score_end_to_end(reference, load_markdown_predictions(partial, reference))
    assert empty["text_edit"] == 1.0 and empty["table_teds"] == 0.0 and len(empty["missing_pages"]) == 18
    with pytest.raises(InputError, match="not a folder"):
        load_markdown_predictions(tmp_path / "absent", reference)


# --- TORE layout sets ------------------------------------------------------------------------------


def test_layout_sets_keep_both_taxonomies(prediction_file):
    gt, prediction = omnidocbench_layout_sets(shared_path(*DEMO, "OmniDocBench_demo.json"), prediction_file)
    assert gt.name == "omnidocbench" and len(gt.pages) == 18
    assert sum(page.box_count for page in gt.pages) == 374
    assert set(gt.labels_in_use()) <= set(gt.taxonomy) and "text_block" in gt.taxonomy
    assert all(page.image is not None and page.image.path.is_file() for page in gt.pages)
    categories = json.loads(prediction_file.read_text())["categories"]
    assert prediction.taxonomy == [categories[key] for key in sorted(categories, key=int)]
    assert sum(page.box_count for page in prediction.pages) == 436
    assert [p.id for p in prediction.pages] == [p.id for p in gt.pages]
    assert [(p.width, p.height) for p in prediction.pages] == [(p.width, p.height) for p in gt.pages]
    assert not set(prediction.labels_in_use()) <= set(gt.class_list())  # so TORE runs in dual mode
    assert omnidocbench_layout_sets(shared_path(*DEMO, "OmniDocBench_demo.json"))[1] is None


def test_tore_runs_in_dual_taxonomy_mode_on_the_demo(prediction_file):
    from tore_engine.dataset import evaluate_dataset

    gt, prediction = omnidocbench_layout_sets(shared_path(*DEMO, "OmniDocBench_demo.json"), prediction_file)
    evaluation = evaluate_dataset(gt, prediction)
    assert evaluation.taxonomy.mode == "dual"
    assert evaluation.taxonomy.classes == (
        ["Background"] + [f"omnidocbench_{c}" for c in gt.taxonomy] + [f"detection_prediction_{c}" for c in prediction.taxonomy]
    )
    assert evaluation.pixels == sum(int(page.width) * int(page.height) for page in gt.pages)
    assert evaluation.warnings == []  # every box lies inside its (swap-corrected) page


def test_keys_the_official_evaluator_does_not_read_are_skipped(tmp_path, reference):
    """OmniDocBench files carry more than scoring reads (and versions add keys): they are not errors."""
    data = load_shared_json(*DEMO, "OmniDocBench_demo.json")
    data[0]["page_info"]["new_in_v2"] = {"anything": [1]}
    data[0]["layout_dets"][0]["reviewer"] = "x"
    data[0]["future_section"] = []
    again = load_reference(write_json(tmp_path / "gt.json", data))
    assert [page.blocks for page in again.pages] == [page.blocks for page in reference.pages]
    official_file = shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")
    official = load_shared_json(*DEMO, "pred_layout_detection", "detection_prediction.json")
    official["results"][0]["extra"] = "not read"
    official["model"] = "unnamed"
    prediction = load_layout_prediction(write_json(tmp_path / "pred.json", official), reference)
    expected = load_layout_prediction(official_file, reference)
    assert prediction.box_count == expected.box_count == 436
    assert [page.labels for page in prediction.pages] == [page.labels for page in expected.pages]


def test_layout_predictions_are_layout_pages_in_the_reference_frame(reference):
    from tore_engine.layout import Page

    prediction = load_layout_prediction(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json"), reference)
    assert all(isinstance(page, Page) for page in prediction.pages)
    assert [(p.id, p.width, p.height) for p in prediction.pages] == [(p.id, p.width, p.height) for p in reference.pages]
    assert prediction.pages[0].image.path == reference.pages[0].image_path and prediction.has_scores


def test_a_markdown_entry_that_is_a_folder_is_an_input_error(tmp_path, reference):
    (tmp_path / f"{reference.pages[0].stem}.md").mkdir()
    with pytest.raises(InputError, match="is a folder; expected a file") as error:
        load_markdown_predictions(tmp_path, reference)
    assert error.value.file == str(tmp_path / f"{reference.pages[0].stem}.md")


@pytest.mark.parametrize("page, problem, page_id", [
    ({"page_info": [1], "layout_dets": []}, "expected object, got array (at [0].page_info)", None),
    ({"page_info": {"image_path": 5}, "layout_dets": []}, "expected str, got int (at [0].page_info.image_path)", None),
    ({"page_info": {"image_path": "a.jpg", "width": 1, "height": 1}, "layout_dets": [{"poly": [0] * 8}]},
     "missing key 'category_type' (at [0].layout_dets[0])", "a.jpg"),
    (7, "expected object, got int (at [0])", None),
])
def test_a_page_that_breaks_the_schema_is_named_when_it_can_be(tmp_path, page, problem, page_id):
    with pytest.raises(InputError) as error:
        load_reference(write_json(tmp_path / "gt.json", [page]))
    assert (error.value.problem, error.value.page) == (problem, page_id)
