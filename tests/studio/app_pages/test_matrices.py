"""The Matrices page (app_pages/matrices.py) on the embedded demo, through AppTest: the heatmap and
its normalisations, a cell's pages, a per-class bar's pages, class subsets and views. Expected
numbers come from the engine directly."""

from __future__ import annotations

import numpy as np

from tests.helpers import ranked_pages
from tests.studio.helpers import (
    _app,
    _axes,
    _bar_charts,
    _bars,
    _cells,
    _heatmaps,
    _image_source,
    _no_exception,
    _page_charts,
    _page_table,
    _pane_titles,
    _popovers,
    open_page,
)
from tore_engine.results.drilldown import class_pages
from tore_engine.results.evaluation import shown_matrices


def test_matrices_page_renders_the_demo_and_says_models_are_simulated():
    at = _app()
    _no_exception(at)
    assert any("simulated" in caption.value for caption in at.caption)
    heatmap = _heatmaps(at)[0]
    assert _axes(heatmap)[0][:2] == ["Background", "Caption"]
    assert heatmap["data"][0]["type"] == "heatmap" and {trace["type"] for trace in heatmap["data"][1:]} == {"scatter"}  # cells, click
    assert heatmap["data"][0]["texttemplate"] == "%{text}" and heatmap["layout"]["shapes"][0]["type"] == "path"  # numbers, diagonal
    assert ("Text", "f1") in _bars(_bar_charts(at)[0])  # per-class scores
    assert any("Unweighted means over the 11 classes" in caption.value for caption in at.caption)
    assert at.query_params["src"] == "demo"
    assert not [frame for frame in at.dataframe if "row % (recall)" in frame.value.columns]  # drawn once its section is opened
    at = _app(largest_open="1")
    largest = next(frame.value for frame in at.dataframe if "row % (recall)" in frame.value.columns)
    assert largest.columns[:3].tolist() == ["reference", "prediction", "pixels"]
    assert (largest["reference"] != largest["prediction"]).all()
    assert largest["pixels"].is_monotonic_decreasing


def test_choosing_a_cell_with_the_selectboxes_lists_its_pages(demo_evaluation):
    at = _app()
    assert _popovers(at)["Choose a cell by name"] == ["cell_ref", "cell_pred"]  # mounted by the browser only once opened
    at.selectbox(key="cell_ref").set_value("Title").run()
    at.selectbox(key="cell_pred").set_value("Section-header").run()
    _no_exception(at)
    expected = ranked_pages(demo_evaluation, "full", "Title", "Section-header")
    assert expected, "the demo's model A confuses some titles with section headers"
    table = _page_table(at)
    assert table["page"].tolist() == [page for page, _, _ in expected]
    assert table["contribution (pixels)"].tolist() == [value for _, value, _ in expected]
    counts = demo_evaluation.pages.loc[table["page"], ["tp", "fp", "fn", "Cls", "Loc", "Both", "Dupe", "Bkg", "Miss"]]
    assert table[counts.columns].to_numpy().tolist() == counts.to_numpy().tolist()  # each page's box counts (pages.csv's)
    assert any(f"Contributing pages: {len(expected)}" in markdown.value for markdown in at.markdown)
    assert at.query_params["cell"] == "Title|Section-header"
    assert "Choose a cell by name: Title → Section-header" in _popovers(at)  # its button names the cell chosen


def test_open_in_overlays_switches_to_that_page_with_the_cell():
    at = _app(cell="Title|Section-header")
    page_id = at.selectbox(key="open-A-full-Title-Section-header").value
    at.button(key="open-button-A-full-Title-Section-header-A").click().run()
    _no_exception(at)
    assert any(title.value == "Page overlays" for title in at.title)
    assert at.session_state["page"] == page_id
    assert at.selectbox(key="highlight").value == "Title|Section-header" and at.query_params["cell"] == "Title|Section-header"
    overlay = _page_charts(at)[0]
    assert _pane_titles(overlay)[0] == "reference (ground-truth)" and len(_pane_titles(overlay)) == 2
    assert _image_source(overlay).startswith("data:image/")  # the page image, under both panes


def test_reduced_view_in_the_url_lists_pages_of_a_reduced_cell(demo_b):
    at = _app(view="reduced", cell="Foreground|Background", model="B")
    _no_exception(at)
    assert at.radio(key="view").value == "reduced" and at.radio(key="model").value == "B"
    missed = {page: float(demo_b.page_reduced[k, 1, 0]) for k, page in enumerate(demo_b.page_ids) if demo_b.page_reduced[k, 1, 0]}
    table = _page_table(at)  # every page with Foreground pixels that model B calls Background, most first
    assert len(missed) > 1 and dict(zip(table["page"], table["contribution (pixels)"])) == missed
    assert table["contribution (pixels)"].is_monotonic_decreasing and len(table) == len(missed)
    assert _axes(_heatmaps(at)[0]) == (["Background", "Foreground"], ["Background", "Foreground"])


