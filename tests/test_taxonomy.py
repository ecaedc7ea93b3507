"""Single and dual taxonomies, their class names, and label maps."""

from __future__ import annotations

import pytest
from conftest import layout_json

from tore_engine.errors import InputError
from tore_engine.formats.native import from_document as from_native
from tore_engine.taxonomy import apply_label_map, resolve_taxonomy


def layout(name, labels, taxonomy=None):
    boxes = [{"label": label, "bbox": [0, 0, 1, 1]} for label in labels]
    return from_native(layout_json(name, [{"id": "p", "width": 5, "height": 5, "boxes": boxes}], taxonomy), f"{name}.json")


def test_auto_is_single_when_prediction_classes_are_reference_classes():
    taxonomy = resolve_taxonomy(layout("gt", ["b"], ["b", "a", "c"]), layout("m", ["a"]))
    assert taxonomy.mode == "single" and taxonomy.classes == ["Background", "b", "a", "c"]
    assert taxonomy.reference_index == taxonomy.prediction_index == {"b": 1, "a": 2, "c": 3}


def test_auto_is_dual_when_a_prediction_class_is_unknown_and_prefixes_use_the_names():
    taxonomy = resolve_taxonomy(layout("heron", ["Table", "Text"]), layout("nvidia", ["table"]))
    assert taxonomy.mode == "dual"
    assert taxonomy.classes == ["Background", "heron_Table", "heron_Text", "nvidia_table"]
    assert taxonomy.prediction_index == {"table": 3}


def test_declared_prediction_taxonomy_counts_for_auto():
    assert resolve_taxonomy(layout("gt", ["a"]), layout("m", ["a"], ["a", "z"])).mode == "dual"


def test_equal_names_fall_back_to_reference_and_prediction():
    taxonomy = resolve_taxonomy(layout("same", ["a"]), layout("same", ["a"]), "dual")
    assert taxonomy.classes == ["Background", "reference_a", "prediction_a"]


def test_forced_single_with_unknown_prediction_labels_is_an_error():
    with pytest.raises(InputError, match="'z'"):
        resolve_taxonomy(layout("gt", ["a"], ["a"]), layout("m", ["z"]), "single")


def test_single_without_declared_taxonomy_uses_the_sorted_union():
    assert resolve_taxonomy(layout("gt", ["b"]), layout("m", ["a"]), "single").classes == ["Background", "a", "b"]


def test_label_map_merges_many_to_one_and_keeps_the_order():
    mapped = apply_label_map(layout("gt", ["Title", "Section-header", "Text"], ["Title", "Text", "Section-header"]), {"Section-header": "Title"})
    assert mapped.taxonomy == ["Title", "Text"]
    assert mapped.pages[0].labels == ["Title", "Title", "Text"]
