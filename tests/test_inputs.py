"""The shared input layer: the path policy, bounded reads, and the JSON structure scan checked
against Python's own parser on generated documents."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.json_texts import documents, encode

from tore_engine.errors import InputError
from tore_engine.inputs import BOM, MAX_JSON_DEPTH, confine, parse_json, read_bytes, read_json, read_stamped, read_to_end, scan_json, structure_of


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


def test_a_file_is_read_by_its_size_not_by_the_limit(tmp_path):
    """The 8 GiB limit is a ceiling, not a buffer: under a 2 GiB address-space cap (`ulimit -v`)
    a small file still reads (a buffer of the limit's size used to be allocated first)."""
    path = tmp_path / "small.json"
    path.write_bytes(b'{"pages": []}\n')
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))\n"
        "from tore_engine.inputs import read_bytes, read_json\n"
        "sys.stdout.write(read_bytes(sys.argv[1]).decode() + repr(read_json(sys.argv[1])))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "{\"pages\": []}\n{'pages': []}"), done.stderr


class _Rewritten(io.BytesIO):
    """A file's content as a reader sees it after someone rewrote the file: its size on the
    descriptor is the real file's, its bytes are `content`."""

    def __init__(self, content: bytes, real: io.BufferedReader) -> None:
        super().__init__(content)
        self.real = real

    def fileno(self) -> int:
        return self.real.fileno()


@pytest.mark.parametrize("content", [b"0123456789", b"0123"], ids=["grew", "shrank"])
def test_a_file_that_changes_size_while_read_is_an_error(tmp_path, content):
    path = tmp_path / "growing.json"
    path.write_bytes(b"01234567")
    with path.open("rb") as real, pytest.raises(InputError, match="changed while it was being read; run again") as caught:
        read_to_end(_Rewritten(content, real), path)
    assert caught.value.file == str(path)
    with path.open("rb") as real:
        assert read_to_end(_Rewritten(b"01234567", real), path) == b"01234567"


def test_a_byte_order_mark_before_json_is_skipped(tmp_path):
    path = tmp_path / "label_map.json"
    path.write_bytes(BOM + b'{"Text": "Body"}')
    assert read_json(path) == {"Text": "Body"}
    assert read_stamped(path, json_text=True)[0::2] == (b'{"Text": "Body"}', 3)
    assert read_bytes(path) == BOM + b'{"Text": "Body"}'  # only a JSON text loses it
