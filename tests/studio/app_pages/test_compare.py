"""The Compare page (app_pages/compare.py) on the embedded demo, through AppTest: which view the two
models share, the pages where B differs most, a difference or an outcome bar's pages opening each
model on its own cell. Expected numbers come from the engine directly."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.helpers import DEMO
from tests.studio.helpers import APP, _app, _figures, _no_exception, _page_charts, _pane_titles, _spotlight, _title, open_page
from tore_engine.api import load_pair
from tore_engine.results.comparison import compare, outcome_cell
from tore_engine.run.runner import evaluate_dataset
from tore_engine.studio.compare_panels import Target
from tore_engine.studio.state import COMPARE_TARGET as TARGET
from tore_engine.studio.state import DIFFERENCE_TAB


def test_compare_page_explains_why_it_compares_reduced_matrices():
    at = _app()
    open_page(at, "compare").run()
    _no_exception(at)
    assert [tab.label for tab in at.tabs] == ["Both against the reference", "B read against A"]
    assert any("cannot be subtracted cell by cell" in caption.value for caption in at.caption)
    titles = _titles(at)
    assert "B − A, recall (reduced 2x2)" in titles and "B − A, precision (reduced 2x2)" in titles
    assert "recall (zero-trimmed), B against A" not in titles  # only the open tab runs
    three_panes = [chart for chart in _page_charts(at) if len(_pane_titles(chart)) == 3]
    assert _pane_titles(three_panes[0]) == [
        "reference (ground-truth)", "A: model A (model-a, simulated)", "B: model B (model-b, simulated)"]


def _titles(at: AppTest) -> list[str]:
    """The titles of the page's matrices and bar charts, in page order."""
    return [_title(spec) for spec in _figures(at) if spec["layout"]["meta"]["chart"] != "page"]


