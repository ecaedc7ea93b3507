"""Every page of the app on the embedded demo, through Streamlit's AppTest (no browser).

AppTest cannot click a chart, so a cell is chosen through the fallback selectboxes; the click path
is covered by the browser test. Expected page lists come from the engine directly.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

import pytest
from streamlit.testing.v1 import AppTest

from tore_engine.dataset import evaluate_dataset
from tore_engine.formats import load_pair
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
from tore_engine.studio.panels import matrix_csv
from tore_engine.studio.plain_text import plain_for_markdown

REPOSITORY = Path(__file__).resolve().parents[2]
APP = str(REPOSITORY / "tore_engine" / "studio" / "app.py")
DEMO = REPOSITORY / "tore_engine" / "demo" / "data"

if not (DEMO / "reference.json").exists():
    pytest.skip(f"the embedded demo is missing at {DEMO}; regenerate it with python -m tore_engine.demo", allow_module_level=True)


def _app(*, secrets: dict | None = None, timeout: float = 60, **query: str) -> AppTest:
    """The app opened at a link with these query parameters (and these Streamlit secrets)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.secrets.update(secrets or {})
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _page_table(at: AppTest):
    return next(frame.value for frame in at.dataframe if "page" in frame.value.columns)


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(element.proto.spec) for element in at.get("plotly_chart")]


@pytest.fixture(scope="module")
def demo_evaluation():
    return evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"))


def test_matrices_page_renders_the_demo_and_says_models_are_simulated():
    at = _app()
    _no_exception(at)
    assert any("simulated" in info.value for info in at.info)
    charts = _charts(at)
    heatmap = charts[0]
    assert heatmap["data"][0]["type"] == "heatmap" and heatmap["data"][1]["type"] == "scatter"
    assert heatmap["layout"]["yaxis"]["ticktext"][:2] == ["Background", "Caption"]
    assert charts[1]["data"][0]["type"] == "bar"  # per-class scores
    assert any("Unweighted means over the 11 classes" in caption.value for caption in at.caption)
    assert at.query_params["src"] == "demo"
    largest = at.dataframe[0].value
    assert largest.columns[:3].tolist() == ["reference", "prediction", "pixels"]
    assert (largest["reference"] != largest["prediction"]).all()
    assert largest["pixels"].is_monotonic_decreasing


def test_choosing_a_cell_with_the_selectboxes_lists_its_pages(demo_evaluation):
    at = _app()
    at.selectbox(key="cell_ref").set_value("Title").run()
    at.selectbox(key="cell_pred").set_value("Section-header").run()
    _no_exception(at)
    classes = demo_evaluation.matrices.classes
    expected = demo_evaluation.cell_pages(classes.index("Title"), classes.index("Section-header"))
    assert expected, "the demo's model A confuses some titles with section headers"
    table = _page_table(at)
    assert table["page"].tolist() == [page for page, _, _ in expected]
    assert table["contribution (pixels)"].tolist() == [value for _, value, _ in expected]
    assert any(f"Contributing pages: {len(expected)}" in markdown.value for markdown in at.markdown)
    assert at.query_params["cell"] == "Title|Section-header"


def test_open_in_overlays_switches_to_that_page_with_the_cell():
    at = _app(cell="Title|Section-header")
    page_id = at.selectbox(key="open-A-full-Title-Section-header").value
    at.button(key="open-button-A-full-Title-Section-header-A").click().run()
    _no_exception(at)
    assert any(title.value == "Page overlays" for title in at.title)
    assert at.selectbox(key="page").value == page_id
    assert at.selectbox(key="highlight").value == "Title|Section-header" and at.query_params["cell"] == "Title|Section-header"
    overlay = _charts(at)[0]
    assert overlay["layout"]["annotations"][0]["text"] == "reference"
    assert len(overlay["layout"]["images"]) == 2  # the page image under both panes


def test_reduced_view_in_the_url_lists_pages_of_a_reduced_cell():
    at = _app(view="reduced", cell="Foreground|Background", model="B")
    _no_exception(at)
    assert at.radio(key="view").value == "reduced" and at.radio(key="model").value == "B"
    assert len(_page_table(at)) > 0
    assert _charts(at)[0]["layout"]["yaxis"]["ticktext"] == ["Background", "Foreground"]


def test_overlays_navigator_agreement_and_model_b(demo_evaluation):
    at = _app()
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    first = at.selectbox(key="page").value
    assert first == demo_evaluation.page_ids[0]
    at.button[1].click().run()  # Next
    assert at.selectbox(key="page").value == demo_evaluation.page_ids[1]
    at.selectbox(key="order").set_value("worst").run()
    worst = min(demo_evaluation.page_foreground_scores(), key=lambda row: row["f1"])["page"]
    assert at.selectbox(key="page").options[0].startswith(worst)
    at.toggle(key="agree").set_value(True).run()
    at.radio(key="model").set_value("B").run()
    _no_exception(at)
    overlay = _charts(at)[0]
    assert [a["text"] for a in overlay["layout"]["annotations"]] == ["reference", "model B (simulated)", "agreement"]
    assert at.query_params["agree"] == "1" and at.query_params["model"] == "B"


