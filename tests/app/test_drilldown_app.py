"""From a matrix cell to the pixels behind it, and the views users expect (issue 15), through
AppTest on the demo. Expected numbers come from the engine directly."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from tests.app.test_pages import APP, DEMO, _app, _charts, _no_exception

from tore_engine.comparison import compare, outcome_cell
from tore_engine.dataset import evaluate_dataset
from tore_engine.drilldown import class_pages, page_class_pixels, page_regions, pages_for_view_cell, shown_matrices
from tore_engine.formats import load_pair
from tore_engine.studio.compare_panels import TARGET, Target
from tore_engine.studio.page_figures import SHARE_LEVELS
from tore_engine.studio.plain_text import percent, pixels

CELL = ("Text", "Table")


@pytest.fixture(scope="module")
def demo():
    reference, model_a = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    return reference, model_a, evaluate_dataset(reference, model_a)


@pytest.fixture(scope="module")
def demo_b():
    return evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_b.json"))


def _metric(at, label: str) -> str:
    return next(metric.value for metric in at.metric if metric.label.startswith(label))


def _spotlight(chart: dict) -> list[dict]:
    return [trace for trace in chart["data"] if trace["type"] == "heatmap"]


def _array(value) -> np.ndarray:
    """A figure array as AppTest gives it: a list, or a typed array {"dtype", "bdata", "shape"}."""
    if not isinstance(value, dict):
        return np.array(value, dtype=float)
    shape = [int(side) for side in str(value.get("shape", "-1")).split(",")]
    return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape).astype(float)


def _overlays(**query: str):
    """The Overlays page opened by a link with these parameters."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page("app_pages/overlays.py")
    return at.run()


def test_the_worst_page_of_a_cell_opens_with_its_pixels_lit_and_its_contribution(demo):
    reference, model_a, evaluation = demo
    worst, value, share = pages_for_view_cell(evaluation, "full", *CELL)[0]
    at = _app(cell="Text|Table")
    assert at.selectbox(key="open-A-full-Text-Table").value == worst
    at.button(key="open-button-A-full-Text-Table-A").click().run()
    _no_exception(at)
    assert at.selectbox(key="page").value == worst and at.query_params["cell"] == "Text|Table"
    classes = evaluation.matrices.classes
    engine = evaluation.page_matrix(evaluation.page_ids.index(worst))[classes.index("Text"), classes.index("Table")]
    assert engine == value == 31410.0  # the demo's worst page for reference Text predicted as Table
    assert _metric(at, "Text → Table on this page") == f"{pixels(engine)} px" == "31,410 px"
    assert _metric(at, "Share of the cell") == percent(share) == "14.4%"
    regions = page_regions(reference.pages[reference.page_ids().index(worst)], model_a.pages[model_a.page_ids().index(worst)],
                           evaluation.taxonomy, "full", *CELL)
    assert regions.contribution() == engine
    overlay = _charts(at)[0]
    lit = _spotlight(overlay)
    assert [trace["name"] for trace in lit] == ["Text → Table", "Text → Table"]  # the reference pane and the prediction pane
    z, xs, ys = _array(lit[0]["z"]), _array(lit[0]["x"]), _array(lit[0]["y"])
    areas = np.diff(ys)[:, None] * np.diff(xs)[None, :]
    assert (areas * z / SHARE_LEVELS).sum() == pytest.approx(float(regions.contribution()))  # exactly the cell's pixels are lit
    outlined = [trace for trace in overlay["data"] if trace.get("name") == "boxes behind Text → Table"]
    assert len(outlined) == 2 and outlined[0]["line"]["width"] == 3


def test_a_reduced_cell_highlights_the_reduced_pixels(demo):
    _, _, evaluation = demo
    page = evaluation.page_ids[3]
    at = _overlays(view="reduced", cell="Foreground|Background", page=page)
    _no_exception(at)
    assert at.radio(key="view").value == "reduced" and at.selectbox(key="highlight").value == "Foreground|Background"
    missed = int(evaluation.page_reduced[3, 1, 0])
    assert _metric(at, "Foreground → Background on this page") == f"{missed:,} px"
    options = at.selectbox(key="highlight").options
    assert options[0] == "(no cell)" and all("→" in option for option in options[1:])


def test_the_highlight_picker_lists_the_pages_cells_and_chooses_one(demo):
    _, _, evaluation = demo
    at = _overlays(page="paper-b/p8")
    assert not _spotlight(_charts(at)[0])
    at.selectbox(key="highlight").set_value("Text|Table").run()
    _no_exception(at)
    assert at.query_params["cell"] == "Text|Table" and len(_spotlight(_charts(at)[0])) == 2
    at.selectbox(key="order").set_value("cell").run()
    ranked = [page for page, *_ in pages_for_view_cell(evaluation, "full", *CELL)]
    assert [option.split("   ")[0] for option in at.selectbox(key="page").options][: len(ranked)] == ranked


def test_normalisation_all_is_each_cell_over_the_total_and_hidden_cells_have_no_number(demo):
    _, _, evaluation = demo
    at = _app(metric="share", hide="1")
    _no_exception(at)
    heatmap = _charts(at)[0]["data"][0]
    expected = shown_matrices(evaluation.matrices, "full").share
    diagonal = np.eye(len(expected), dtype=bool)
    z = _array(heatmap["z"])
    assert np.allclose(z[~diagonal], expected[~diagonal]) and np.isnan(z[diagonal]).all()
    assert all(heatmap["text"][k][k] == "" for k in range(len(expected)))  # hidden: no number either
    assert heatmap["text"][0][1] == f"{expected[0, 1]:.1%}"


