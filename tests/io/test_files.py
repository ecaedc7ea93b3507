"""Bounded reads: regular files only, read by their size, checked unchanged, byte-order mark skipped, UTF-16 and
UTF-32 refused with the command that converts them."""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from tore_engine.api import load
from tore_engine.core.errors import InputError
from tore_engine.io.files import (
    BOM,
    ENCODING_HEAD_BYTES,
    input_files,
    other_unicode_encoding,
    read_bytes,
    read_stamped,
    read_to_end,
    regular_files,
)
from tore_engine.io.json import (
    read_json,
)


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
        "from tore_engine.io.files import read_bytes\nfrom tore_engine.io.json import read_json\n"
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


def test_a_folder_of_inputs_lists_its_regular_files_by_name(tmp_path):
    for name in ("b.json", "a.json", "c.txt", ".json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "sub.json").mkdir()
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "link.json").symlink_to(tmp_path / "c.txt")
    (tmp_path / "dangling.json").symlink_to(tmp_path / "missing")
    assert [f.name for f in regular_files(tmp_path)] == [".json", "a.json", "b.json", "c.txt", "link.json"]
    assert [f.name for f in input_files(tmp_path, (".json", ".txt"), "files")] == [".json", "a.json", "b.json", "c.txt", "link.json"]
    assert input_files(tmp_path / "a.json", (".parquet",), "files") == [tmp_path / "a.json"]  # a file is read as it is
    with pytest.raises(InputError) as caught:
        input_files(tmp_path, (".dt", ".doctags"), "DocTags files")
    assert (caught.value.file, caught.value.problem) == (str(tmp_path), "holds no DocTags files")


def test_a_folder_that_cannot_be_listed_is_named(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.raises(InputError) as caught:
        regular_files(not_a_folder)
    assert (caught.value.file, caught.value.problem) == (str(not_a_folder), "cannot list the folder (Not a directory)")


# --- text in UTF-16 or UTF-32 (issue 42, C11) -------------------------------------------------------------

LAYOUT = {"name": "m", "pages": [{"id": "Seite-1", "width": 40, "height": 30, "boxes": [{"label": "Überschrift", "bbox": [1, 2, 30, 20]}]}]}
TEXTS = {  # a format's file, and its name
    "tore": (json.dumps(LAYOUT, ensure_ascii=False), "layout.json"),
    "jsonl": ("".join(json.dumps(page, ensure_ascii=False) + "\n" for page in LAYOUT["pages"] * 2), "pages.jsonl"),
    "coco": (json.dumps({"images": [], "categories": [{"id": 1, "name": "Überschrift"}]}, ensure_ascii=False), "coco.json"),
    "docling": (json.dumps({"schema_name": "DoclingDocument", "version": "1.0.0", "name": "d"}), "doc.json"),
    "doctags": ("<doctag><text><loc_1><loc_2><loc_3><loc_4>Grüße</text></doctag>", "p1.dt"),
}
MARKS = {"UTF-16LE": codecs.BOM_UTF16_LE, "UTF-16BE": codecs.BOM_UTF16_BE, "UTF-32LE": codecs.BOM_UTF32_LE, "UTF-32BE": codecs.BOM_UTF32_BE}


def advice(encoding: str, name: str) -> str:
    stem, suffix = name.split(".", 1)
    return f"the text is {encoding[:-2]} ({encoding[-2:]}); TORE reads UTF-8: convert it with `iconv -f {encoding} -t UTF-8 {name} > {stem}.utf8.{suffix}`"


@pytest.mark.parametrize("marked", [True, False], ids=["with a byte-order mark", "without"])
@pytest.mark.parametrize("encoding", MARKS)
@pytest.mark.parametrize("format", ["auto", *TEXTS])
def test_a_text_in_utf16_or_utf32_is_refused_by_every_reader_with_the_command_that_converts_it(tmp_path, format, encoding, marked):
    """RFC 8259 requires UTF-8 for JSON between systems, and TORE reads its files by byte offsets: every
    reader (and `--format auto`) names the file, its encoding and the exact iconv call."""
    text, name = TEXTS["tore" if format == "auto" else format]
    path = tmp_path / name
    path.write_bytes((MARKS[encoding] if marked else b"") + text.encode(encoding))
    with pytest.raises(InputError) as caught:
        load(path, format)
    assert (caught.value.file, caught.value.problem) == (str(path), advice(encoding, name))


@pytest.mark.skipif(shutil.which("iconv") is None, reason="iconv is not installed")
@pytest.mark.parametrize("marked", [True, False], ids=["with a byte-order mark", "without"])
@pytest.mark.parametrize("encoding", MARKS)
def test_the_named_iconv_command_gives_the_layout_the_utf8_file_gives(tmp_path, encoding, marked):
    utf8 = tmp_path / "utf8" / "layout.json"
    utf8.parent.mkdir()
    utf8.write_text(TEXTS["tore"][0], encoding="utf-8")
    path = tmp_path / "layout.json"
    path.write_bytes((MARKS[encoding] if marked else b"") + TEXTS["tore"][0].encode(encoding))
    with pytest.raises(InputError) as caught:
        load(path)
    command = re.search(r"`(iconv [^`]*) > ([^`]*)`", caught.value.problem)
    assert command is not None
    converted = subprocess.run(command.group(1).split(), cwd=tmp_path, capture_output=True, check=True).stdout
    (tmp_path / command.group(2)).write_bytes(converted)
    read, expected = load(tmp_path / command.group(2)), load(utf8)
    assert [(page.id, page.labels, page.bboxes.tolist()) for page in read.pages] == [(page.id, page.labels, page.bboxes.tolist()) for page in expected.pages]
    assert expected.pages[0].labels == ["Überschrift"]


def test_utf8_text_and_binary_files_are_not_taken_for_utf16_or_utf32(tmp_path):
    from PIL import Image

    pyarrow_parquet = pytest.importorskip("pyarrow.parquet")
    pyarrow_parquet.write_table(pytest.importorskip("pyarrow").table({"id": ["p"]}), tmp_path / "t.parquet")
    Image.new("RGB", (3, 3)).save(tmp_path / "i.png")
    Image.new("RGB", (3, 3)).save(tmp_path / "i.jpg")
    Image.new("RGB", (3, 3)).save(tmp_path / "i.pdf")
    heads = [(tmp_path / name).read_bytes()[:ENCODING_HEAD_BYTES] for name in ("t.parquet", "i.png", "i.jpg", "i.pdf")]
    heads += [json.dumps(LAYOUT).encode(), BOM + json.dumps(LAYOUT).encode(), TEXTS["doctags"][0].encode(), b"\t\n {", b"{", b""]
    assert [other_unicode_encoding(head) for head in heads] == [None] * len(heads)
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(TEXTS["tore"][0].encode("latin-1"))
    with pytest.raises(InputError, match="the text is not UTF-8"):
        load(latin1)
