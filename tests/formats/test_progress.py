"""Readers report progress through `advance`, and readers in threads stop when asked to; both
sides of a pair read at once give what reading them one after the other gives, errors included."""

from __future__ import annotations

import contextvars
import json
import threading

import pytest

import tore_engine.api as formats
import tore_engine.io.json as json_rules
from tests.helpers import layout_json, load_vector, write_json
from tore_engine.core.errors import InputError
from tore_engine.formats.progress import ReadingStopped, advance, reading, stoppable


def test_a_set_stop_event_stops_a_reader_in_another_thread():
    seen, outcome = [], {}
    with reading(seen.append), stoppable() as stop:
        context = contextvars.copy_context()

    def reader():
        try:
            context.run(advance, 10)
            stop.set()
            context.run(advance, 10)
        except ReadingStopped:
            outcome["stopped"] = True

    thread = threading.Thread(target=reader)
    thread.start()
    thread.join()
    assert seen == [10] and outcome == {"stopped": True}
    advance(5)  # outside the context: nothing to stop, nothing to report


@pytest.fixture
def read_at_once(monkeypatch):
    """Small files read as the large ones are: both at once, through the compiled parser."""
    from tore_engine.formats import page_parser

    if "numba is not installed" in page_parser.warm():
        pytest.skip("numba is not installed: files are read one after the other")
    monkeypatch.setattr(json_rules, "KERNEL_MIN_BYTES", 0)
    calls = []
    both = formats._load_both
    monkeypatch.setattr(formats, "_load_both", lambda *args: calls.append(args) or both(*args))
    return calls


def test_both_sides_at_once_equal_one_after_the_other(tmp_path, read_at_once):
    pages = load_vector("tore_public_pages.json")
    paths = [write_json(tmp_path / f"{side}.json", pages[side]) for side in ("reference", "prediction")]
    together = formats.load_pair(*paths)
    assert read_at_once, "the pair was not read at once"
    apart = [formats.load(path) for path in paths]
    for a, b in zip(together, apart):
        assert (a.name, a.page_ids(), [p.bboxes.tolist() for p in a.pages], [p.labels for p in a.pages]) == \
               (b.name, b.page_ids(), [p.bboxes.tolist() for p in b.pages], [p.labels for p in b.pages])


@pytest.mark.parametrize("bad", ["reference", "prediction", "both"])
def test_the_error_is_the_one_reading_in_order_gives(tmp_path, read_at_once, bad):
    good = layout_json("m", [{"id": "p", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 5, 5]}]}])
    broken = json.dumps(good)[:-3]  # cut short
    paths = []
    for side in ("reference", "prediction"):
        path = tmp_path / f"{side}.json"
        path.write_text(broken if bad in (side, "both") else json.dumps(good))
        paths.append(path)
    with pytest.raises(InputError) as together:
        formats.load_pair(*paths)
    assert read_at_once
    expected = paths[0] if bad in ("reference", "both") else paths[1]
    with pytest.raises(InputError) as alone:
        formats.load(expected)
    assert together.value.paragraph() == alone.value.paragraph()
