"""What the app's tests share: the app served on a loopback port (for the browser and the server's
health), the app opened in Streamlit's AppTest (no browser) at a link, the Scores page with a benchmark chosen, what AppTest gives back read as plain values (charts, tables, typed
arrays, metrics), uploads into the sidebar, and small layouts and page images to feed it.

AppTest cannot click a chart, so a cell is chosen through the fallback selectboxes; the click path
is covered by the browser test (tests/studio/test_browser.py).
"""

from __future__ import annotations

import base64
import html
import io
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from benchmarks.common import served_app
from tests.helpers import DEMO, REPOSITORY, figure_json, page_legend, page_rows
from tore_engine.studio import state

APP = str(REPOSITORY / "tore_engine" / "studio" / "app.py")

if not (DEMO / "reference.json").exists():
    pytest.skip(f"the embedded demo is missing at {DEMO}; regenerate it with python -m tore_engine.demo", allow_module_level=True)


# --- the app served -----------------------------------------------------------------------------


@contextmanager
def app_server(data_root: Path, launcher: tuple[str, ...] = (sys.executable, "-m", "streamlit")) -> Iterator[str]:
    """The app served on a free loopback port by `launcher` with this data root, until the block
    ends; its URL (`benchmarks.common.served_app`)."""
    with served_app(data_root, launcher) as (url, _):
        yield url


# --- the app in AppTest ------------------------------------------------------------------------


def _app(*, secrets: dict | None = None, timeout: float = 60, **query: str) -> AppTest:
    """The app opened at a link with these query parameters (and these Streamlit secrets)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.secrets.update(secrets or {})
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def open_page(at: AppTest, name: str) -> AppTest:
    """Go to the app's page `name` (`app.PAGES`) on the next run, as a button's callback asks for
    it (`state.request_switch`): AppTest.switch_page finds pages by their file, and the app's pages
    are functions (`st.Page(callable)`)."""
    at.session_state[state.SWITCH] = (name, dict(at.query_params))  # the link's parameters go with it, as a browser's link keeps them
    return at


def open_scores_page(benchmark: str, timeout: int = 120, **query: str) -> AppTest:
    """The Scores page with `benchmark` chosen, opened first as a deep link opens it."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["bench"] = benchmark
    for key, value in query.items():
        at.query_params[key] = value
    open_page(at, "scores").run()
    _no_exception(at)
    return at


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def _popovers(at: AppTest) -> dict[str, list[str]]:
    """Each popover's button label -> the keys of the widgets inside it (drawn by the browser only
    while it is open)."""
    return {block.proto.popover.label: [child.key for child in block.children.values() if hasattr(child, "key")]
            for block in at.get("popover")}


def _upload(at, slot: str, name: str, data: bytes):
    generation = at.session_state["_upload_generation"] if "_upload_generation" in at.session_state else 0
    return at.file_uploader(key=f"upload_{slot}_{generation}").set_value((name, data, "application/json")).run()


# --- what AppTest gives back ---------------------------------------------------------------------


def _figures(at: AppTest) -> list[dict]:
    """The Plotly figures the page drew (heatmaps, bars, pages, the sweep), in page order, as plain
    JSON (`tests.helpers.figure_json`), the preloading blank figure left out."""
    figures = [figure_json(element.proto.spec) for element in at.get("plotly_chart")]
    return [figure for figure in figures if (figure["layout"].get("meta") or {}).get("chart")]


def _of_kind(at: AppTest, kind: str) -> list[dict]:
    return [figure for figure in _figures(at) if figure["layout"]["meta"]["chart"] == kind]


def _heatmaps(at: AppTest) -> list[dict]:
    return _of_kind(at, "heatmap")


def _bar_charts(at: AppTest) -> list[dict]:
    return _of_kind(at, "bars")


def _page_charts(at: AppTest) -> list[dict]:
    """The pages drawn (`plots.page_chart`: Overlays, Compare, the score panels' pages)."""
    return _of_kind(at, "page")


def _sweep_charts(at: AppTest) -> list[dict]:
    return _of_kind(at, "sweep")


def _pane_titles(chart: dict) -> list[str]:
    return chart["layout"]["meta"]["panes"]


def _page_rows(chart: dict, kind: str, pane: int | None = None) -> list[dict]:
    """A page chart's rows of one kind (`box`, `picture`, `line`), of every pane or of one."""
    return page_rows(chart, kind, pane)


def _legend(chart: dict) -> dict[str, str]:
    """A page chart's legend: entry -> colour."""
    return page_legend(chart)


def _axes(heatmap: dict) -> tuple[list[str], list[str]]:
    """A heatmap's row and column names, in order."""
    return heatmap["layout"]["meta"]["rows"], heatmap["layout"]["meta"]["columns"]


def _title(spec: dict) -> str:
    """A figure's title as plain text (its note, under a line break, left out)."""
    return html.unescape(spec["layout"]["title"]["text"].split("<br>")[0])


CELL_FIELDS = {"value": 0, "pixels": 1, "recall": 2, "precision": 3}


