"""Helpers the tests share: where the repository, its embedded demo, its conformance vectors
(tests/vectors) and the real sample data of ../shared/data are (skipping with the reason when that is
absent), and small builders of layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tore_engine.formats.native import from_document as from_native

REPOSITORY = Path(__file__).resolve().parents[1]
SHARED = REPOSITORY.parent / "shared"
DEMO = REPOSITORY / "tore_engine" / "demo" / "data"  # the embedded demo
VECTORS = REPOSITORY / "tests" / "vectors"  # the public conformance vectors (tests/vectors/README.md)
DOCILE_ID = "516f2d61ea404b30a9192a72"  # the DocILE sample document in ../shared/data/docile
FUNSD_FORM = "82092117"  # a FUNSD form of ../shared/data/funsd, also in EC-FUNSD


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the test with the reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path}; skipping (it sits beside the repository as ../shared)")
    return path


def load_shared_json(*parts: str):
    return json.loads(shared_path(*parts).read_text(encoding="utf-8"))


def load_vector(name: str):
    """A conformance vector of tests/vectors, parsed afresh (tests may change it). A missing one is an
    error, never a skip: the vectors are part of the repository."""
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def layout_json(name: str, pages: list[dict], taxonomy: list[str] | None = None) -> dict:
    document = {"name": name, "pages": pages}
    if taxonomy is not None:
        document["taxonomy"] = taxonomy
    return document


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def one_page(boxes, width, height, taxonomy=None):
    return from_native(layout_json("x", [{"id": "p", "width": width, "height": height, "boxes": boxes}], taxonomy), "x.json")


def small_layout(name: str, pages: list[tuple[str, list[dict]]]):
    """A layout set of 10 x 10 pages, each given as (page id, its boxes in the native form)."""
    return from_native({"name": name, "pages": [{"id": pid, "width": 10, "height": 10, "boxes": boxes} for pid, boxes in pages]}, name)


def input_error_without(module: str, call: str, **names: object) -> str:
    """The InputError message of `call` (Python code using `load` / `load_pair` and `names`) run
    in a child Python in which `module` cannot be imported: how a user without an extra sees it."""
    import subprocess
    import sys

    assignments = "".join(f"{name} = {value!r}\n" for name, value in names.items())
    script = (f"import sys; sys.modules[{module!r}] = None\n"
              "from tore_engine.core.errors import InputError\nfrom tore_engine.api import load, load_pair\n"
              f"{assignments}try:\n    {call}\nexcept InputError as error:\n    print(error)")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).stdout.strip()


def ranked_pages(evaluation, view: str, row: str, column: str, limit: int | None = None) -> list[tuple]:
    """`Evaluation.pages_for_cell` as (page, pixels, share) tuples, for comparing with expected lists."""
    return list(evaluation.pages_for_cell(row, column, view=view, limit=limit).itertuples(index=False, name=None))


def figure_json(figure) -> dict:
    """A Plotly figure (a `go.Figure`, or the JSON text or dict Streamlit sends) as plain JSON, its
    typed arrays (`{"dtype", "bdata", "shape"}`) decoded into lists (NaN for null numbers)."""
    import base64
    import json

    import numpy as np

    if hasattr(figure, "to_plotly_json"):
        figure = figure.to_json()
    if isinstance(figure, str):
        figure = json.loads(figure)

    def decoded(value):
        if isinstance(value, dict) and "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
            shape = value.get("shape")
            if shape:
                array = array.reshape([int(side) for side in str(shape).split(",")])
            return array.tolist()
        if isinstance(value, dict):
            return {key: decoded(item) for key, item in value.items()}
        if isinstance(value, list):
            return [decoded(item) for item in value]
        return value

    return decoded(figure)


def valid_plotly(figure) -> dict:
    """`figure` as JSON (`figure_json`), once Plotly has checked every property of it."""
    import plotly.graph_objects as go

    spec = figure_json(figure)
    go.Figure(spec)  # raises on any property Plotly does not know
    return spec


def plotly_texts(spec) -> list[str]:
    """Every string of a figure that Plotly draws as (HTML-like) text: names, titles, tick texts,
    hover texts and templates, annotations."""
    keys = {"name", "text", "ticktext", "hovertemplate", "texttemplate", "title"}
    found: list[str] = []

    def walk(value, key=None):
        if isinstance(value, dict):
            for name, item in value.items():
                walk(item, name)
        elif isinstance(value, list):
            for item in value:
                walk(item, key)
        elif isinstance(value, str) and key in keys:
            found.append(value)

    walk(spec)
    return found


def _pane_of(axis: str) -> int:
    return int(axis[1:] or 1) - 1


def _hover_lines(text: str) -> dict[str, str]:
    """A box's hover (`page_chart.hover_html`) as {"title": ..., name: value, ...}, unescaped."""
    import html
    import re

    title, *lines = text.split("<br>")
    parsed = {"title": html.unescape(re.sub(r"</?b>", "", title))}
    for line in lines:
        name, _, value = line.partition(": ")
        parsed[html.unescape(name)] = html.unescape(value)
    return parsed