def test_a_class_subset_and_hiding_background_keep_the_values(demo):
    _, _, evaluation = demo
    at = _app()
    at.multiselect(key="classes").set_value(["Text", "Table", "Title"]).run()
    at.toggle(key="nobg").set_value(True).run()
    _no_exception(at)
    heatmap = _charts(at)[0]
    assert heatmap["layout"]["yaxis"]["ticktext"] == heatmap["layout"]["xaxis"]["ticktext"] == ["Table", "Text", "Title"]
    full = evaluation.matrices.full
    rows = [full.rows.index(name) for name in ("Table", "Text", "Title")]
    assert np.allclose(_array(heatmap["data"][0]["z"]), full.recall[np.ix_(rows, rows)])
    at.switch_page("app_pages/compare.py").run()  # the subset is kept across pages
    assert at.multiselect(key="classes").value == ["Text", "Table", "Title"]


def test_a_dual_model_opens_on_the_trimmed_view_and_each_mode_keeps_its_own():
    at = _app()
    assert at.radio(key="view").value == "full"
    at.radio(key="model").set_value("B").run()
    assert at.radio(key="view").value == "trimmed"  # not the full 18 x 18 with its empty quadrants
    at.radio(key="view").set_value("reduced").run()
    at.radio(key="model").set_value("A").run()
    assert at.radio(key="view").value == "full"
    at.radio(key="model").set_value("B").run()
    assert at.radio(key="view").value == "reduced"


def test_values_keep_their_choice_on_every_page():
    at = _app()
    assert at.radio(key="metric").value == "recall"
    at.switch_page("app_pages/compare.py").run()
    assert at.radio(key="metric").value == "recall"
    at.radio(key="metric").set_value("precision").run()
    at.switch_page("app_pages/matrices.py").run()
    assert at.radio(key="metric").value == "precision" and at.query_params["metric"] == "precision"


def test_the_all_pages_table_holds_each_pages_class_pixels_and_filters(demo):
    _, _, evaluation = demo
    at = _app()
    table = next(frame.value for frame in at.dataframe if "Text (ref)" in frame.value.columns)
    reference, predicted = page_class_pixels(evaluation)
    classes = evaluation.matrices.classes
    assert table["page"].tolist() == evaluation.page_ids
    assert np.allclose(table["Table (pred)"], predicted[:, classes.index("Table")])
    assert np.allclose(table["Text (ref)"], reference[:, classes.index("Text")])
    assert table["foreground F1"].tolist() == [row["f1"] for row in evaluation.page_foreground_scores()]
    at.text_input(key="pages_filter").set_value("paper-b").run()
    at.multiselect(key="pages_classes").set_value(["Formula"]).run()
    shown = next(frame.value for frame in at.dataframe if "Text (ref)" in frame.value.columns)
    formula = (reference[:, classes.index("Formula")] > 0) | (predicted[:, classes.index("Formula")] > 0)
    assert shown["page"].tolist() == [page for page, has in zip(evaluation.page_ids, formula) if has and "paper-b" in page]
    at.selectbox(key="open-all-A").set_value(shown["page"].iloc[-1]).run()
    at.button(key="open-button-all-A-A").click().run()
    assert at.selectbox(key="page").value == shown["page"].iloc[-1]


def test_a_per_class_bar_lists_the_pages_of_its_class(demo):
    _, _, evaluation = demo
    at = _app()
    at.session_state["bar-class-A"] = "Title"  # as a click on a Title bar does
    at.run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "right pixels" in frame.value.columns)
    assert table["page"].tolist() == [page for page, *_ in class_pages(evaluation, "Title")]


def test_compare_targets_list_their_pages_and_open_each_model_on_its_own_cell(demo, demo_b):
    _, _, evaluation = demo
    at = _app()
    at.switch_page("app_pages/compare.py").run()
    at.session_state[TARGET] = Target("full", "Text", outcome="Background")  # as a click on the Text / Background bar does
    at.run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "B − A" in frame.value.columns and "A" in frame.value.columns)
    expected = compare(evaluation, demo_b).outcome_pages("Text", "Background")
    assert table["page"].tolist() == [row["page"] for row in expected] and table["A"].tolist() == [row["A"] for row in expected]
    page = table["page"].iloc[0]
    at.button(key="open-button-target-Text: Background-B").click().run()
    _no_exception(at)
    b_cell = outcome_cell(demo_b, "Text", "Background")
    assert at.radio(key="model").value == "B" and at.selectbox(key="page").value == page
    assert at.query_params["cell"] == f"{b_cell[0]}|{b_cell[1]}"  # B's own row name for reference Text
    assert [trace["name"] for trace in _spotlight(_charts(at)[0])] == [f"{b_cell[0]} → {b_cell[1]}"] * 2


def test_compare_names_each_model_in_its_own_matrix_and_labels_the_difference():
    at = _app()
    at.switch_page("app_pages/compare.py").run()
    titles = [chart["layout"]["title"]["text"] for chart in _charts(at) if chart["layout"].get("title")]
    assert titles[:2] == ["row (recall), zero-trimmed, single taxonomy: model A (simulated)",
                          "row (recall), zero-trimmed, dual taxonomy: model B (simulated)"]
    assert "B − A per reference class" in titles
    assert at.radio(key="view").value == "trimmed"  # a dual model is compared: the trimmed view