def test_normalisation_all_is_each_cell_over_the_total_and_hidden_cells_have_no_number(demo):
    _, _, evaluation = demo
    at = _app(metric="share", hide="1")
    _no_exception(at)
    heatmap = _heatmaps(at)[0]
    expected = shown_matrices(evaluation.matrices, "full").share
    diagonal = np.eye(len(expected), dtype=bool)
    z, text = _cells(heatmap, "colour"), _cells(heatmap, "text")
    shown = ~diagonal & (expected != 0)
    assert np.allclose(z[shown], expected[shown]) and np.isnan(z[~shown]).all()  # hidden and exact zeros: blank
    assert np.allclose(_cells(heatmap), expected)  # the hover still has every cell's share
    assert all(text[k, k] == "" for k in range(len(expected)))  # hidden: no number either
    assert all(text[i, j] == "" for i, j in zip(*np.nonzero(expected == 0)))  # never "0.0%"
    assert text[0, 1] == f"{expected[0, 1]:.1%}"


def test_a_class_subset_and_hiding_background_keep_the_values(demo):
    _, _, evaluation = demo
    at = _app()
    at.multiselect(key="classes").set_value(["Text", "Table", "Title"]).run()
    at.toggle(key="nobg").set_value(True).run()
    _no_exception(at)
    heatmap = _heatmaps(at)[0]
    assert _axes(heatmap) == (["Table", "Text", "Title"], ["Table", "Text", "Title"])
    full = evaluation.matrices.full
    rows = [full.rows.index(name) for name in ("Table", "Text", "Title")]
    assert np.allclose(_cells(heatmap), full.recall[np.ix_(rows, rows)])
    open_page(at, "compare").run()  # the subset is kept across pages
    assert at.multiselect(key="classes").value == ["Text", "Table", "Title"]


def test_the_display_controls_sit_in_a_popover_whose_button_names_their_values():
    """A new tab mounts the Display button, not its six widgets; the button says what they are set to."""
    at = _app(scale="log", hide="1", classes=["Text", "Table"])
    _no_exception(at)
    assert _popovers(at)["Display: full matrix, row (recall), log colour scale, diagonal hidden, 2 of 11 classes"] == [
        "view", "metric", "scale", "hide", "nobg", "classes"]
    at.toggle(key="nobg").set_value(True).run()
    at.multiselect(key="classes").set_value([]).run()
    assert "Display: full matrix, row (recall), log colour scale, diagonal hidden, Background hidden, all 11 classes" in _popovers(at)
    at.radio(key="view").set_value("reduced").run()  # the reduced view has no diagonal to hide: not said
    assert "Display: reduced 2x2 matrix, row (recall), log colour scale, Background hidden, all 11 classes" in _popovers(at)
    assert at.query_params["scale"] == "log" and at.query_params["nobg"] == "1"


def test_the_classes_to_show_are_in_the_url_and_the_per_class_chart_follows_them(demo):
    _, _, evaluation = demo
    at = _app(classes=["Text", "Table", "No such class"])
    _no_exception(at)
    assert at.multiselect(key="classes").value == ["Text", "Table"]
    assert any("`classes` (not one of the choices)" in warning.value for warning in at.warning)
    bars = _bar_charts(at)[0]
    assert [name for name, series in _bars(bars) if series == "recall"] == ["Table", "Text"]  # in the matrix's class order
    per_class = evaluation.matrices.per_class
    f1 = (per_class["Table"]["f1"] + per_class["Text"]["f1"]) / 2
    assert any("means over the 2 classes shown chosen in Classes to show" in caption.value and f"F1 {f1:.3f}" in caption.value
               for caption in at.caption)
    at.multiselect(key="classes").set_value(["Title"]).run()
    assert at.query_params["classes"] == "Title"
    at.multiselect(key="classes").set_value(["Title", "Text"]).run()
    assert at.query_params["classes"] == ["Title", "Text"]  # a repeated parameter


def test_a_reduced_view_given_by_a_link_stays_reduced_on_compare_and_for_a_dual_model():
    """As a click on it does (below): the link's view was kept only in its own taxonomy mode."""
    at = _app(view="reduced")
    assert at.radio(key="view").value == "reduced"
    open_page(at, "compare").run()
    assert at.radio(key="view").value == "reduced"
    open_page(at, "matrices").run()
    at.radio(key="model").set_value("B").run()
    assert at.radio(key="view").value == "reduced"


