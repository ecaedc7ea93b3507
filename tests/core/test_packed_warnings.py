"""PackedWarnings reads back, index by index, slice by slice and in order, exactly the warnings packed."""

import pickle

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tore_engine.core import packed_warnings
from tore_engine.core.errors import InputWarning
from tore_engine.core.packed_warnings import PackedWarnings, warning_rows

TEXT = st.text(max_size=12)  # lone surrogates too: such a chunk is kept unpacked
WARNINGS = st.lists(st.builds(InputWarning, st.none() | TEXT, st.none() | st.integers(0, 2**40), st.sampled_from([None, "reference", "prediction"]), TEXT),
                    max_size=40)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(packed_warnings, "CHUNK", 3)  # reads cross chunks' bounds


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(WARNINGS, max_size=5), packed=st.lists(st.booleans(), min_size=5, max_size=5))
def test_every_read_equals_the_list(parts, packed):
    expected = [warning for part in parts for warning in part]
    joined = PackedWarnings.joined([PackedWarnings.of(part) if pack else part for part, pack in zip(parts, packed)])
    assert len(joined) == len(expected)
    assert list(joined) == expected
    assert [joined[index] for index in range(-len(expected), len(expected))] == expected + expected
    for start in range(len(expected) + 1):
        for stop in range(start, len(expected) + 2):
            assert joined[start:stop] == expected[start:stop]
            rows = [(warning.page, warning.box, warning.side, warning.message) for warning in expected[start:stop]]
            assert list(warning_rows(joined, start, stop)) == rows == list(warning_rows(expected, start, stop))  # as written, no object made
    assert joined[::2] == expected[::2]
    assert joined == expected and pickle.loads(pickle.dumps(joined)) == expected


def test_out_of_range_and_empty():
    empty = PackedWarnings.joined([[], PackedWarnings.of([])])
    assert len(empty) == 0 and list(empty) == [] and empty[0:5] == []
    with pytest.raises(IndexError):
        empty[0]
    one = PackedWarnings.of([InputWarning("p", 1, "reference", "m")])
    with pytest.raises(IndexError):
        one[1]
    with pytest.raises(IndexError):
        one[-2]


def test_a_numpy_box_index_is_packed_as_an_integer():
    packed = PackedWarnings.of([InputWarning("p", np.int64(7), "prediction", "box clipped")])  # type: ignore[arg-type]
    assert packed[0] == InputWarning("p", 7, "prediction", "box clipped") and type(packed[0].box) is int


def test_packed_chunks_are_kept_when_joined():
    first = PackedWarnings.of([InputWarning(str(page), page, None, "m") for page in range(7)])
    joined = PackedWarnings.joined([first, [InputWarning("x", None, None, "n")]])
    assert repr(joined) == "PackedWarnings(8 warnings in 4 chunks)"  # 3 + 3 + 1 kept, then the list's own


def test_a_lone_surrogate_keeps_its_chunk_unpacked():
    warnings = [InputWarning("\ud800", 1, "reference", "box clipped"), InputWarning("p", None, None, "m\udfff")]
    packed = PackedWarnings.of(warnings)
    assert list(packed) == warnings and packed[1] == warnings[1] and pickle.loads(pickle.dumps(packed)) == warnings


class _Row(msgspec.Struct, array_like=True):  # as a saved evaluation's text decodes a warning
    page: str | None
    box: int | None
    side: str | None
    message: str


def test_rows_of_a_saved_text_are_packed_as_their_warnings():
    warnings = [InputWarning(f"p{i}" if i % 3 else None, i if i % 2 else None, "prediction", f"m{i}") for i in range(8)]
    rows = [_Row(w.page, w.box, w.side, w.message) for w in warnings]
    packed = PackedWarnings.of_rows(rows)
    assert list(packed) == warnings and packed == PackedWarnings.of(warnings)


def test_an_integer_beyond_64_bits_keeps_its_chunk_unpacked():
    warnings = [InputWarning("p", 2**70, None, "m"), InputWarning("q", 1, None, "n")]
    assert list(PackedWarnings.of(warnings)) == warnings
    assert list(PackedWarnings.of_rows([_Row(w.page, w.box, w.side, w.message) for w in warnings])) == warnings
