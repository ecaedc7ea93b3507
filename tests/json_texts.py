"""JSON texts made by Hypothesis for the JSON scan's tests (tests/test_inputs.py, test_json_kernel.py):
objects whose keys may repeat or be written as escapes."""

from __future__ import annotations

import json

from hypothesis import strategies as st

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
