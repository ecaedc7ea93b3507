"""The sidebar's data sources (tore_engine.studio.sidebar), through AppTest: uploads, paths on the server
inside the data root, label maps, a format per input, COCO results lists with their images file,
docling-eval datasets, page images from a server folder, and the models' labels."""

from __future__ import annotations

import dataclasses
import json

from tests.helpers import DEMO
from tests.studio.helpers import (
    PAGES,
    PREDICTED,
    _app,
    _axes,
    _coco,
    _decoded,
    _heatmaps,
    _image_source,
    _native,
    _no_exception,
    _page_charts,
    _pane_titles,
    _png,
    _popovers,
    _title,
    open_page,
)
from tore_engine.api import load_pair
from tore_engine.plots.plain_text import plain_for_markdown, shortened
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio import state
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.evaluations import NAME_LENGTH


def test_a_broken_upload_shows_the_engine_error():
    at = _app(src="upload")
    at.file_uploader(key="upload_ref_0").set_value(("reference.json", b'{"pages": [{"id": "p1", "width": 10}]}', "application/json")).run()
    at.file_uploader(key="upload_a_0").set_value(("model.json", (DEMO / "model_a.json").read_bytes(), "application/json")).run()
    _no_exception(at)
    messages = [error.value for error in at.error]
    expected = plain_for_markdown("file reference.json, page 'p1': missing key 'height'")  # not the private folder's path
    assert any(expected in message for message in messages), messages
    open_page(at, "overlays").run()  # the uploads survive a page switch
    assert any(expected in error.value for error in at.error)
    next(button for button in at.sidebar.button if button.label == "Forget the uploaded files").click().run()
    assert not at.error and any("Choose a reference" in info.value for info in at.info)


def test_a_server_path_outside_the_data_root_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(src="path", ref="../../etc/passwd", a=str(DEMO / "model_a.json"))
    assert any(plain_for_markdown("is outside the folder it must stay in (the data root") in error.value for error in at.sidebar.error)


def test_a_missing_server_path_shows_the_engine_error(tmp_path, whole_disk_as_data_root):
    at = _app(src="path", ref=str(tmp_path / "nowhere.json"), a=str(DEMO / "model_a.json"))
    _no_exception(at)
    assert any(plain_for_markdown("nowhere.json: no such file") in error.value for error in at.error)


def test_a_label_map_path_is_applied(tmp_path, whole_disk_as_data_root):
    label_map = tmp_path / "map.json"
    label_map.write_text(json.dumps({"Title": "Section-header"}), encoding="utf-8")
    at = _app(map=str(label_map))
    _no_exception(at)
    assert "Title" not in _axes(_heatmaps(at)[0])[0]


def test_page_images_from_a_folder_on_the_server(root):
    (root / "layouts").mkdir()
    (root / "pictures" / "img").mkdir(parents=True)
    (root / "pictures" / "img" / "p1.png").write_bytes(_png("red"))
    (root / "layouts" / "gt.json").write_bytes(_native("gt", PAGES))
    (root / "layouts" / "model.json").write_bytes(_native("model", PREDICTED))
    at = _app(src="path", ref="layouts/gt.json", a="layouts/model.json")
    open_page(at, "overlays").run()
    assert _image_source(_page_charts(at)[0]).startswith("data:image/png;base64,")  # beside the layouts there is none: the placeholder
    at.text_input(key="imgdir").set_value("pictures").run()
    _no_exception(at)
    assert _decoded(_image_source(_page_charts(at)[0])).getpixel((20, 10))[0] > 200  # red: p1, from the chosen folder
    assert at.query_params["imgdir"] == "pictures"


def test_two_coco_results_lists_are_compared_against_one_images_file(root):
    _coco(root)
    at = _app(src="path", a="a.results.json", b="b.results.json", coco="images.json")
    open_page(at, "compare").run()
    _no_exception(at)
    assert any("only B read against A is shown" in info.value for info in at.info)
    recall = next(chart for chart in _heatmaps(at) if _title(chart) == "recall (zero-trimmed), B against A")
    engine = evaluate_dataset(*load_pair(root / "a.results.json", root / "b.results.json", coco_images=root / "images.json"), taxonomy="dual")
    assert _axes(recall)[0] == engine.matrices.trimmed.rows


def test_each_input_has_its_own_format(root):
    (root / "gt.json").write_bytes(_native("gt", PAGES))
    (root / "model.jsonl").write_text("\n".join(json.dumps(page) for page in PREDICTED) + "\n", encoding="utf-8")
    at = _app(src="path", ref="gt.json", fmt="tore", a="model.jsonl", fmt_a="jsonl")
    _no_exception(at)
    assert not [box for box in at.selectbox if box.key in ("fmt", "fmt_a", "fmt_b")]  # the Formats section is closed
    assert [section.label for section in at.sidebar.expander if section.label.startswith("Formats")] == ["Formats: tore (reference), jsonl (model A)"]
    assert (at.query_params["fmt"], at.query_params["fmt_a"]) == ("tore", "jsonl")
    assert _axes(_heatmaps(at)[0])[0] == ["Background", "Table", "Text"]
    at = _app(src="path", ref="gt.json", fmt="tore", a="model.jsonl", fmt_a="jsonl", formats_open="1")
    assert [at.selectbox(key=key).value for key in ("fmt", "fmt_a", "fmt_b")] == ["tore", "jsonl", "auto"]


