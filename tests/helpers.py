"""Helpers the tests share: where the repository, its embedded demo and ../shared are (skipping with the
reason when ../shared is absent), and small builders of layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tore_engine.formats.native import from_document as from_native

REPOSITORY = Path(__file__).resolve().parents[1]
SHARED = REPOSITORY.parent / "shared"
DEMO = REPOSITORY / "tore_engine" / "demo" / "data"  # the embedded demo
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


def valid_vega_lite(spec: dict) -> dict:
    """`spec`, once checked against the Vega-Lite schema Altair ships (the version Streamlit draws)."""
    jsonschema = pytest.importorskip("jsonschema")
    altair = pytest.importorskip("altair")
    jsonschema.validate(spec, altair.vegalite.v6.schema.core.load_schema())
    return spec


EXPRESSION_KEYS = ("filter", "test", "calculate", "labelExpr", "expr")


def vega_expressions(spec) -> list[str]:
    """Every Vega expression in a specification (the text Vega parses as code)."""
    if isinstance(spec, dict):
        own = [value for key, value in spec.items() if key in EXPRESSION_KEYS and isinstance(value, str)]
        return own + [text for value in spec.values() for text in vega_expressions(value)]
    if isinstance(spec, list):
        return [text for value in spec for text in vega_expressions(value)]
    return []


def page_box_colours(spec: dict, row: dict) -> tuple[str, str]:
    """(fill, outline): the colours a page chart (`plots.page_chart`) draws one of its box rows in,
    as Vega resolves them: a colour of the row's own where a condition names its index, else its
    legend group's."""
    layer = next(layer for layer in spec["spec"]["layer"] if layer["mark"]["type"] == "rect")

    def resolved(channel: str, field: str) -> str:
        encoding = layer["encoding"][channel]
        index = row[field]
        for condition in encoding.get("condition", []):
            if index is not None and condition["test"] == f"datum.{field} === {int(index)}":
                return condition["value"]
        return dict(zip(encoding["scale"]["domain"], encoding["scale"]["range"]))[row["group"]]

    return resolved("fill", "fill_colour"), resolved("stroke", "outline")


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