def page_rows(spec: dict, kind: str, pane: int | None = None) -> list[dict]:
    """A page figure's (`plots.page_chart`) marks of one kind as rows, of every pane or of one:
    `box` (x, y, x2, y2, pane, group, line, dash, outline, fill, label, tip: the hover as a dict),
    `line` (x, y, x2, y2, pane, group, dash), `picture` (pane, url)."""
    spec = figure_json(spec)
    rows: list[dict] = []
    data = spec["data"]
    if kind == "picture":
        rows = [{"pane": _pane_of(image["xref"]), "url": image["source"]} for image in spec["layout"].get("images", [])
                if image.get("name") == "picture"]
    for index, trace in enumerate(data):
        if kind == "box" and trace.get("meta") == "box hovers":
            outline = data[index - 1]
            shapes = _outlines(outline["x"], outline["y"])  # a box's 4 corners, or a polygon's points
            for k, (label, text) in enumerate(zip(trace["customdata"], trace["text"])):
                xs, ys = shapes[k]
                rows.append({"pane": _pane_of(trace.get("xaxis", "x")), "x": xs[0], "y": ys[0], "x2": xs[1], "y2": ys[2], "points": list(zip(xs[:-1], ys[:-1])),
                             "group": trace["legendgroup"], "line": outline["line"]["width"], "dash": outline["line"]["dash"],
                             "outline": outline["line"]["color"], "fill": outline.get("fillcolor"), "label": label, "tip": _hover_lines(text)})
        if kind == "line" and trace.get("meta") == "lines":
            xs, ys = trace["x"], trace["y"]
            rows += [{"pane": _pane_of(trace.get("xaxis", "x")), "x": xs[3 * k], "y": ys[3 * k], "x2": xs[3 * k + 1], "y2": ys[3 * k + 1],
                      "group": trace["legendgroup"], "dash": trace["line"]["dash"]} for k in range(len(xs) // 3)]
    return [row for row in rows if pane is None or row["pane"] == pane]


def _outlines(xs: list, ys: list) -> list[tuple[list, list]]:
    """An outline trace's closed shapes, split at its None separators."""
    shapes, start = [], 0
    for end, value in enumerate(xs):
        if value is None:
            shapes.append((xs[start:end], ys[start:end]))
            start = end + 1
    return shapes


def page_box_colours(spec: dict, row: dict) -> tuple[str | None, str]:
    """(fill, outline): the colours a page figure (`plots.page_chart`) draws one of its box rows
    (`page_rows`) in, as `#rrggbb` (the fill None for an outline)."""
    import re

    fill = row["fill"]
    if fill is not None:
        red, green, blue = (int(value) for value in re.findall(r"[\d.]+", fill)[:3])
        fill = f"#{red:02x}{green:02x}{blue:02x}"
    return fill, row["outline"]


def page_legend(spec: dict) -> dict[str, str]:
    """A page figure's legend: entry (unescaped) -> colour."""
    import html

    spec = figure_json(spec)
    return {html.unescape(trace["name"]): (trace.get("line") or {}).get("color") or trace["marker"]["color"]
            for trace in spec["data"] if trace.get("showlegend", True) is not False and trace.get("name")}


def nested_forms_pdf(levels: int = 24, fan_out: int = 4) -> bytes:
    """A one-page PDF of about 7 KB, written by hand, whose form XObject k draws form k+1 `fan_out`
    times: fan_out ** levels drawings (4^24, 2.8e14: hours for any renderer)."""
    def stream(dictionary: bytes, content: bytes) -> bytes:
        return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"

    forms = [stream(b"/Type /XObject /Subtype /Form /BBox [0 0 200 200] /Resources << /XObject << /X %d 0 R >> >>" % (6 + level),
                    b"q 0.5 0 0 0.5 0 0 cm /X Do Q " * fan_out) for level in range(levels - 1)]
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /X 5 0 R >> >> >>",
               stream(b"", b"/X Do"), *forms, stream(b"/Type /XObject /Subtype /Form /BBox [0 0 200 200]", b"0 0 200 200 re f")]
    document, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(document))
        document += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    table = len(document)
    document += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    document += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table)
    return bytes(document)
