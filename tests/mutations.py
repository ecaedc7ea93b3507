"""Hostile input made by Hypothesis: any JSON value, or a valid document with one value anywhere in
it replaced by a hostile one. The loaders and commands that read such input are tested with the
module they attack (tests/formats/test_native.py, test_coco.py, tests/cli/...)."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.helpers import layout_json
from tore_engine.core.errors import InputError

HOSTILE = [None, math.nan, math.inf, -math.inf, 1e308, -1, 0, 2**70, "", "x", [], {}, [1, 2, 3], True, [None] * 4]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)

VALID_NATIVE = layout_json(
    "m",
    [{"id": "p1", "width": 50, "height": 40, "image": "p1.png", "boxes": [{"label": "a", "bbox": [1, 2, 30, 20], "score": 0.4}, {"label": "b", "bbox": [5, 5, 45, 39]}]}],
    ["a", "b"],
)


def paths_of(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths_of(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths_of(child, (*prefix, index))


def mutated(document, path, replacement):
    document = json.loads(json.dumps(document))
    if not path:
        return replacement
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = replacement
    return document


def mutations(document):
    paths = list(paths_of(document))
    return st.tuples(st.sampled_from(paths), st.sampled_from(HOSTILE) | json_values).map(lambda m: mutated(document, *m))


def loads_or_input_error(load, document) -> None:
    try:
        load(document)
    except InputError as error:
        assert error.paragraph() and "\n" not in error.paragraph()


EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def any_mutation(document):
    return st.tuples(st.sampled_from(list(paths_of(document))), st.sampled_from(HOSTILE) | json_values)
