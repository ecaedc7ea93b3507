"""The OmniDocBench panel of the Scores page (score_panels.omnidocbench), through AppTest (no browser), its
page table, and its link to the Matrices page on the same ground truth and layout model (dual taxonomy).

Expected numbers come from the engine (`score_omnidocbench`, `box_matches_at_iou50`, TORE's
`evaluate_dataset`) and from the official result shipped with the sample (mAP 0.5999). AppTest
cannot click a dataframe row, so a page is opened through the panel's fallback selectbox.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import REPOSITORY, SHARED
from tests.studio.helpers import APP, _axes, _figures, _heatmaps, _image_source, _page_charts, _page_rows, _pane_titles, _title, open_page
from tests.studio.helpers import _no_exception as assert_no_exception
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.score_panels.omnidocbench import matrices_query, page_table

SAMPLE = (SHARED / "data" / "omnidocbench").resolve()
# The panel opens on the shared sample; without it there is nothing of the sample to check.
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason=f"shared sample data not found at {SAMPLE}; skipping the omnidocbench panel tests")
GT = SAMPLE / "OmniDocBench_demo.json"
LAYOUT = SAMPLE / "pred_layout_detection" / "detection_prediction.json"
MARKDOWN = SAMPLE / "pred_end2end_markdown"


@pytest.fixture
def sample(monkeypatch):
    if not GT.is_file():
        pytest.skip(f"shared OmniDocBench sample not found at {SAMPLE}; skipping")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(REPOSITORY.parent.resolve()))
    return SAMPLE


@pytest.fixture(scope="module")
def engine_result():
    if not GT.is_file():
        pytest.skip(f"shared OmniDocBench sample not found at {SAMPLE}; skipping")
    from tore_engine.scorers.omnidocbench.score import score_omnidocbench

    return score_omnidocbench(GT, LAYOUT, MARKDOWN).to_json()


def _panel() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90).run()
    open_page(at, "scores").run()
    at.radio(key="bench").set_value("omnidocbench").run()
    assert_no_exception(at)
    return at


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


# --- the panel on the real demo --------------------------------------------------------------------


def test_headline_shows_the_engines_numbers_and_which_are_exact(sample, engine_result):
    at = _panel()
    metrics = {metric.label: metric.value for metric in at.metric}
    layout, end_to_end = engine_result["layout"], engine_result["end_to_end"]
    assert metrics["mAP"] == "0.5999" == _shown(layout["mAP"])  # the official evaluator's demo result
    assert (metrics["AP50"], metrics["AP75"]) == (_shown(layout["AP50"]), _shown(layout["AP75"]))
    assert metrics["F1 at IoU 0.5"] == _shown(layout["iou50"]["f1"])
    assert metrics["text edit distance ↓"] == _shown(end_to_end["text_edit"])
    assert metrics["reading-order edit distance ↓"] == _shown(end_to_end["reading_order_edit"])
    assert metrics["table TEDS ↑"] == _shown(end_to_end["table_teds"])
    assert metrics["overall ↑"] == "n/a" and end_to_end["overall"] is None
    markdown = " ".join(element.value for element in at.markdown)
    assert "exact: reproduces the official evaluator" in markdown
    assert "leaderboard-comparable" in markdown
    assert any("leaderboard_comparable: true" in caption.value for caption in at.caption)
    assert not at.error and not at.warning


def test_official_results_shipped_with_the_sample_sit_beside_ours(sample):
    """Layout AP and the end-to-end scores equal the official results (v1.6, page-level table TEDS)."""
    at = _panel()
    official = json.loads((SAMPLE / "reference_results" / "layout_detection_official_demo_mAP.json").read_text())
    check = next(frame.value for frame in at.dataframe if "official evaluator" in frame.value.columns)
    assert check["score"].tolist() == ["mAP", "AP50", "AP75"]
    assert check["official evaluator"].tolist() == [f"{official[key]:.4f}" for key in ("bbox_mAP", "bbox_mAP_50", "bbox_mAP_75")]
    assert check["TORE Studio"].tolist() == check["official evaluator"].tolist()
    official = json.loads((SAMPLE / "reference_results" / "v1.6_official_rerun_noCDM" / "end2end_quick_match_metric_result.json").read_text())
    check = next(frame.value for frame in at.dataframe if "official evaluator" in frame.value.columns and "table TEDS" in frame.value["score"].tolist())
    assert dict(zip(check["score"], check["official evaluator"])) == {
        "text edit distance": f"{official['text_block']['all']['Edit_dist']['ALL_page_avg']:.4f}",  # 0.3356
        "reading-order edit distance": f"{official['reading_order']['all']['Edit_dist']['ALL_page_avg']:.4f}",
        "table TEDS": f"{official['table']['page']['TEDS']['ALL']:.4f}",  # 0.8145, the leaderboard's
        "table TEDS-S (structure)": f"{official['table']['page']['TEDS_structure_only']['ALL']:.4f}",
        "formula edit distance": f"{official['display_formula']['all']['Edit_dist']['ALL_page_avg']:.4f}",
    }
    assert check["TORE Studio"].tolist() == check["official evaluator"].tolist()


def test_per_class_bars_and_attribute_breakdowns_are_the_engines(sample, engine_result):
    at = _panel()
    per_class = next(chart for chart in _figures(at) if _title(chart).startswith("AP@[.5:.95] per eval class"))
    expected_ap = engine_result["layout"]["per_class"]
    assert per_class["layout"]["meta"]["classes"] == [name if value is not None else f"{name} (n/a)" for name, value in expected_ap.items()]
    assert [None if value != value else value for value in per_class["data"][0]["x"]] == pytest.approx(list(expected_ap.values()))
    assert [tab.label for tab in at.tabs] == ["data source", "language", "layout"]
    by_source = next(frame.value for frame in at.dataframe if "value" in frame.value.columns and "newspaper" in frame.value["value"].tolist())
    expected = engine_result["layout"]["by_attribute"]["data_source"]
    assert by_source["value"].tolist() == sorted(expected)
    assert by_source["pages"].tolist() == [expected[value]["pages"] for value in sorted(expected)]
    assert by_source["layout mAP"].tolist() == pytest.approx([expected[value]["mAP"] for value in sorted(expected)])
    text_edit = engine_result["end_to_end"]["by_attribute"]["text_edit"]["data_source"]
    assert by_source["text edit ↓"].tolist() == pytest.approx([text_edit[value] for value in sorted(expected)])


def test_page_table_lists_the_18_pages_worst_first(sample, engine_result):
    at = _panel()
    element = next(frame for frame in at.dataframe if "page" in frame.value.columns)
    table = element.value
    assert element.proto.placeholder == "n/a"  # how the browser shows the missing scores
    assert len(table) == 18 == engine_result["pages"]
    rows = {row["page"]: row for row in engine_result["per_page"]}
    f1 = [rows[page]["layout"]["f1"] for page in table["page"]]
    assert f1 == sorted(f1) and table["F1 @0.5"].tolist() == pytest.approx(f1)
    assert table["TP"].dtype.kind == "i" and table["TP"].tolist() == [rows[page]["layout"]["tp"] for page in table["page"]]
    assert table["data source"].tolist() == [rows[page]["attributes"]["data_source"] for page in table["page"]]
    formula = [rows[page]["end_to_end"]["formula_edit"] for page in table["page"]]
    assert sum(value is None for value in formula) == 16  # formulas on 2 pages only: the rest are n/a, not 0
    assert table["formula edit ↓"].isna().sum() == 16
    assert at.selectbox(key="omnidocbench_page").options == table["page"].tolist()


def test_choosing_a_page_draws_its_blocks_against_the_predicted_boxes(sample, engine_result):
    from tore_engine.scorers.omnidocbench.box_matches import box_matches_at_iou50
    from tore_engine.scorers.omnidocbench.layout_predictions import (
        load_layout_prediction,
    )
    from tore_engine.scorers.omnidocbench.reference import load_reference

    page_id = "newspaper_1cddf9d22ca549f3a86cf1512a3110cc_1.jpg"
    at = _panel()
    at.selectbox(key="omnidocbench_page").set_value(page_id).run()
    assert_no_exception(at)
    assert at.query_params["omnidocbench_page"] == page_id
    reference = load_reference(GT)
    page = next(p for p in box_matches_at_iou50(reference, load_layout_prediction(LAYOUT, reference)) if p.page == page_id)
    overlay = _page_charts(at)[0]
    assert _pane_titles(overlay) == [f"ground truth: {len(page.reference)} blocks", f"prediction: {len(page.prediction)} boxes"]
    assert _image_source(overlay).startswith("data:image/")  # under both panes
    assert [len(_page_rows(overlay, "box", pane)) for pane in (0, 1)] == [len(page.reference), len(page.prediction)]
    row = next(r for r in engine_result["per_page"] if r["page"] == page_id)["layout"]
    assert any(f"{row['tp']} matched, {row['fn']} ground-truth blocks missed, {row['fp']} predicted" in c.value for c in at.caption)
    assert any("swaps width and height" in c.value for c in at.caption)  # a page of the demo whose page_info is swapped


def test_a_broken_input_path_shows_the_engines_message(sample):
    at = _panel()
    at.text_input(key="omnidocbench_gt").set_value("shared/data/omnidocbench/no_such_file.json").run()
    assert_no_exception(at)
    assert any(plain_for_markdown("no_such_file.json: no such file") in error.value for error in at.error)
    at.text_input(key="omnidocbench_gt").set_value("shared/data/omnidocbench/README.md").run()
    assert any(plain_for_markdown("omnidocbench/README.md: ") in error.value for error in at.error)  # the reader's reason after it
    at.text_input(key="omnidocbench_gt").set_value("../../etc/passwd").run()
    assert_no_exception(at)
    assert any(plain_for_markdown("outside the folder it must stay in (the data root") in error.value for error in at.error)


def test_without_the_sample_the_panel_says_so_and_asks_for_paths(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _panel()
    assert any("demo sample is not at" in warning.value for warning in at.warning)
    assert any("Give the path of an OmniDocBench.json" in info.value for info in at.info)


# --- dual-taxonomy TORE matrices of the same pair --------------------------------------------------


def test_matrices_button_opens_the_dual_taxonomy_matrix_of_the_demo_model(sample):
    from tore_engine.api import load_pair
    from tore_engine.results.drilldown import view_matrices
    from tore_engine.run.runner import evaluate_dataset
    from tore_engine.studio.axis_names import axis_names

    at = _panel()
    at.button(key="omnidocbench_matrices").click().run()
    assert_no_exception(at)
    assert [title.value for title in at.title] == ["TORE matrices"]
    assert at.radio(key="src").value == "path" and at.session_state["fmt"] == "omnidocbench"
    assert at.text_input(key="ref").value == "shared/data/omnidocbench/OmniDocBench_demo.json"
    assert any(caption.value.startswith("Dual taxonomy") for caption in at.caption)
    evaluation = evaluate_dataset(*load_pair(GT, LAYOUT, "omnidocbench"))
    assert evaluation.matrices.mode == "dual"
    expected = view_matrices(evaluation.matrices, "trimmed")
    rows, columns = _axes(_heatmaps(at)[0])
    names = axis_names(evaluation)  # the layouts' names as prefixes, the long one cut in the middle (issue 24)
    assert rows == [names.get(row, row) for row in expected.rows]
    assert columns == [names.get(column, column) for column in expected.columns]
    assert names["detection_prediction_title"] == "detecti…ediction_title"
    assert any("text_block" in row for row in expected.rows) and any("plain text" in column for column in expected.columns)
    assert at.query_params["fmt"] == "omnidocbench" and at.query_params["src"] == "path"


def test_matrices_query_uses_the_sidebars_keys(sample):
    query = matrices_query(GT, LAYOUT)
    assert query == {"src": "path", "ref": "shared/data/omnidocbench/OmniDocBench_demo.json",
                     "a": "shared/data/omnidocbench/pred_layout_detection/detection_prediction.json",
                     "fmt": "omnidocbench", "tax": "auto", "view": "trimmed"}


# --- the page table and other predictions ------------------------------------------------------


def test_page_table_sorts_worst_first_and_keeps_missing_scores_missing():
    def row(page, f1, text_edit):
        return {"page": page, "attributes": {"data_source": "book", "language": "english", "layout": "single_column"},
                "layout": {"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": f1},
                "end_to_end": {"text_edit": text_edit, "reading_order_edit": 0.0, "table_teds": None, "formula_edit": None}}

    table = page_table({"per_page": [row("a", 0.9, 0.1), row("b", 0.2, 0.5), row("c", 0.9, 0.7), row("d", None, 0.0)]})
    assert table["page"].tolist() == ["b", "c", "a", "d"]
    assert table["table TEDS ↑"].isna().all() and table["table TEDS ↑"].dtype.kind == "f"
    assert table["F1 @0.5"].isna().tolist() == [False, False, False, True]


def test_other_predictions_are_scored_without_the_official_check_of_the_samples_own(sample):
    from tore_engine.scorers.omnidocbench.score import score_omnidocbench

    at = _panel()
    at.text_input(key="omnidocbench_markdown").set_value("shared/data/omnidocbench/gt_markdown").run()
    assert_no_exception(at)
    expected = score_omnidocbench(GT, LAYOUT, SAMPLE / "gt_markdown").to_json()["end_to_end"]
    metrics = {metric.label: metric.value for metric in at.metric}
    assert metrics["text edit distance ↓"] == _shown(expected["text_edit"])
    assert metrics["mAP"] == "0.5999"
    checks = [frame.value for frame in at.dataframe if "official evaluator" in frame.value.columns]
    assert [check["score"].tolist() for check in checks] == [["mAP", "AP50", "AP75"]]  # the layout check only
    assert at.query_params["omnidocbench_markdown"] == "shared/data/omnidocbench/gt_markdown"


def test_without_a_layout_prediction_pages_sort_by_text_edit_and_no_overlay_is_drawn(sample, engine_result):
    at = _panel()
    at.text_input(key="omnidocbench_layout").set_value("").run()
    assert_no_exception(at)
    assert "mAP" not in {metric.label for metric in at.metric}
    table = next(frame.value for frame in at.dataframe if "page" in frame.value.columns)
    rows = {row["page"]: row["end_to_end"]["text_edit"] for row in engine_result["per_page"]}
    assert table["text edit ↓"].tolist() == sorted(rows.values(), reverse=True)
    assert "TP" not in table.columns
    assert any("Give a layout-detection prediction" in info.value for info in at.info)
    assert not any(button.key == "omnidocbench_matrices" for button in at.button)
