"""The compiled page parser (tore_engine.formats.page_parser) gives msgspec's columns bit for bit
on every page it accepts, accepts the common case, and leaves everything else to msgspec; the
readers built on it (chunked native JSON, JSON Lines, workers' pages) equal the msgspec readers."""

from __future__ import annotations

import json
import math

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tore_engine.formats.native as native
import tore_engine.io.json as json_rules
from tests.helpers import layout_json, load_vector, write_json
from tore_engine.api import load
from tore_engine.core.errors import InputError
from tore_engine.formats import jsonl
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.native_pages import NativePage, add_pages
from tore_engine.formats.page_parser import DONE, MORE, parse_array, parse_pages, warm


@pytest.fixture(scope="module", autouse=True)
def loaded_parser():
    if "numba is not installed" in warm():
        pytest.skip("numba is not installed: the parser is not used")


def by_msgspec(pages: list[bytes]):
    """The columns and page images msgspec's reader gives, or None when msgspec or the reader
    refuses the pages (a polygon of an odd count of numbers)."""
    try:
        decoded = msgspec.json.decode(b"[" + b",".join(pages) + b"]", type=list[NativePage])
        builder = ColumnsBuilder()
        add_pages(builder, decoded)
    except (msgspec.DecodeError, msgspec.ValidationError, InputError):
        return None
    return builder.build(), [(page.image, page.pdf, page.page_no) for page in decoded]


def by_parser(pages: list[bytes]):
    lengths = np.array([len(page) for page in pages], dtype=np.int64)
    ends = np.cumsum(lengths)
    parsed = parse_pages(b"".join(pages), np.column_stack([ends - lengths, ends]))
    if parsed is None:
        return None
    builder = ColumnsBuilder()
    builder.extend(parsed)
    return builder.build(), parsed.images


def bits(columns):
    """Everything of the columns, floats as their bytes (so -0.0 and NaN count)."""
    scores = None if columns.scores is None else columns.scores.tobytes()
    polygons = None if columns.polygons is None else (columns.polygons.offsets.tolist(), columns.polygons.points.tobytes())
    return (columns.ids, columns.sizes.tobytes(), columns.offsets.tolist(), columns.bboxes.tobytes(),
            [columns.vocabulary[code] for code in columns.codes.tolist()], list(columns.vocabulary), scores, polygons)


def assert_same(pages: list[bytes]) -> bool:
    """The parser agrees with msgspec (or declines); True when it accepted the pages."""
    parsed, reference = by_parser(pages), by_msgspec(pages)
    if parsed is None:
        return False
    assert reference is not None, f"the parser accepted pages msgspec refuses: {pages!r}"
    assert bits(parsed[0]) == bits(reference[0])
    assert parsed[1] == reference[1]
    return True


# numbers as JSON text: the fast path's cases and its edges
digits = st.text("0123456789", min_size=1, max_size=20)
number_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(2**64), 2**64).map(str),
    st.builds(lambda sign, whole, fraction, exponent: f"{sign}{whole}{fraction}{exponent}",
              st.sampled_from(["", "-", "+"]), digits, st.sampled_from(["", "."]).flatmap(lambda dot: digits.map(lambda d: dot + d) if dot else st.just("")),
              st.sampled_from(["", "e", "E-", "e+", "e-"]).flatmap(lambda e: st.integers(0, 400).map(lambda k: f"{e}{k}") if e else st.just(""))),
    st.sampled_from(["0", "-0", "-0.0", "0.0", "1e22", "1e23", "1e-22", "1e-23", "9007199254740992", "9007199254740993",
                     "00", "01", "1.", ".5", "1e", "-", "NaN", "Infinity", "true", "null", '"3"', "1.0000000000000000000001"]),
)
strings = st.one_of(
    st.text(max_size=8).map(json.dumps),
    st.text("abcé", max_size=5).map(lambda text: json.dumps(text, ensure_ascii=False)),
    st.sampled_from(['"a\\nb"', '"\\u00e9"', '"tab\there"', '"\xff"', '"Text"', '"Table"', "7", "null"]),
)
spaces = st.sampled_from(["", " ", "\n", " \t\r\n "])


