"""Tags and saved views in the app (tore_engine.studio.tag_panels): a tag added in Overlays by one
session is kept in the data root's database and shown to another session, with the pages of a
tag; a view saved in the sidebar is listed with a link to its state."""

from __future__ import annotations

import io

import tore_engine as tore
from tests.studio.helpers import _app, _no_exception, open_page
from tore_engine.results.tags import DEFAULT_FILE


def _overlays(**query):
    at = _app(**query)
    open_page(at, "overlays").run()
    _no_exception(at)
    return at


def test_a_tag_added_in_one_session_is_seen_by_another(root, monkeypatch):
    monkeypatch.delenv("TORE_STUDIO_DB", raising=False)
    first = _overlays()
    assert not (root / DEFAULT_FILE).exists()  # showing no tag makes no database
    page_id = first.session_state["page"]
    target = next(option for option in first.selectbox(key="tag_target").options if option.startswith("reference box 1 "))
    first.text_input(key="tag_name").input("reference wrong")
    first.text_input(key="tag_note").input("a figure, not a table")
    first.selectbox(key="tag_target").select(target)
    next(button for button in first.button if button.label == "Add the tag").click().run()
    _no_exception(first)
    [tag] = tore.tags(root / DEFAULT_FILE).find()
    assert (tag.dataset, tag.page, tag.name, tag.side, tag.box, tag.note) == ("ground-truth", page_id, "reference wrong", "reference", 1,
                                                                              "a figure, not a table")
    second = _overlays()  # another session, as after a reload or on another server of the same data root
    tables = [frame.value for frame in second.dataframe]
    assert any(list(table.columns) == ["page"] and table["page"].tolist() == [page_id] for table in tables)  # the tag's pages
    assert any("tag" in table.columns and table["tag"].tolist() == ["reference wrong"] for table in tables)


def test_a_saved_view_is_listed_with_its_link(root, monkeypatch):
    monkeypatch.delenv("TORE_STUDIO_DB", raising=False)
    at = _app(tax="dual")
    at.text_input(key="view_name").input("dual demo").run()
    next(button for button in at.button if button.label == "Save this view").click().run()
    _no_exception(at)
    views = tore.tags(root / DEFAULT_FILE).views()
    assert list(views) == ["dual demo"] and "tax=dual" in views["dual demo"]
    assert any("[dual demo](?" in markdown.value and "tax=dual" in markdown.value for markdown in at.sidebar.markdown)


def test_a_tags_pages_as_coco_read_back_as_the_same_boxes(tmp_path):
    import zipfile

    import numpy as np

    from tests.helpers import DEMO
    from tore_engine.api import evaluate_pair
    from tore_engine.studio.evaluations import Evaluated
    from tore_engine.studio.tag_panels import _coco_zip

    pair = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json", min_score=0.5)
    evaluated = Evaluated("model A", pair.reference, pair.prediction, pair.evaluation, min_score=0.5)
    pages = [pair.evaluation.page_ids[3], pair.evaluation.page_ids[1]]
    zipfile.ZipFile(io.BytesIO(_coco_zip(evaluated, pages))).extractall(tmp_path)
    reference, prediction = tore.load_pair(tmp_path / "pages.json", tmp_path / "pages.predictions.json")
    assert reference.page_ids() == prediction.page_ids() == pages
    for again, page_of in ((reference, evaluated.reference_page), (prediction, evaluated.prediction_page)):
        for page in again.pages:
            kept = page_of(page.id)  # as evaluated: below the minimum score dropped
            assert page.labels == kept.labels and np.allclose(page.bboxes, kept.bboxes, rtol=0, atol=1e-9)
    assert all((prediction.pages[k].scores >= 0.5).all() for k in range(2))


def test_a_cells_page_list_and_an_error_types_pages_are_tagged_at_once(root, monkeypatch, demo_evaluation):
    """The popover under a cell's page list tags all of its pages (the engine's pages of the cell),
    the one under an error type's pages all pages with that error (pages.csv's counts), one
    transaction each; the tags then list those pages in the database."""
    monkeypatch.delenv("TORE_STUDIO_DB", raising=False)
    at = _app(cell="Title|Section-header", errors_open="1", error_type="Loc")
    _no_exception(at)
    at.text_input(key="tag-list-cell-A-full-name").input("titles as headers")
    next(button for button in at.button if button.label == "Tag them" and "cell-A-full" in str(button.form_id)).click().run()
    _no_exception(at)
    store = tore.tags(root / DEFAULT_FILE)
    behind = set(demo_evaluation.pages_for_cell("Title", "Section-header")["page"])
    assert set(store.pages("ground-truth", "titles as headers")) == behind and len(behind) > 1
    at.session_state["error_type"] = "Loc"
    at.run()
    at.text_input(key="tag-list-error-Loc-name").input("Loc errors")
    next(button for button in at.button if button.label == "Tag them" and "error-Loc" in str(button.form_id)).click().run()
    _no_exception(at)
    with_loc = {page for page, count in demo_evaluation.pages["Loc"].items() if count > 0}
    assert set(store.pages("ground-truth", "Loc errors")) == with_loc and len(with_loc) > 1


def test_a_page_of_more_boxes_than_a_pane_draws_offers_the_drawn_ones_to_tag(root):
    """Issue 42 C2: the 'On' list of a page of a million boxes sent every box (29.7 MB); it offers the
    page and the boxes the panes draw (a pane's MAX_BOXES largest), so a drawn box can be tagged."""
    from tests.helpers import layout_json, write_json
    from tore_engine.plots.page_chart import MAX_BOXES

    count = MAX_BOXES + 3
    boxes = [{"label": "text", "bbox": [k % 50, k // 50, k % 50 + 1 + k / count, k // 50 + 1]} for k in range(count)]  # box k the k-th smallest
    page = {"id": "p", "width": 100, "height": 120}
    write_json(root / "gt.json", layout_json("gt", [{**page, "boxes": boxes[:2]}], ["text"]))
    write_json(root / "model.json", layout_json("model", [{**page, "boxes": boxes}]))
    options = _overlays(src="path", ref="gt.json", a="model.json").selectbox(key="tag_target").options
    assert len(options) == 1 + 2 + MAX_BOXES
    assert "prediction box 2 (text)" not in options and {"prediction box 3 (text)", f"prediction box {count - 1} (text)", "reference box 0 (text)"} <= set(options)


def test_a_thumbnail_of_the_gallery_tags_its_page(root, monkeypatch, demo_evaluation):
    """Issue 39: a page is tagged from the gallery too, under its thumbnail ("reference wrong" at a
    glance): the tag holds that page alone."""
    monkeypatch.delenv("TORE_STUDIO_DB", raising=False)
    at = _app(cell="Text|Table", gallery="1")
    _no_exception(at)
    first = demo_evaluation.pages_for_cell("Text", "Table")["page"].iloc[0]  # the gallery's first thumbnail: most pixels first
    at.text_input(key="tag-list-gallery-A-full-0-name").input("table read as text")
    next(button for button in at.button if button.label == "Tag them" and "gallery-A-full-0" in str(button.form_id)).click().run()
    _no_exception(at)
    assert tore.tags(root / DEFAULT_FILE).pages("ground-truth", "table read as text") == [first]
