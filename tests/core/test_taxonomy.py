"""Single and dual taxonomies, their class names, and label maps."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace

import pytest

from tests.helpers import layout_json, load_shared_json, one_page, shared_path
from tore_engine.api import load_pair
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.core.taxonomy import (
    DOCLING,
    DOCTAGS,
    VOCABULARIES,
    apply_label_map,
    in_vocabulary_order,
    label_map_warnings,
    resolve_taxonomy,
)
from tore_engine.formats.native import from_document as from_native
from tore_engine.run.runner import evaluate_dataset


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


def test_dual_names_that_collide_after_prefixing_are_an_error_naming_them():
    with pytest.raises(InputError, match=r"collide .*'r_a_b' \(reference label 'a_b' and prediction label 'b'\)"):
        resolve_taxonomy(layout("r", ["a_b"]), layout("r_a", ["b"]), "dual")


def test_background_as_a_label_is_an_error_unless_the_label_map_renames_it():
    for mode in ("auto", "dual"):
        with pytest.raises(InputError, match="prediction uses the label 'Background'"):
            resolve_taxonomy(layout("gt", ["a"]), layout("m", ["Background", "a"]), mode)
    renamed = apply_label_map(layout("m", ["Background", "a"]), {"Background": "backdrop"})
    assert resolve_taxonomy(layout("gt", ["a"]), renamed).classes == ["Background", "gt_a", "m_a", "m_backdrop"]


def test_label_map_keys_that_match_no_label_are_warned():
    warnings = label_map_warnings({"a": "x", "Tabel": "Table", "z": "a"}, layout("gt", ["a"]), layout("m", ["b"], ["b", "z"]))
    assert [w.to_json() for w in warnings] == [
        {"page": None, "box": None, "side": None, "message": "label map key 'Tabel' is no label of the reference or the prediction; it had no effect"}
    ]


def test_thousands_of_classes_end_in_a_clear_error_or_a_result():
    labels = [f"class-{k}" for k in range(1500)]
    boxes = [{"label": l, "bbox": [k % 40, k // 40, k % 40 + 1, k // 40 + 1]} for k, l in enumerate(labels)]
    evaluation = evaluate_dataset(one_page(boxes, 40, 40, labels), one_page(boxes[:10], 40, 40, labels))
    assert evaluation.taxonomy.size == 1501 and evaluation.matrices.full.confusion[1, 1] == 1
    with pytest.raises(InputError, match="more than 2048"):
        evaluate_dataset(one_page(boxes, 40, 40, labels), one_page(boxes, 40, 40, labels + ["z"]), taxonomy="dual")


HOSTILE_NAMES = [f"class-{k}" for k in range(120_000)]  # a 1.4 MB taxonomy: the old duplicate check ran for minutes


@pytest.mark.parametrize("suffix, format", [(".json", "tore"), (".jsonl", "jsonl"), (".parquet", "parquet")])
def test_a_taxonomy_of_120000_names_is_refused_by_its_count(tmp_path, suffix, format):
    """Declared in the native JSON, a JSON Lines header or Parquet metadata, every check on the names
    is linear, and the class limit comes before any work per class."""
    if format == "parquet":
        pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
    writer = importlib.import_module(f"tore_engine.formats.{'native' if format == 'tore' else format}").write
    writer(layout("huge", ["class-7"], HOSTILE_NAMES), tmp_path / f"huge{suffix}")
    writer(layout("model", ["class-7"]), tmp_path / f"model{suffix}")
    reference, prediction = load_pair(tmp_path / f"huge{suffix}", tmp_path / f"model{suffix}", format)
    assert reference.taxonomy == HOSTILE_NAMES
    with pytest.raises(InputError, match=r"the single-taxonomy matrix would have 120,001 classes, more than 2048"):
        evaluate_dataset(reference, prediction)


def test_a_label_map_may_merge_a_taxonomy_too_long_for_a_matrix():
    merged = apply_label_map(layout("huge", ["class-7"], HOSTILE_NAMES), {name: f"group-{k % 3}" for k, name in enumerate(HOSTILE_NAMES)})
    assert resolve_taxonomy(merged, layout("model", ["group-1"])).classes == ["Background", "group-0", "group-1", "group-2"]


def test_unknown_prediction_labels_are_named_twenty_at_most():
    with pytest.raises(InputError, match=r"does not list: 'class-0', 'class-1', .*'class-19' and 119,980 more; use --taxonomy dual"):
        resolve_taxonomy(layout("gt", ["a"], ["a"]), layout("m", ["class-1"], HOSTILE_NAMES), "single")


# --- declared vocabularies (issue 24) ---------------------------------------------------------------


def _docling_set(name: str, labels: list[str]) -> LayoutSet:
    return LayoutSet(name, [Page("d/1", 10, 10, labels, [[0, k, 1, k + 1] for k in range(len(labels))])], vocabulary=DOCLING)


def test_two_sides_of_one_vocabulary_are_single_in_its_order():
    reference, prediction = _docling_set("gt", ["text", "table", "caption"]), _docling_set("model", ["text", "code"])
    taxonomy = resolve_taxonomy(reference, prediction)
    assert taxonomy.mode == "single" and taxonomy.prediction_vocabulary == DOCLING
    assert taxonomy.classes == ["Background", "caption", "table", "text", "code"]  # DocItemLabel's order, not sorted
    assert resolve_taxonomy(reference, replace(prediction, vocabulary=None)).mode == "dual"  # the old rule without it
    assert resolve_taxonomy(reference, replace(prediction, vocabulary=DOCTAGS)).mode == "dual"  # another vocabulary


def test_a_label_outside_the_vocabulary_comes_after_its_labels():
    taxonomy = resolve_taxonomy(_docling_set("gt", ["zeta", "text"]), _docling_set("m", ["alpha", "title"]))
    assert taxonomy.classes == ["Background", "text", "title", "alpha", "zeta"]


def test_the_docling_vocabulary_is_docling_cores():
    labels = pytest.importorskip("docling_core.types.doc.labels", reason="docling-core is not installed (the docling extra)")
    assert VOCABULARIES[DOCLING] == tuple(label.value for label in labels.DocItemLabel)


def test_the_doctags_vocabulary_holds_every_located_token_of_docling_core():
    tokens = pytest.importorskip("docling_core.types.doc.tokens", reason="docling-core is not installed (the docling extra)")
    markers = {"doctag", "page_break"}  # the document and a page break carry no box
    expected = {token.value for token in tokens.DocumentToken} - markers | {token.value.strip("<>") for token in tokens.TableToken}
    assert expected <= set(VOCABULARIES[DOCTAGS]) and len(set(VOCABULARIES[DOCTAGS])) == len(VOCABULARIES[DOCTAGS])


def test_a_docling_item_relabelled_as_code_stays_single(tmp_path):
    """Issue 24, case 6: one text item of a Heron DoclingDocument relabelled `code`, which the
    reference document lacks, used to turn the evaluation dual (18 classes, prefixed, no per-class
    scores); both sides are Docling's one label set."""
    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs docling-core (the docling extra)")
    document = load_shared_json("data", "layouts", "docling_documents", "heron", "2305.03393v1-pg9.json")
    document["texts"][2]["label"] = "code"
    (tmp_path / "heron_code.json").write_text(json.dumps(document), encoding="utf-8")
    reference = shared_path("data", "layouts", "docling_documents", "pre_heron", "2305.03393v1-pg9.json")
    evaluation = evaluate_dataset(*load_pair(reference, tmp_path / "heron_code.json"))
    used = {"caption", "page_header", "section_header", "table", "text", "code"}
    assert evaluation.matrices.mode == "single" and evaluation.classes == ["Background", *in_vocabulary_order(used, DOCLING)]
    assert evaluation.classes[-2:] == ["text", "code"]  # DocItemLabel's order: code after text
    assert evaluation.per_class.loc["code", "support"] == 0 and evaluation.per_class.loc["code", "precision"] == 0


def test_one_reference_document_against_a_folder_stays_single():
    """Issue 24, case 6: a single-document reference against the whole Heron folder (21 classes in
    dual mode before): one taxonomy of the labels either side uses, the folder's other pages warned."""
    pytest.importorskip("docling_core", reason="reading DoclingDocuments needs docling-core (the docling extra)")
    folder = shared_path("data", "layouts", "docling_documents", "heron")
    reference = shared_path("data", "layouts", "docling_documents", "pre_heron", "amt_handbook_sample.json")
    pair = load_pair(reference, folder)
    evaluation = evaluate_dataset(*pair)
    used = set(pair[0].labels_in_use()) | set(pair[1].labels_in_use())
    assert evaluation.matrices.mode == "single" and evaluation.classes == ["Background", *in_vocabulary_order(used, DOCLING)]
    assert evaluation.page_ids == ["amt_handbook_sample/1"]
    assert sum("no reference page" in warning["message"] for warning in evaluation.warnings) == len(pair[1].pages) - 1
