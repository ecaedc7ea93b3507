"""The Overlays page (app_pages/overlays.py) on the embedded demo, through AppTest: the navigator, the
agreement view, a cell's pixels lit with its contribution, the highlight picker, placeholders and
page images stored in other formats. Expected numbers come from the engine directly."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.helpers import ranked_pages
from tests.studio.helpers import (
    APP,
    PAGES,
    PREDICTED,
    _app,
    _decoded,
    _image_source,
    _metric,
    _native,
    _no_exception,
    _page_charts,
    _page_rows,
    _pane_titles,
    _png,
    _spotlight,
    open_page,
)
from tore_engine.api import load
from tore_engine.engine.cell_regions import page_regions
from tore_engine.plots import page_overlays
from tore_engine.plots.palette import OUTCOME_STYLES
from tore_engine.plots.plain_text import percent, pixels


def _page_size(layouts, page_id: str) -> tuple[float, float]:
    page = layouts.pages[layouts.page_ids().index(page_id)]
    return page.width, page.height


def _button(at, label: str):
    return next(button for button in at.button if button.label == label)


def test_overlays_navigator_agreement_and_model_b(demo_evaluation):
    at = _app()
    open_page(at, "overlays").run()
    _no_exception(at)
    assert at.session_state["page"] == demo_evaluation.page_ids[0] and at.number_input(key="page_position").value == 1
    _button(at, "Next ▶").click().run()
    assert at.session_state["page"] == demo_evaluation.page_ids[1] and at.query_params["page"] == demo_evaluation.page_ids[1]
    at.selectbox(key="order").set_value("worst").run()
    f1 = demo_evaluation.pages["foreground_f1"]
    worst_first = f1.sort_values(kind="stable").index.tolist()
    assert at.session_state["page"] == worst_first[0]  # worst first goes to the worst page
    _button(at, "Next ▶").click().run()
    assert at.session_state["page"] == worst_first[1]
    at.number_input(key="page_position").set_value(len(worst_first)).run()
    assert at.session_state["page"] == worst_first[-1] and _button(at, "Next ▶").disabled
    at.toggle(key="agree").set_value(True).run()
    at.radio(key="model").set_value("B").run()
    _no_exception(at)
    assert _pane_titles(_page_charts(at)[0]) == ["reference (ground-truth)", "model B (model-b, simulated)", "agreement"]
    assert at.query_params["agree"] == "1" and at.query_params["model"] == "B"


def test_pages_without_a_drawable_image_get_a_placeholder(tmp_path, whole_disk_as_data_root):
    pages = [{"id": "no-image", "width": 100, "height": 50, "boxes": [{"label": "Text", "bbox": [10, 10, 60, 30]}]},
             {"id": "lost-pdf", "width": 100, "height": 50, "pdf": "missing.pdf", "page_no": 0, "boxes": []}]
    (tmp_path / "reference.json").write_text(json.dumps({"name": "gt", "pages": pages}), encoding="utf-8")
    (tmp_path / "model.json").write_text(json.dumps({"name": "m", "pages": pages}), encoding="utf-8")
    at = _app(src="path", ref=str(tmp_path / "reference.json"), a=str(tmp_path / "model.json"))
    at.query_params["page"] = "lost-pdf"  # as a link to /overlays?page=lost-pdf would carry it
    open_page(at, "overlays").run()
    _no_exception(at)
    assert at.session_state["page"] == "lost-pdf"
    assert _image_source(_page_charts(at)[0]).startswith("data:image/png;base64,")  # the placeholder
    at.text_input(key="page_find").set_value("no-image").run()  # an exact id opens at once
    assert at.session_state["page"] == "no-image"
    _no_exception(at)
    assert _image_source(_page_charts(at)[0]).startswith("data:image/png;base64,")


CELL = ("Text", "Table")


def _overlays(**query: str):
    """The Overlays page opened by a link with these parameters."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    open_page(at, "overlays")
    return at.run()