def test_compare_page_explains_why_it_compares_reduced_matrices():
    at = _app()
    at.switch_page("app_pages/compare.py").run()
    _no_exception(at)
    assert [tab.label for tab in at.tabs] == ["Both against the reference", "Model B against model A"]
    assert any("cannot be subtracted cell by cell" in caption.value for caption in at.caption)
    titles = [chart["layout"].get("title", {}).get("text") for chart in _charts(at)]
    assert "B − A, recall (reduced 2x2)" in titles and "B − A, precision (reduced 2x2)" in titles
    assert "recall (zero-trimmed), B against A" in titles
    three_panes = [chart for chart in _charts(at) if len(chart["layout"].get("annotations", [])) == 3]
    assert [a["text"] for a in three_panes[0]["layout"]["annotations"]] == ["reference", "model A (simulated)", "model B (simulated)"]


def test_compare_page_lists_the_pages_where_b_differs_most(demo_evaluation):
    at = _app()
    at.switch_page("app_pages/compare.py").run()
    table = next(frame.value for frame in at.dataframe if "B − A" in frame.value.columns)
    assert table["B − A"].is_monotonic_increasing and len(table) == 20
    evaluation_b = evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_b.json"))
    f1_a = {row["page"]: row["f1"] for row in demo_evaluation.page_foreground_scores()}
    f1_b = {row["page"]: row["f1"] for row in evaluation_b.page_foreground_scores()}
    worst = min(f1_a, key=lambda page: (f1_b[page] - f1_a[page]))
    assert table["page"].iloc[0] == worst


def test_matrix_csv_has_classes_on_both_axes(demo_evaluation):
    table = pd.read_csv(io.StringIO(matrix_csv(demo_evaluation.matrices.trimmed, "recall")), index_col=0)
    assert table.index.tolist() == demo_evaluation.matrices.trimmed.rows
    assert table.columns.tolist() == demo_evaluation.matrices.trimmed.columns
    assert np.allclose(table.to_numpy(), demo_evaluation.matrices.trimmed.recall)


def test_compare_page_with_one_model_asks_for_a_second(tmp_path):
    at = _app(src="path", ref=str(DEMO / "reference.json"), a=str(DEMO / "model_a.json"))
    at.switch_page("app_pages/compare.py").run()
    _no_exception(at)
    assert any("Choose two predictions" in info.value for info in at.info)


def test_a_broken_upload_shows_the_engine_error():
    at = _app(src="upload")
    at.file_uploader(key="upload_ref_0").set_value(("reference.json", b'{"pages": [{"id": "p1", "width": 10}]}', "application/json")).run()
    at.file_uploader(key="upload_a_0").set_value(("model.json", (DEMO / "model_a.json").read_bytes(), "application/json")).run()
    _no_exception(at)
    messages = [error.value for error in at.error]
    expected = plain_for_markdown("file reference.json, page 'p1': missing key 'height'")  # not the private folder's path
    assert any(expected in message for message in messages), messages
    at.switch_page("app_pages/overlays.py").run()  # the uploads survive a page switch
    assert any(expected in error.value for error in at.error)
    next(button for button in at.sidebar.button if button.label == "Forget the uploaded files").click().run()
    assert not at.error and any("Choose a reference" in info.value for info in at.info)


@pytest.fixture
def whole_disk_as_data_root(monkeypatch):
    """These tests mix files in the repository and in a temporary folder."""
    monkeypatch.setenv(DATA_ROOT_VARIABLE, "/")


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
    assert "Title" not in _charts(at)[0]["layout"]["yaxis"]["ticktext"]


def test_pages_without_a_drawable_image_get_a_placeholder(tmp_path, whole_disk_as_data_root):
    pages = [{"id": "no-image", "width": 100, "height": 50, "boxes": [{"label": "Text", "bbox": [10, 10, 60, 30]}]},
             {"id": "lost-pdf", "width": 100, "height": 50, "pdf": "missing.pdf", "page_no": 0, "boxes": []}]
    (tmp_path / "reference.json").write_text(json.dumps({"name": "gt", "pages": pages}), encoding="utf-8")
    (tmp_path / "model.json").write_text(json.dumps({"name": "m", "pages": pages}), encoding="utf-8")
    at = _app(src="path", ref=str(tmp_path / "reference.json"), a=str(tmp_path / "model.json"))
    at.query_params["page"] = "lost-pdf"  # as a link to /overlays?page=lost-pdf would carry it
    at.switch_page("app_pages/overlays.py").run()
    _no_exception(at)
    assert at.selectbox(key="page").value == "lost-pdf"
    assert _charts(at)[0]["layout"]["images"][0]["source"].startswith("data:image/png;base64,")  # the placeholder
    at.selectbox(key="page").set_value("no-image").run()
    _no_exception(at)
    assert _charts(at)[0]["layout"]["images"][0]["source"].startswith("data:image/png;base64,")