def test_a_docling_eval_dataset_gives_the_reference_and_model_a(root):
    from tests.formats.test_docling_eval import rows, write_dataset

    write_dataset(root / "dataset", rows())
    at = _app(src="path", ref="dataset", timeout=120)
    _no_exception(at)
    assert any("predictions stored in this docling-eval dataset" in caption.value for caption in at.sidebar.caption)
    engine = evaluate_dataset(*load_pair(root / "dataset", format="docling-eval"))
    heatmap = _heatmaps(at)[0]
    assert _axes(heatmap)[0] == (engine.matrices.full.rows if engine.matrices.mode == "single" else engine.matrices.trimmed.rows)
    open_page(at, "overlays").run()
    _no_exception(at)
    assert _image_source(_page_charts(at)[0]).startswith("data:image/jpeg;base64,")  # the dataset's own page image


def test_inputs_are_named_by_their_layouts_and_an_error_by_its_input(root):
    """Names come from the layouts (their `name`), not the file names; the reference is named; a
    bad reference path is the reference's error, not model A's (issue 24)."""
    long = "layout_predictions_of_the_detector_trained_on_the_whole_benchmark_run"
    (root / "gt.json").write_bytes(_native("gold standard", PAGES))
    (root / "b.json").write_bytes(_native(long, PREDICTED))
    at = _app(src="path", ref="gt.json", a="b.json")
    _no_exception(at)
    label = f"model A ({shortened(long, NAME_LENGTH)})"
    assert at.radio(key="model").options == [plain_for_markdown(label)] and len(label) < len(long)
    open_page(at, "overlays").run()
    assert _pane_titles(_page_charts(at)[0]) == ["reference (gold standard)", label]  # as data, drawn as text
    at = _app(src="path", ref="nowhere/gt.json", a="b.json")
    errors = [error.value for error in at.error]
    assert len(errors) == 1 and errors[0].startswith("**reference**") and "model A" not in errors[0]
    at = _app(src="path", ref="gt.json", a="nowhere.json")
    assert [error.value.split(":")[0] for error in at.error] == ["**model A**"]


def test_several_files_uploaded_for_one_input_make_one_set():
    """A Docling set of three documents a side, uploaded as files (issue 24)."""
    import pytest

    from tests.helpers import shared_path

    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs the docling extra")
    heron, pre_heron = shared_path("data", "layouts", "docling_documents", "heron"), shared_path("data", "layouts", "docling_documents", "pre_heron")
    names = ["2305.03393v1-pg9.json", "amt_handbook_sample.json", "picture_classification.json"]
    at = _app(src="upload")
    for slot, folder in (("ref", pre_heron), ("a", heron)):
        files = [(name, (folder / name).read_bytes(), "application/json") for name in names]
        at = at.file_uploader(key=f"upload_{slot}_0").set_value(files).run()
    at.session_state["pages_open"] = True  # the all-pages section opened
    at.run()
    _no_exception(at)
    engine = evaluate_dataset(*load_pair(pre_heron / names[0], heron / names[0]))  # one document alone, to compare its pages
    assert at.radio(key="model").options == [plain_for_markdown("model A (model_a)")]
    table = next(frame.value for frame in at.dataframe if "foreground F1" in frame.value.columns)
    assert len(table) == 4 and set(engine.page_ids) <= set(table["page"])  # 1 + 1 + 2 pages, every document of both uploads


def test_the_evaluation_settings_sit_in_a_popover_whose_button_names_their_values():
    at = _app(tax="single", min_score="0.35", convention="docling")
    _no_exception(at)
    assert _popovers(at)["Evaluation: single taxonomy, boxes scored 0.35 or more, mAP docling"] == ["tax", "min_score", "score_side", "convention", "pidmap"]
    at.sidebar.number_input(key="min_score").set_value(0.0).run()
    at.sidebar.selectbox(key="convention").set_value("coco").run()
    assert "Evaluation: single taxonomy, every box, mAP coco" in _popovers(at)
    assert "min_score" not in at.query_params and at.query_params["tax"] == "single"


def test_the_minimum_score_of_the_predictions_only_keeps_the_reference_boxes_drawn_and_counted():
    """Issue 36 N4 in the app: the Evaluation popover's side is tore evaluate --min-score-side."""
    at = _app(min_score="0.6", score_side="prediction")
    _no_exception(at)
    assert "Evaluation: auto taxonomy, boxes scored 0.60 or more (the prediction's), mAP coco" in _popovers(at)
    assert at.query_params["score_side"] == "prediction"
    evaluated = at.session_state[state.DATASET]
    expected = evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"), min_score=0.6, min_score_side="prediction")
    from tore_engine.studio.evaluations import model_evaluation

    shown = model_evaluation(evaluated, "A", quiet=True)
    assert shown is not None and shown.evaluation.to_json() == expected.to_json()
    # a scored pseudo-reference (model A against itself): its boxes are drawn whole, the prediction's above 0.6
    pseudo, model = load_pair(DEMO / "model_a.json", DEMO / "model_a.json")
    kept = dataclasses.replace(shown, reference=pseudo, prediction=model)
    page = pseudo.pages[0]
    assert kept.reference_page(page.id).box_count == page.box_count > kept.prediction_page(page.id).box_count == page.above_score(0.6)[0].box_count