def _compare(**query: str) -> AppTest:
    """The Compare page opened by a link with these parameters."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return open_page(at, "compare").run()


def test_the_open_tab_is_in_the_url_and_only_it_runs():
    at = _compare(cmp="pair")
    _no_exception(at)
    titles = _titles(at)
    assert "recall (zero-trimmed), B against A" in titles and "B − A, recall (reduced 2x2)" not in titles
    assert at.query_params["cmp"] == "pair"


def test_any_two_models_are_compared(tmp_path, whole_disk_as_data_root):
    """Three models: C against A, chosen in the pickers (and in the URL)."""
    at = _compare(src="path", ref=str(DEMO / "reference.json"), a=str(DEMO / "model_a.json"), b=str(DEMO / "model_b.json"),
                  c=str(DEMO / "model_a.json"), models="3", cmp_b="C")
    _no_exception(at)
    assert (at.selectbox(key="cmp_a").value, at.selectbox(key="cmp_b").value) == ("A", "C")
    titles = _titles(at)
    assert titles[:2] == ["row (recall), full, single taxonomy: model A (model-a)", "row (recall), full, single taxonomy: model C (model-a)"]
    assert "B − A, recall (full)" in titles  # the same classes: subtracted cell by cell
    assert at.query_params["cmp_b"] == "C"


def test_b_read_against_a_names_each_model_whatever_its_name_says(tmp_path, whole_disk_as_data_root):
    """The page drawn for a cell of B against A titles its panes with each model's own name, even a
    name with " against " in it (it was cut out of the pair's title)."""
    paths = {}
    for model, name in (("a", "left against right"), ("b", "checkpoint 2 against 1")):
        layout = json.loads((DEMO / f"model_{model}.json").read_text(encoding="utf-8")) | {"name": name}
        paths[model] = tmp_path / f"{model}.json"
        paths[model].write_text(json.dumps(layout), encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in {"src": "path", "ref": str(DEMO / "reference.json"), "a": str(paths["a"]), "b": str(paths["b"]), "cmp": "pair"}.items():
        at.query_params[key] = value
    open_page(at, "compare").run()
    at.session_state["_pair_cell"] = ("left against right_Text", "checkpoint 2 against 1_text")  # dual: each side prefixed by its name
    at.run()
    _no_exception(at)
    panes = [chart for chart in _page_charts(at) if len(_pane_titles(chart)) == 2]
    assert _pane_titles(panes[0]) == [
        "A: model A (left against right)", "B: model B (checkpoint 2 against 1)"]


def test_compare_page_lists_the_pages_where_b_differs_most(demo_evaluation):
    at = _app()
    open_page(at, "compare").run()
    table = next(frame.value for frame in at.dataframe if "B − A" in frame.value.columns)
    assert table["B − A"].is_monotonic_increasing and len(table) == 20
    evaluation_b = evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_b.json"))
    f1_a = demo_evaluation.pages["foreground_f1"].to_dict()
    f1_b = evaluation_b.pages["foreground_f1"].to_dict()
    worst = min(f1_a, key=lambda page: (f1_b[page] - f1_a[page]))
    assert table["page"].iloc[0] == worst


def test_compare_page_with_one_model_asks_for_a_second(tmp_path):
    at = _app(src="path", ref=str(DEMO / "reference.json"), a=str(DEMO / "model_a.json"))
    open_page(at, "compare").run()
    _no_exception(at)
    assert any("Choose two predictions" in info.value for info in at.info)


def test_compare_targets_list_their_pages_and_open_each_model_on_its_own_cell(demo, demo_b):
    _, _, evaluation = demo
    at = _app()
    open_page(at, "compare").run()
    at.session_state[TARGET] = Target("full", "Text", outcome="Background")  # as a click on the Text / Background bar does
    at.run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "B − A" in frame.value.columns and "A" in frame.value.columns)
    expected = compare(evaluation, demo_b).pages_for_outcome("Text", "Background")
    assert table["page"].tolist() == expected["page"].tolist() and table["A"].tolist() == expected["pixels_a"].tolist()
    page = table["page"].iloc[0]
    at.button(key="open-button-target-Text: Background-B").click().run()
    _no_exception(at)
    b_cell = outcome_cell(demo_b, "Text", "Background")
    assert at.radio(key="model").value == "B" and at.session_state["page"] == page
    assert at.query_params["cell"] == f"{b_cell[0]}|{b_cell[1]}"  # B's own row name for reference Text
    overlay = _page_charts(at)[0]
    assert [row["pane"] for row in _spotlight(overlay)] == [0, 1]  # the Overlays page: the reference and B, on B's cell


def test_compare_names_each_model_in_its_own_matrix_and_labels_the_difference():
    at = _app()
    open_page(at, "compare").run()
    titles = _titles(at)
    assert titles[:2] == ["row (recall), zero-trimmed, single taxonomy: model A (model-a, simulated)",
                          "row (recall), zero-trimmed, dual taxonomy: model B (model-b, simulated)"]
    assert "B − A per reference class" in titles
    assert at.radio(key="view").value == "trimmed"  # a dual model is compared: the trimmed view


def test_a_model_compared_with_itself_is_said_in_words():
    """Issue 42 C5: both pickers on one model (and the link /compare?src=demo&cmp_b=A) crashed with
    StreamlitDuplicateElementKey; now a message says so and the pickers stay to choose another."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["cmp_b"] = "A"
    open_page(at, "compare").run()
    _no_exception(at)
    assert any("A and B are both model A" in info.value for info in at.info) and not at.error
    assert at.selectbox(key="cmp_b").value == "A"
    at.selectbox(key="cmp_b").set_value("B").run()
    _no_exception(at)
    assert not any("are both" in info.value for info in at.info) and _figures(at)


def test_the_error_types_of_a_and_b_sit_side_by_side(whole_disk_as_data_root):
    """TIDE's counts and dAPs of both models, as `Comparison.errors` gives them (model A against itself
    at a minimum score: both in single taxonomy)."""
    at = _compare(src="path", ref=str(DEMO / "reference.json"), a=str(DEMO / "model_a.json"), b=str(DEMO / "model_b.json"),
                  c=str(DEMO / "model_a.json"), models="3", cmp_b="C")
    _no_exception(at)
    expected = compare(*[evaluate_dataset(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"))] * 2).errors
    table = next(frame.value for frame in at.dataframe if "count A" in frame.value.columns)
    assert table["error"].tolist() == expected.index.tolist()
    assert table["count A"].tolist()[:6] == expected["count_a"].tolist()[:6] == table["count B"].tolist()[:6]
    assert table["dAP A"].tolist() == expected["dap_a"].tolist()


def test_a_wide_difference_draws_only_its_open_tab(whole_disk_as_data_root):
    """Recall and precision of a difference too wide for half the page sit in tabs: only the open
    one is drawn (a hidden tab's chart cost the browser as much as a shown one)."""
    at = _compare(src="path", ref=str(DEMO / "reference.json"), a=str(DEMO / "model_a.json"), b=str(DEMO / "model_b.json"),
                  c=str(DEMO / "model_a.json"), models="3", cmp_b="C")
    _no_exception(at)
    assert _differences(at) == ["B − A, recall (full)"]
    at.session_state[DIFFERENCE_TAB] = "precision"
    at.run()
    _no_exception(at)
    assert _differences(at) == ["B − A, precision (full)"]


def _differences(at: AppTest) -> list[str]:
    """The titles of B − A's heatmaps drawn on the page."""
    return [title for title in _titles(at) if title.startswith("B − A, ") and title != "B − A per reference class"]