def test_a_dual_model_opens_on_the_trimmed_view_and_a_reduced_view_stays_reduced():
    at = _app()
    assert at.radio(key="view").value == "full"
    at.radio(key="model").set_value("B").run()
    assert at.radio(key="view").value == "trimmed"  # not the full 18 x 18 with its empty quadrants
    at.radio(key="view").set_value("reduced").run()
    at.radio(key="model").set_value("A").run()
    assert at.radio(key="view").value == "reduced"  # the same view in both modes: kept
    open_page(at, "compare").run()
    assert at.radio(key="view").value == "reduced"  # and on Compare (issue 24)
    open_page(at, "matrices").run()
    at.radio(key="view").set_value("full").run()
    at.radio(key="model").set_value("B").run()
    assert at.radio(key="view").value == "reduced"  # the full matrix of a dual model is not kept: its own last view is


def test_a_per_class_bar_lists_the_pages_of_its_class(demo):
    _, _, evaluation = demo
    at = _app()
    at.session_state["bar-class-A"] = "Title"  # as a click on a Title bar does
    at.run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "right pixels" in frame.value.columns)
    assert table["page"].tolist() == [page for page, *_ in class_pages(evaluation, "Title")]


def test_a_matrix_beyond_what_a_screen_shows_is_drawn_on_its_largest_classes_with_a_note(tmp_path, monkeypatch):
    """Issue 42 C2: 2,047 classes sent a 470 MB heatmap (Streamlit's MessageSizeError); a matrix of
    more than 100 classes now draws the 100 with the most pixels, says so, and its bars 60 classes."""
    import json

    from tore_engine.api import evaluate
    from tore_engine.studio.data_root import DATA_ROOT_VARIABLE
    from tore_engine.studio.panels import MAX_SHOWN_CLASSES

    count = 130

    def layout(name, shift):
        boxes = [{"label": f"class {(k + shift) % count:03d}", "bbox": [k % 13 * 10, k // 13 * 10, k % 13 * 10 + 2 + k % 7, k // 13 * 10 + 8]}
                 for k in range(count)]
        return {"name": name, "pages": [{"id": "p1", "width": 140, "height": 110, "boxes": boxes}]}

    (tmp_path / "ref.json").write_text(json.dumps(layout("gt", 0)), encoding="utf-8")
    (tmp_path / "pred.json").write_text(json.dumps(layout("model", 1)), encoding="utf-8")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(src="path", ref="ref.json", a="pred.json", tax="single", metric="confusion")
    _no_exception(at)
    heatmap = _heatmaps(at)[0]
    rows, columns = _axes(heatmap)
    assert len(rows) == len(columns) == MAX_SHOWN_CLASSES
    whole = evaluate(tmp_path / "ref.json", tmp_path / "pred.json", taxonomy="single").matrices.full  # the engine's, every class
    totals = {name: whole.confusion[k].sum() + whole.confusion[:, k].sum() for k, name in enumerate(whole.rows)}
    assert min(totals[name] for name in rows) >= max(value for name, value in totals.items() if name not in rows)  # the largest kept
    assert heatmap["layout"]["title"]["text"].count(f"{count + 1:,} classes: the {MAX_SHOWN_CLASSES} with the most pixels drawn") == 1
    assert len(_bar_charts(at)[0]["layout"]["meta"]["classes"]) == 60


def test_where_ap_goes_draws_the_six_daps_and_lists_a_types_pages(demo_a):
    """The dAP bars are report.json's `errors` (the engine's); a chosen type lists its pages, the most
    such boxes first, as each page's counts say."""
    from tests.studio.helpers import _of_kind
    from tore_engine.studio.error_views import pages_with_error
    from tore_engine.studio.state import ERROR_TYPE

    at = _app()
    _no_exception(at)
    assert not any(spec["layout"]["meta"]["classes"] == list(demo_a.errors["dap"]) for spec in _of_kind(at, "bars"))  # drawn on opening
    at = _app(errors_open="1")
    _no_exception(at)
    errors = demo_a.errors
    figure = next(spec for spec in _of_kind(at, "bars") if spec["layout"]["meta"]["classes"] == list(errors["dap"]))
    assert figure["data"][0]["y"] == list(errors["dap"].values())
    at.session_state[ERROR_TYPE] = "Cls"
    at.run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "Cls" in frame.value.columns)
    expected = pages_with_error(demo_a, "Cls")
    assert table["page"].tolist() == expected["page"].tolist() and len(expected) > 1
    counts = demo_a.pages["Cls"]
    assert expected["Cls"].tolist() == sorted(counts[counts > 0].tolist(), reverse=True)
    assert sum(expected["Cls"]) == errors["counts"]["Cls"]
