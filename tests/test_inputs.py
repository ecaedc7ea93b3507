"""The shared input layer: the path policy, bounded reads, and the JSON structure scan checked
against Python's own parser on generated documents."""

from __future__ import annotations

import json
import os
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tore_engine.errors import InputError
from tore_engine.inputs import MAX_JSON_DEPTH, confine, parse_json, read_bytes, read_json, scan_json, structure_of


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


keys = st.sampled_from(["a", "b", "id", "\u00e9", 'q"', "\\", "a\\b", "k" * 9 + "1" + "k" * 9, "k" * 9 + "2" + "k" * 9])
scalars = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.lists(st.tuples(keys, children), max_size=5),
    max_leaves=20,
)


def encode(value, escape_keys: bool) -> str:
    """JSON text where lists of pairs are objects (so keys may repeat), keys optionally escaped."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        body = ", ".join(f"{_key(k, escape_keys)}: {encode(v, escape_keys)}" for k, v in value)
        return "{" + body + "}"
    if isinstance(value, list):
        return "[" + ", ".join(encode(v, escape_keys) for v in value) + "]"
    return json.dumps(value)


def _key(key: str, escape: bool) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in key).join('""') if escape else json.dumps(key)


def verdict(data: bytes, compiled: bool, max_depth: int = MAX_JSON_DEPTH):
    """What a scan says: its error, or the spans it finds (whitespace around items aside)."""
    try:
        scanned = scan_json(data, "doc.json", compiled=compiled, max_depth=max_depth)
    except InputError as error:
        return error.problem
    if data.lstrip().startswith(b"["):
        return [data[a:b].strip() for a, b in scanned.array_items(0, len(data))]
    if data.lstrip().startswith(b"{"):
        values = scanned.top_level_values()
        return {key: [data[a:b].strip() for a, b in scanned.array_items(*span)] or data[slice(*span)].strip() for key, span in values.items()}
    return None


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


@settings(max_examples=300, deadline=None)
@given(documents, st.booleans(), st.integers(2, 6))
def test_the_compiled_scan_agrees_with_the_numpy_scan(value, escape_keys, max_depth):
    data = encode(value, escape_keys).encode()
    assert verdict(data, True, max_depth) == verdict(data, False, max_depth)


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


def test_confine_refuses_every_way_out_the_same(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(b"x")
    (root / "link").symlink_to(tmp_path / "secret.png")
    (root / "loop").symlink_to(root / "loop")
    assert confine("sub/../sub", root) == (root / "sub").resolve()
    messages = set()
    for name in ("../secret.png", str(tmp_path / "secret.png"), "link", "../nonexistent.png", "/etc/passwd"):
        with pytest.raises(InputError) as caught:
            confine(name, root, what="page image")
        messages.add(caught.value.problem.replace(repr(name), "NAME"))
    assert messages == {"page image NAME is outside the folder it must stay in"}
    with pytest.raises(InputError, match="NUL byte"):
        confine("a\x00b", root)


def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes(fifo)  # would block forever if it were opened for reading without O_NONBLOCK
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes("/dev/zero")
    with pytest.raises(InputError, match="is a folder"):
        read_bytes(tmp_path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    with pytest.raises(InputError, match="no such file|not a regular file|cannot be read"):
        read_bytes(tmp_path / "sock")
    server.close()
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="symbolic-link loop"):
        read_bytes(loop)


def test_size_limit(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b"0," * 100 + b"0]")
    with pytest.raises(InputError, match="more than the 10 allowed"):
        read_json(path, max_bytes=10)
