"""The compiled JSON scan (tore_engine.io.json_compiled) finds what the NumPy scan finds, or refuses the same."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.json_texts import documents, encode
from tore_engine.core.errors import InputError
from tore_engine.io.json import MAX_JSON_DEPTH, scan_json


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


@settings(max_examples=300, deadline=None)
@given(documents, st.booleans(), st.integers(2, 6))
def test_the_compiled_scan_agrees_with_the_numpy_scan(value, escape_keys, max_depth):
    data = encode(value, escape_keys).encode()
    assert verdict(data, True, max_depth) == verdict(data, False, max_depth)