def _cells(heatmap: dict, field: str = "value") -> np.ndarray:
    """A field of every cell of a heatmap as a matrix (NaN where none): `value` (the cell's number),
    `pixels`, `recall`, `precision` (the hover's numbers), `colour` (the colour value; NaN: blank),
    `text` (the number printed on it)."""
    rows, columns = _axes(heatmap)
    heat, *overlays = heatmap["data"]
    if field == "text":
        texts = heat.get("text") or [[""] * len(columns) for _ in rows]
        return np.array(texts, dtype=object)
    if field == "colour":
        return np.array([[np.nan if value is None else value for value in row] for row in heat["z"]], dtype=float)
    cells = np.full((len(rows), len(columns)), np.nan)
    for trace in overlays:
        for x, y, data in zip(trace["x"], trace["y"], trace["customdata"]):
            value = data[CELL_FIELDS[field]]
            cells[int(y), int(x)] = np.nan if value is None else value
    return cells


def _bars(chart: dict) -> dict[tuple[str, str], float | None]:
    """A bar chart's bars: (class, series) -> value (None: no bar)."""
    classes = chart["layout"]["meta"]["classes"]
    bars = {}
    for trace in chart["data"]:
        if trace["type"] != "bar":  # the click markers over the bars
            continue
        for x, value in zip(trace["x"], trace["y"]):
            bars[(classes[int(x)], html.unescape(trace["name"]))] = None if value is None or value != value else value
    return bars


def _page_table(at: AppTest):
    return next(frame.value for frame in at.dataframe if "page" in frame.value.columns)


LINE_LABELS = (("Foreground recall", "Foreground precision", "Foreground F1"), ("mAP", "mAP@50", "mAP@75"))


def scores_line_values(lines: list[str]) -> dict[str, str]:
    """The scores line's figures, each full label -> the number shown, from its two lines as
    Markdown ("Foreground recall **0.928** · precision **0.961** · F1 **0.944**") or as the browser
    shows them (the same without the asterisks)."""
    shown = {}
    for labels in LINE_LABELS:
        line = next(line for line in lines if line.startswith(f"{labels[0]} "))
        values = [part.replace("**", "").split()[-1] for part in line.split(" · ")]
        assert len(values) == len(labels), line
        shown.update(zip(labels, values))
    return shown


def scores_line(at) -> dict[str, str]:
    """The Matrices page's scores line read back from AppTest (`scores_line_values`)."""
    return scores_line_values([markdown.value for markdown in at.markdown])


def _metric(at, label: str) -> str:
    return next(metric.value for metric in at.metric if metric.label.startswith(label))


def _spotlight(chart: dict) -> list[dict]:
    """The highlighted cell's veils, one a pane that lights it."""
    return _page_rows(chart, "picture")


def _image_source(chart: dict) -> str:
    """The page image under a page chart's panes."""
    return next(image["source"] for image in chart["layout"].get("images", []) if image.get("name") == "page")


def _decoded(uri: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))


def _shown_text(at) -> str:
    """Every text element of the page, as sent to the browser."""
    return " ".join(element.value for kind in ("markdown", "caption", "error", "warning", "info", "exception", "text", "code")
                    for element in getattr(at, kind) if isinstance(element.value, str))


# --- layouts and page images to feed it ---------------------------------------------------------


def _layout(pages: list[dict], name: str = "layout") -> bytes:
    return json.dumps({"name": name, "pages": pages}).encode()


def _page(page_id: str, labels: list[str], **image: object) -> dict:
    boxes = [{"label": label, "bbox": [10 + 20 * k, 10, 25 + 20 * k, 40]} for k, label in enumerate(labels)]
    return {"id": page_id, "width": 100, "height": 50, "boxes": boxes, **image}


PAGES = [{"id": "p1", "width": 40, "height": 20, "image": "img/p1.png",
          "boxes": [{"label": "Text", "bbox": [2, 2, 20, 10]}, {"label": "Table", "bbox": [22, 2, 38, 18]}]},
         {"id": "p2", "width": 40, "height": 20, "image": "img/p2.png", "boxes": [{"label": "Text", "bbox": [0, 0, 40, 5]}]}]
PREDICTED = [{**page, "boxes": [{"label": "Table", "bbox": [2, 2, 20, 10]}]} for page in PAGES]


def _png(colour: str) -> bytes:
    """A PNG of one colour, the size of the pages of PAGES."""
    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _native(name: str, pages: list[dict]) -> bytes:
    return json.dumps({"name": name, "pages": pages}).encode()


def _coco(root: Path) -> None:
    images = {"images": [{"id": k + 1, "file_name": page["id"], "width": 40, "height": 20} for k, page in enumerate(PAGES)],
              "categories": [{"id": 1, "name": "Text"}, {"id": 2, "name": "Table"}]}
    (root / "images.json").write_text(json.dumps(images), encoding="utf-8")
    model_a = [{"image_id": 1, "category_id": 1, "bbox": [2, 2, 18, 8], "score": 0.9}]
    model_b = [{"image_id": 1, "category_id": 2, "bbox": [2, 2, 18, 8], "score": 0.8}, {"image_id": 2, "category_id": 1, "bbox": [0, 0, 40, 5]}]
    (root / "a.results.json").write_text(json.dumps(model_a), encoding="utf-8")
    (root / "b.results.json").write_text(json.dumps(model_b), encoding="utf-8")
