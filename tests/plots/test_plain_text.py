"""Names shown as plain text (tore_engine.plots.plain_text), through AppTest: markup in class names and
file names is escaped for Plotly and Markdown on every page (issue 10): no string Plotly draws holds
a name's markup (in Chromium, test_browser)."""

from __future__ import annotations

from tests.helpers import plotly_texts
from tests.studio.helpers import (
    _app,
    _axes,
    _bar_charts,
    _bars,
    _heatmaps,
    _layout,
    _legend,
    _no_exception,
    _page,
    _page_charts,
    _pane_titles,
    _title,
    open_page,
)
from tore_engine.plots.plain_text import plain_for_markdown, plain_for_plotly
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE

MODEL = "<img src=x onerror=alert(1)>"  # a model's name
HOSTILE_NAMES = ['<a href="https://example.org">link</a>', '<span style="font-size:120px">huge</span>', "![t](http://x.invalid/t.png)"]


def test_markup_in_class_names_is_shown_as_text(tmp_path, monkeypatch):
    reference, swapped = [_page("p1", HOSTILE_NAMES), _page("p2", HOSTILE_NAMES[::-1])], [_page("p1", HOSTILE_NAMES[::-1]), _page("p2", HOSTILE_NAMES)]
    (tmp_path / "reference.json").write_bytes(_layout(reference, "gt"))
    (tmp_path / "model.json").write_bytes(_layout(swapped, MODEL))  # the first and last classes swapped on every page; the model's name is markup
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(src="path", ref="reference.json", a="model.json", tax="single")
    _no_exception(at)
    heatmap, bars = _heatmaps(at)[0], _bar_charts(at)[0]
    rows, columns = _axes(heatmap)
    assert set(HOSTILE_NAMES) <= set(rows) and set(HOSTILE_NAMES) <= set(columns)
    assert _title(heatmap).endswith(f"model A ({MODEL})")
    assert set(HOSTILE_NAMES) <= set(bars["layout"]["meta"]["classes"]) and {name for name, _ in _bars(bars)} <= set(HOSTILE_NAMES)
    escaped = [plain_for_plotly(name) for name in HOSTILE_NAMES]
    assert escaped[0] == '&lt;a href="https://example.org"&gt;link&lt;/a&gt;'
    for figure in (heatmap, bars):
        texts = plotly_texts(figure)
        assert any(escaped[0] in text for text in texts)  # the names are drawn, escaped
        assert not any(raw in text for text in texts for raw in ("<a href", "<span", "<img"))  # never as markup
    assert at.radio(key="model").options == [plain_for_markdown(f"model A ({MODEL})")]

    at.selectbox(key="cell_ref").set_value(HOSTILE_NAMES[0]).run()
    at.selectbox(key="cell_pred").set_value(HOSTILE_NAMES[2]).run()
    _no_exception(at)
    heading = next(markdown.value for markdown in at.markdown if markdown.value.startswith("**Contributing pages"))
    assert f"for reference **{plain_for_markdown(HOSTILE_NAMES[0])}** → prediction **{plain_for_markdown(HOSTILE_NAMES[2])}**" in heading
    assert "\\!\\[t\\]\\(http:\u2060//x.invalid/t.png\\)" in heading and "](" not in heading

    open_page(at, "overlays").run()
    _no_exception(at)
    at.radio(key="box_colours").set_value("class").run()  # the legend names the classes (by outcome it names TIDE's kinds)
    _no_exception(at)
    overlay = _page_charts(at)[0]
    assert _pane_titles(overlay) == ["reference (gt)", f"model A ({MODEL})"]
    assert set(_legend(overlay)) == {*HOSTILE_NAMES, f"boxes behind {HOSTILE_NAMES[0]} → {HOSTILE_NAMES[2]}"}  # the chosen cell travels
    assert not any(raw in text for text in plotly_texts(overlay) for raw in ("<a href", "<span", "<img"))  # never as markup