def test_the_worst_page_of_a_cell_opens_with_its_pixels_lit_and_its_contribution(demo):
    reference, model_a, evaluation = demo
    worst, value, share = ranked_pages(evaluation, "full", *CELL)[0]
    at = _app(cell="Text|Table")
    assert at.selectbox(key="open-A-full-Text-Table").value == worst
    at.button(key="open-button-A-full-Text-Table-A").click().run()
    _no_exception(at)
    assert at.session_state["page"] == worst and at.query_params["cell"] == "Text|Table"
    classes = evaluation.matrices.classes
    engine = evaluation.page_matrix(evaluation.page_ids.index(worst))[classes.index("Text"), classes.index("Table")]
    assert engine == value == 31410.0  # the demo's worst page for reference Text predicted as Table
    assert _metric(at, "Text → Table on this page") == f"{pixels(engine)} px" == "31,410 px"
    assert _metric(at, "Share of the cell") == percent(share) == "14.4%"
    regions = page_regions(reference.pages[reference.page_ids().index(worst)], model_a.pages[model_a.page_ids().index(worst)],
                           evaluation.taxonomy, "full", *CELL)
    assert regions.contribution() == engine
    overlay = _page_charts(at)[0]
    veil = page_overlays.data_uri(page_overlays.veil_png(regions, *_page_size(reference, worst)))  # exactly the cell's pixels lit
    assert [(row["pane"], row["url"]) for row in _spotlight(overlay)] == [(0, veil), (1, veil)]  # the reference and the prediction
    outlined = [row for row in _page_rows(overlay, "box") if row["group"] == "boxes behind Text → Table"]
    assert sorted((row["pane"], int(row["tip"]["box"])) for row in outlined) == [
        *((0, k) for k in sorted(regions.reference_boxes.tolist())), *((1, k) for k in sorted(regions.prediction_boxes.tolist()))]
    assert {row["line"] for row in outlined} == {page_overlays.CELL_BOX_WIDTH}


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
    assert not _spotlight(_page_charts(at)[0])
    at.selectbox(key="highlight").set_value("Text|Table").run()
    _no_exception(at)
    assert at.query_params["cell"] == "Text|Table" and len(_spotlight(_page_charts(at)[0])) == 2
    at.selectbox(key="order").set_value("cell").run()
    ranked = [page for page, *_ in ranked_pages(evaluation, "full", *CELL)]
    seen = [at.session_state["page"]]
    for _ in ranked[1:]:
        _button(at, "Next ▶").click().run()
        seen.append(at.session_state["page"])
    assert seen == ranked  # most pixels in the cell first


def test_a_search_sends_a_bounded_list_of_matches_and_a_pick_opens_it(demo_evaluation):
    from tore_engine.studio.navigator import MATCHES

    at = _overlays()
    at.text_input(key="page_find").set_value("P").run()  # every demo page id holds a "p"
    matches = [page for page in demo_evaluation.page_ids if "p" in page.casefold()]
    assert len(matches) > MATCHES and at.selectbox(key="page_match").options == matches[:MATCHES]
    assert at.selectbox(key="page_match").label == f"{len(matches)} pages match; the first {MATCHES} are listed, type more to narrow them"
    at.selectbox(key="page_match").set_value(matches[5]).run()
    assert at.session_state["page"] == matches[5]
    at.text_input(key="page_find").set_value("paper-b/p1").run()  # an exact id among several matches (p1, p10, ...)
    assert at.session_state["page"] == "paper-b/p1"
    at.text_input(key="page_find").set_value("nowhere").run()
    assert any("No page id contains this text" in caption.value for caption in at.caption)


def test_images_stored_in_a_parquet_file_are_drawn(root):
    from tore_engine.formats import parquet

    (root / "img").mkdir()
    for page, colour in (("p1", "red"), ("p2", "blue")):
        (root / "img" / f"{page}.png").write_bytes(_png(colour))
    (root / "gt.json").write_bytes(_native("gt", PAGES))
    layout = load(root / "gt.json")
    (root / "stored").mkdir()
    parquet.write(layout, root / "stored" / "gt.parquet", image_bytes=True)
    (root / "img" / "p1.png").unlink()  # only the copy inside the Parquet file is left
    (root / "model.json").write_bytes(_native("model", PREDICTED))
    at = _app(src="path", ref="stored/gt.parquet", fmt="parquet", a="model.json", fmt_a="tore")
    open_page(at, "overlays").run()
    _no_exception(at)
    source = _image_source(_page_charts(at)[0])
    assert source.startswith("data:image/jpeg;base64,")  # the page, not the placeholder (a PNG)
    assert _decoded(source).getpixel((20, 10))[0] > 200  # red: p1's stored image


def test_boxes_are_drawn_by_outcome_by_default_and_by_class_on_request(demo_evaluation):
    """The demo's first page by TIDE's outcomes (boxes.csv's outcome and error of each box, read from
    `Evaluation.boxes`), the choice kept in the URL; by class once asked; ordered by Cls errors."""
    at = _app()
    open_page(at, "overlays").run()
    _no_exception(at)
    page_id = demo_evaluation.page_ids[0]
    boxes = demo_evaluation.boxes
    expected = {(0 if row.side == "reference" else 1, row.index): OUTCOME_STYLES[row.error or row.outcome][0]
                for row in boxes[boxes["page"] == page_id].itertuples()}
    drawn = {(row["pane"], int(row["tip"]["box"])): row["group"] for row in _page_rows(_page_charts(at)[0], "box")}
    assert drawn == expected
    at.radio(key="box_colours").set_value("class").run()
    _no_exception(at)
    assert at.query_params["box_colours"] == "class"
    assert {row["group"] for row in _page_rows(_page_charts(at)[0], "box")} <= set(demo_evaluation.matrices.classes)
    at.selectbox(key="order").set_value("most:Cls").run()
    worst = demo_evaluation.pages["Cls"].idxmax()
    assert at.session_state["page"] == worst
