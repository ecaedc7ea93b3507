"""The JSON rules (depth, repeated keys) and the structure scan, checked against Python's own parser
on generated documents."""

from __future__ import annotations

import json
import pickle

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.json_texts import documents, encode
from tore_engine.core.errors import InputError
from tore_engine.io.json import (
    MAX_JSON_DEPTH,
    SchemaError,
    parse_json,
    scan_json,
    structure_of,
)


def python_verdict(text: str):
    """What Python's json module says of a text: its value, or which key repeats first."""
    repeated = []

    def pairs(items):
        keys = [key for key, _ in items]
        repeated.extend(key for k, key in enumerate(keys) if key in keys[:k])
        return dict(items)

    value = json.loads(text, object_pairs_hook=pairs)
    return value, repeated


def depth_of(value) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(documents, st.booleans())
def test_the_scan_agrees_with_pythons_parser(value, escape_keys):
    text = encode(value, escape_keys)
    parsed, repeated = python_verdict(text)
    data = text.encode()
    if repeated:
        with pytest.raises(InputError, match="repeats the key"):
            scan_json(data, "doc.json")
    elif depth_of(parsed) > MAX_JSON_DEPTH:
        with pytest.raises(InputError, match="nested more than"):
            scan_json(data, "doc.json")
    else:
        assert parse_json(data, "doc.json") == parsed


def test_the_first_repeated_key_is_named_with_its_place():
    with pytest.raises(InputError) as caught:
        scan_json(b'{"a": {"x": 1, "y": 2},\n "b": 3, "a": 4}', "d.json")
    assert caught.value.problem == "repeats the key 'a' in one object (line 2, column 10); a JSON key may appear once"


def test_deep_nesting_is_refused_before_any_parser_sees_it():
    data = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(InputError, match="nested more than 64 levels deep"):
        parse_json(data, "deep.json")


def test_top_level_values_and_array_items():
    data = b'{"name": "m", "pages": [{"id": "a"}, {"id": "b,]"}, 3], "x": {}}'
    structure = structure_of(data)
    spans = structure.top_level_values()
    assert data[slice(*spans["name"])].strip() == b'"m"'
    assert [data[a:b].strip() for a, b in structure.array_items(*spans["pages"])] == [b'{"id": "a"}', b'{"id": "b,]"}', b"3"]
    assert structure.keys_at(1) == ["name", "pages", "x"]


def test_a_schema_error_keeps_its_fields_across_processes():
    error = SchemaError("expected int, got str", (3, "boxes", 2, "bbox"), file="m.json")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.detail, copy.location, copy.file) == (SchemaError, "expected int, got str", (3, "boxes", 2, "bbox"), "m.json")
    assert str(copy) == "file m.json: expected int, got str (at [3].boxes[2].bbox)"
    assert copy.in_item("boxes") == (3, 2, "expected int, got str (at bbox)")


class Box(msgspec.Struct, forbid_unknown_fields=True):
    label: str
    bbox: tuple[float, float]


class Page(msgspec.Struct, forbid_unknown_fields=True):
    boxes: list[Box] | None = None
    named: dict[str, Box] = {}
    pair: tuple[Box, int] | None = None


@pytest.mark.parametrize(
    "text, schema, problem",
    [
        (b'{"boxs": []}', Page, "unknown key 'boxs' (did you mean 'boxes'?)"),
        (b'{"boxes": [{"label": "a", "bbox": [0, 1], "lable": 1}]}', Page, "unknown key 'lable' (did you mean 'label'?) (at boxes[0])"),
        (b'{"named": {"k": {"label": "a", "box": [0, 1]}}}', Page, "unknown key 'box' (did you mean 'bbox'?) (at named)"),
        (b'{"pair": [{"label": "a", "bbox": [0, 1], "bbx": 2}, 3]}', Page, "unknown key 'bbx' (did you mean 'bbox'?) (at pair[0])"),
        (b'[{"label": "a", "bbox": [0, 1], "colour": "red"}]', list[Box], "unknown key 'colour' (at [0])"),
        (b'{"nmae": 1}', Page, "unknown key 'nmae'"),  # resembles no key of the struct
    ],
)
def test_an_unknown_key_is_named_with_the_key_of_its_object_it_resembles(text, schema, problem):
    with pytest.raises(SchemaError) as caught:
        parse_json(text, "f.json", schema)
    assert caught.value.problem == problem and caught.value.file == "f.json"