def member(key: str, value: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(spaces, value).map(lambda parts: f'{json.dumps(key)}:{parts[0]}{parts[1]}')


box_members = st.one_of(member("label", strings), member("bbox", st.lists(number_texts, min_size=3, max_size=5).map(lambda values: "[" + ", ".join(values) + "]")),
                        member("score", number_texts | st.just("null")), member("other", number_texts),
                        member("polygon", st.lists(number_texts, max_size=9).map(lambda values: "[" + ", ".join(values) + "]") | st.just("null")))
boxes = st.lists(st.lists(box_members, max_size=4).map(lambda members: "{" + ", ".join(members) + "}"), max_size=4)
page_members = st.one_of(member("id", strings), member("width", number_texts), member("height", number_texts),
                         member("boxes", boxes.map(lambda items: "[" + ",".join(items) + "]")),
                         member("image", strings), member("pdf", strings), member("page_no", number_texts | st.just("null")), member("extra", strings))
pages_text = st.lists(st.tuples(spaces, st.lists(page_members, max_size=7)).map(lambda parts: parts[0] + "{" + ", ".join(parts[1]) + "}"), min_size=1, max_size=3)


@settings(max_examples=600, deadline=None)
@given(pages_text)
def test_on_any_text_the_parser_agrees_with_msgspec_or_declines(pages):
    assert_same([page.encode() for page in pages])


finite_numbers = st.one_of(st.integers(0, 2000), st.floats(0, 2000).map(lambda value: round(value, 2)))
outlines = st.lists(st.tuples(finite_numbers, finite_numbers), min_size=3, max_size=6).map(lambda points: [value for point in points for value in point])
valid_boxes = st.lists(st.fixed_dictionaries({"label": st.sampled_from(["Text", "Table", "Pièce", ""]), "bbox": st.lists(finite_numbers, min_size=4, max_size=4)},
                                             optional={"score": st.none() | st.floats(0, 1), "polygon": st.none() | outlines}), max_size=6)
valid_pages = st.fixed_dictionaries({"id": st.text(min_size=1, max_size=6), "width": finite_numbers, "height": finite_numbers, "boxes": valid_boxes},
                                    optional={"image": st.text(max_size=4), "pdf": st.none() | st.text(max_size=4), "page_no": st.none() | st.integers(-3, 9)})


@settings(max_examples=300, deadline=None)
@given(st.lists(valid_pages, min_size=1, max_size=4), st.booleans())
def test_the_common_case_is_parsed(pages, ascii_only):
    """Pages as writers produce them (`json.dumps`, msgspec) are the parser's, not msgspec's."""
    texts = [json.dumps(page, ensure_ascii=ascii_only).encode() for page in pages]
    escaped = any(b"\\" in text for text in texts)
    assert assert_same(texts) or escaped
    assert assert_same([msgspec.json.encode(page) for page in pages]) or escaped


def test_polygons_are_read_by_the_parser_only_beside_a_bbox_and_of_three_points_at_least():
    """A polygon with its bbox is the parser's (numbers off the fast path included); a polygon
    alone, of fewer than 3 points or of an odd count of numbers is left to msgspec's reader, which
    takes or refuses it."""
    box = '{"label": "a", "bbox": [0, 0, 9, 9], "polygon": [%s]}'
    page = '{"id": "p", "width": 10, "height": 10, "boxes": [%s]}'
    accepted = [box % "0, 0, 9.5, 0, 9, 9.25", box % "1e30, 0.1, 2, 3, 4.000000000000000001, 5, 6, 7", box % "1,2,3,4,5,6" + "," + box % "7,8,9,1,2,3,4,5"]
    for boxes in accepted:
        assert assert_same([(page % boxes).encode()])
    declined = [box % "0, 0, 9, 0", box % "0, 0, 9, 0, 9", box % "", '{"label": "a", "polygon": [0, 0, 9, 0, 9, 9]}']
    for boxes in declined:
        assert not assert_same([(page % boxes).encode()])
    assert by_msgspec([(page % declined[-1]).encode()]) is not None  # a polygon alone: msgspec's reader takes it


def test_numbers_are_msgspecs_to_the_bit():
    """Every number the fast path takes converts as msgspec converts it (correctly rounded)."""
    rng = np.random.default_rng(0)
    texts = [f"{rng.integers(0, 10**rng.integers(1, 16))}.{rng.integers(0, 10**rng.integers(1, 8)):0{rng.integers(1, 8)}d}" for _ in range(4000)]
    texts += [f"{rng.integers(1, 2**53)}e{rng.integers(-22, 23)}" for _ in range(2000)] + ["9007199254740992e-22", "1e22", "4.35", "0.1", "-123.456"]
    for chunk in range(0, len(texts), 500):
        page = {"id": "p", "width": 1, "height": 1}
        boxes = ",".join(f'{{"label":"a","bbox":[{a},{a},{a},{a}]}}' for a in texts[chunk : chunk + 500])
        text = json.dumps(page)[:-1].encode() + b', "boxes": [' + boxes.encode() + b"]}"
        assert assert_same([text])


def test_array_mode_finds_the_pages_and_stops_between_them():
    document = load_vector("tore_public_pages.json")["reference"]
    text = json.dumps(document["pages"]).encode()
    status, offset, pages = parse_array(text, 1, False)
    assert (status, offset) == (DONE, len(text))
    assert pages.ids == [str(page["id"]) for page in document["pages"]]
    assert [text[a:b] for a, b in pages.spans.tolist()] == [json.dumps(page).encode() for page in document["pages"]]
    cut = len(text) // 2
    status, offset, first = parse_array(text[:cut], 1, False)
    assert status == MORE and text[offset:cut].lstrip().startswith(b",") and first.ids == pages.ids[: len(first.ids)]
    status, end, rest = parse_array(text[offset:], 0, True)
    assert status == DONE and first.ids + rest.ids == pages.ids


@pytest.fixture
def small_chunks(monkeypatch):
    """The compiled reader on small files, a few pages at a time (a page must fit in a chunk)."""
    monkeypatch.setattr(json_rules, "KERNEL_MIN_BYTES", 0)
    monkeypatch.setattr(native, "CHUNK_BYTES", 8192)
    monkeypatch.setattr(jsonl, "CHUNK_BYTES", 8192)


def whole_file(path, monkeypatch):
    """What the msgspec reader gives for `path` (the compiled reader switched off)."""
    with monkeypatch.context() as patched:
        patched.setattr(native, "read_compiled", lambda *args, **options: None)
        patched.setattr(native, "parsed", lambda *args: None)
        patched.setattr(jsonl, "parsed", lambda *args: None)
        try:
            return load(path)
        except InputError as error:
            return error.paragraph()


def same_layouts(a, b) -> bool:
    return (a.name, a.taxonomy, a.page_ids(), a.warnings) == (b.name, b.taxonomy, b.page_ids(), b.warnings) and all(
        (x.width, x.height, x.labels, x.bboxes.tobytes(), None if x.scores is None else x.scores.tobytes(), x.image) ==
        (y.width, y.height, y.labels, y.bboxes.tobytes(), None if y.scores is None else y.scores.tobytes(), y.image)
        for x, y in zip(a.pages, b.pages))


@pytest.mark.parametrize("side", ["reference", "prediction"])
def test_native_json_read_in_chunks_equals_the_msgspec_reader(tmp_path, monkeypatch, small_chunks, side):
    document = load_vector("tore_public_pages.json")[side]
    path = write_json(tmp_path / "side.json", {"taxonomy": sorted({box["label"] for page in document["pages"] for box in page["boxes"]}), **document})
    read = load(path)
    assert same_layouts(read, whole_file(path, monkeypatch))
    monkeypatch.setattr(native, "parse", None)  # the compiled reader read it: the whole-file reader is not needed
    assert same_layouts(load(path), read)


@pytest.mark.parametrize(
    "pages, top",
    [
        ([{"id": "p", "width": 10, "height": 10, "boxes": [{"label": "a\\u00e9", "bbox": [0, 0, 5, 5]}]}], {}),  # an escape: msgspec's
        ([{"id": "p", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 5, 5], "score": 0.5}]}], {"name": "after"}),
        ([{"id": "p", "width": 10, "height": 10, "image": "p.png"}, {"id": "q", "width": 1e400, "height": 1}], {}),
        ([{"id": "p", "width": 10, "height": 10, "boxes": [{"label": "a", "bbx": [0, 0, 5, 5]}]}], {}),
        ([{"id": "p", "width": 10, "height": 10}] * 2, {}),
        ([{"id": "p", "width": 10, "height": 10, "pdf": "d.pdf", "page_no": -1}], {}),
    ],
)
def test_the_chunked_reader_gives_the_whole_file_readers_results_and_errors(tmp_path, monkeypatch, small_chunks, pages, top):
    text = json.dumps({"name": "m", "pages": pages}).replace("\\\\u00e9", "\\u00e9")
    if top:
        text = text[:-1] + ", " + json.dumps(top)[1:]
    path = tmp_path / "side.json"
    path.write_text(text)
    try:
        read = load(path)
    except InputError as error:
        read = error.paragraph()
    expected = whole_file(path, monkeypatch)
    assert read == expected if isinstance(expected, str) else same_layouts(read, expected)


def test_json_lines_through_the_parser_equal_msgspecs(tmp_path, monkeypatch, small_chunks):
    document = load_vector("tore_public_pages.json")["prediction"]
    path = tmp_path / "side.jsonl"
    path.write_text("\n".join([json.dumps({"name": "m"})] + [json.dumps(page) for page in document["pages"]]) + "\n")
    assert same_layouts(load(path), whole_file(path, monkeypatch))


def test_a_file_cut_short_is_the_whole_file_readers_error(tmp_path, monkeypatch, small_chunks):
    document = load_vector("tore_public_pages.json")["reference"]
    text = json.dumps(document)
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) * 2 // 3])
    with pytest.raises(InputError) as caught:
        load(path)
    assert caught.value.paragraph() == whole_file(path, monkeypatch)


def test_a_layout_json_helper_file_is_parsed(tmp_path, monkeypatch, small_chunks):
    """A file as the tests and writers make it goes through the parser, not msgspec."""
    path = write_json(tmp_path / "m.json", layout_json("m", [{"id": "p", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 5, math.pi]}]}]))
    monkeypatch.setattr(native, "parse", None)
    monkeypatch.setattr(native, "index", None)
    assert load(path).pages[0].bboxes.tolist() == [[0, 0, 5, math.pi]]
