"""The all-pages table (tore_engine.studio.page_tables), through AppTest: a section drawn on opening;
each page's class pixels on both sides, its Foreground F1, its filters, and a row opened in Overlays;
the section and the screen of rows shown kept on the way back from Overlays."""

from __future__ import annotations

import numpy as np

from tests.helpers import write_json
from tests.studio.helpers import _app, open_page
from tore_engine.results.drilldown import page_class_pixels


def _pages_tables(at) -> list:
    return [frame.value for frame in at.dataframe if "Text (ref)" in frame.value.columns]


def test_the_all_pages_section_draws_its_table_only_while_open():
    at = _app()
    assert not _pages_tables(at) and "pages_open" not in at.query_params
    assert any(expander.label.startswith("All pages: 26 ") for expander in at.expander)
    at.session_state["pages_open"] = True  # what opening the section does (on_change="rerun")
    at.run()
    assert len(_pages_tables(at)) == 1 and at.query_params["pages_open"] == "1"


def test_the_all_pages_table_holds_each_pages_class_pixels_and_filters(demo):
    _, _, evaluation = demo
    at = _app(pages_open="1")
    table = _pages_tables(at)[0]
    reference, predicted = page_class_pixels(evaluation)
    classes = evaluation.matrices.classes
    assert table["page"].tolist() == evaluation.page_ids
    assert np.allclose(table["Table (pred)"], predicted[:, classes.index("Table")])
    assert np.allclose(table["Text (ref)"], reference[:, classes.index("Text")])
    assert table["foreground F1"].tolist() == evaluation.pages["foreground_f1"].tolist()
    at.text_input(key="pages_filter").set_value("paper-b").run()
    at.multiselect(key="pages_classes").set_value(["Formula"]).run()
    shown = _pages_tables(at)[0]
    formula = (reference[:, classes.index("Formula")] > 0) | (predicted[:, classes.index("Formula")] > 0)
    assert shown["page"].tolist() == [page for page, has in zip(evaluation.page_ids, formula) if has and "paper-b" in page]
    at.selectbox(key="open-all-A").set_value(shown["page"].iloc[-1]).run()
    at.button(key="open-button-all-A-A").click().run()
    assert at.session_state["page"] == shown["page"].iloc[-1]


def test_the_section_stays_open_on_the_way_back_from_another_page():
    """Matrices -> Overlays -> Matrices: an open section is a control like any other (Streamlit drops
    an expander's own state with its page)."""
    at = _app(pages_open="1")
    assert _pages_tables(at)
    open_page(at, "overlays").run()
    assert not at.exception and "pages_open" not in at.query_params
    open_page(at, "matrices").run()
    assert not at.exception and _pages_tables(at) and at.query_params["pages_open"] == "1"


def test_the_rows_shown_stay_on_the_way_back_from_overlays(root):
    """120 pages, the table's second screen of rows (51 to 100), a row opened in Overlays, then
    Matrices again: the same rows, not the first screen."""
    pages = [{"id": f"p{k:03d}", "width": 10, "height": 10, "boxes": [{"label": "Text", "bbox": [1, 1, 5, 5]}]} for k in range(120)]
    write_json(root / "reference.json", {"name": "gt", "pages": pages})
    write_json(root / "prediction.json", {"name": "model", "pages": pages})
    at = _app(src="path", ref="reference.json", a="prediction.json", pages_open="1")
    at.number_input(key="rows-all-A").set_value(2).run()
    assert _pages_tables(at)[0]["page"].iloc[0] == "p050"
    at.selectbox(key="open-all-A").set_value("p060").run()
    at.button(key="open-button-all-A-A").click().run()
    assert not at.exception and at.session_state["page"] == "p060"
    open_page(at, "matrices").run()
    assert not at.exception and _pages_tables(at)[0]["page"].iloc[0] == "p050"
