"""Hostile input for every `tore score` command: mutated real files end in a result or in one
paragraph and exit code 2, never a traceback."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pytest
from tests.helpers import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_hostile import HOSTILE, json_values, mutated, paths_of, run_cli

from tore_engine.docile import Field
from tore_engine.errors import InputError

DOCILE_ID = "516f2d61ea404b30a9192a72"
FUNSD_FORM = "82092117"
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def any_mutation(document):
    return st.tuples(st.sampled_from(list(paths_of(document))), st.sampled_from(HOSTILE) | json_values)


def exits_cleanly(*args: str) -> None:
    code, out, err = run_cli(*args)
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.startswith("tore: error: ")


def write(path: Path, document) -> None:
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture(scope="module")
def docile_files():
    dataset = shared_path("data", "docile")
    annotation = json.loads((dataset / "annotations" / f"{DOCILE_ID}.json").read_text())
    fields = [{k: f[k] for k in ("bbox", "page", "fieldtype")} | {"score": 0.5} for f in annotation["field_extractions"]]
    return dataset, annotation, json.loads((dataset / "ocr" / f"{DOCILE_ID}.json").read_text()), {DOCILE_ID: fields}


def docile_dataset(root: Path, annotation, ocr) -> Path:
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "ocr").mkdir(exist_ok=True)
    write(root / "annotations" / f"{DOCILE_ID}.json", annotation)
    write(root / "ocr" / f"{DOCILE_ID}.json", ocr)
    write(root / "dev.json", [DOCILE_ID])
    return root


@EXAMPLES
@given(data=st.data())
def test_docile_mutated_predictions_annotations_and_ocr(tmp_path, docile_files, data):
    _, annotation, ocr, predictions = docile_files
    target = data.draw(st.sampled_from(["predictions", "annotation", "ocr"]))
    documents = {"predictions": predictions, "annotation": annotation, "ocr": ocr}
    documents[target] = mutated(documents[target], *data.draw(any_mutation(documents[target])))
    root = docile_dataset(tmp_path / "dataset", documents["annotation"], documents["ocr"])
    write(tmp_path / "kile.json", documents["predictions"])
    exits_cleanly("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")


@pytest.fixture(scope="module")
def funsd_form():
    folder = shared_path("data", "funsd", "funsd", "testing_data")
    return folder, json.loads((folder / "annotations" / f"{FUNSD_FORM}.json").read_text())


@EXAMPLES
@given(data=st.data())
def test_funsd_mutated_prediction_and_reference(tmp_path, funsd_form, data):
    folder, form = funsd_form
    side = data.draw(st.sampled_from(["reference", "prediction"]))
    for name in ("reference", "prediction"):
        (tmp_path / name).mkdir(exist_ok=True)
        document = mutated(form, *data.draw(any_mutation(form))) if name == side else form
        write(tmp_path / name / f"{FUNSD_FORM}.json", document)
    shutil.copy(folder / "images" / f"{FUNSD_FORM}.png", tmp_path / "reference" / f"{FUNSD_FORM}.png")
    exits_cleanly("score", "funsd", "--reference", str(tmp_path / "reference"), "--prediction", str(tmp_path / "prediction"), "--json")


@EXAMPLES
@given(data=st.data())
def test_ec_funsd_mutated_prediction(tmp_path, data):
    gold = json.loads(shared_path("data", "funsd", "ec_funsd", "jsons", f"{FUNSD_FORM}.json").read_text())
    prediction = {"label_entities": gold.get("label_entities", []), "label_linkings": gold.get("label_linkings", [])}
    for name, document in (("reference", gold), ("prediction", mutated(prediction, *data.draw(any_mutation(prediction))))):
        (tmp_path / name).mkdir(exist_ok=True)
        write(tmp_path / name / f"{FUNSD_FORM}.json", document)
    exits_cleanly("score", "ec-funsd", "--reference", str(tmp_path / "reference"), "--prediction", str(tmp_path / "prediction"), "--json")


@pytest.fixture(scope="module")
def omnidocbench_files():
    reference = json.loads(shared_path("data", "omnidocbench", "OmniDocBench_demo.json").read_text())
    layout = json.loads(shared_path("data", "omnidocbench", "pred_layout_detection", "detection_prediction.json").read_text())
    return reference[:2], layout


@EXAMPLES
@given(data=st.data())
def test_omnidocbench_mutated_reference_and_layout(tmp_path, omnidocbench_files, data):
    reference, layout = omnidocbench_files
    side = data.draw(st.sampled_from(["reference", "layout"]))
    documents = {"reference": reference, "layout": layout}
    documents[side] = mutated(documents[side], *data.draw(any_mutation(documents[side])))
    write(tmp_path / "OmniDocBench.json", documents["reference"])
    write(tmp_path / "layout.json", documents["layout"])
    exits_cleanly("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"), "--layout", str(tmp_path / "layout.json"), "--json")


def test_the_unmutated_inputs_are_valid(tmp_path, docile_files, funsd_form, omnidocbench_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", predictions)
    assert run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")[0] == 0
    folder, _ = funsd_form
    assert run_cli("score", "funsd", "--reference", str(folder / "annotations"), "--prediction", str(folder / "annotations"), "--json")[0] == 0
    reference, layout = omnidocbench_files
    write(tmp_path / "OmniDocBench.json", reference)
    write(tmp_path / "layout.json", layout)
    assert run_cli("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"), "--layout", str(tmp_path / "layout.json"), "--json")[0] == 0
    ec = shared_path("data", "funsd", "ec_funsd", "jsons")
    assert run_cli("score", "ec-funsd", "--reference", str(ec), "--prediction", str(ec), "--json")[0] == 0


# --- issue 10, "Safe to serve": each case found on main, now one paragraph and exit 2 (or a warning) ---


def deeply_nested(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def test_deeply_nested_json_is_refused_before_parsing_by_every_scorer(tmp_path, docile_files, funsd_form):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    nested = tmp_path / "nested.json"
    nested.write_text(deeply_nested(), encoding="utf-8")
    (root / "deep.json").write_text(deeply_nested(), encoding="utf-8")
    folder, form = funsd_form
    (tmp_path / "ref").mkdir(), (tmp_path / "pred").mkdir()
    write(tmp_path / "ref" / f"{FUNSD_FORM}.json", form)
    (tmp_path / "pred" / f"{FUNSD_FORM}.json").write_text(deeply_nested(), encoding="utf-8")
    runs = [
        ("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(nested)),
        ("score", "docile", "--dataset", str(root), "--split", "deep", "--kile", str(nested)),
        ("score", "funsd", "--reference", str(tmp_path / "ref"), "--prediction", str(tmp_path / "pred")),
        ("score", "ec-funsd", "--reference", str(tmp_path / "pred"), "--prediction", str(tmp_path / "pred")),
        ("score", "omnidocbench", "--reference", str(nested)),
    ]
    for args in runs:
        code, out, err = run_cli(*args)
        assert (code, out) == (2, ""), args
        assert "is nested more than 64 levels deep (line 1, column 65)" in err and err.count("\n") == 1, err


def test_the_scorers_share_one_json_reader_and_its_messages(tmp_path, docile_files, funsd_form):
    """The same broken text gives the same message from every scorer (tore_engine.inputs)."""
    _, annotation, ocr, _ = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    broken = tmp_path / "broken.json"
    broken.write_text('{"a": 1, "a": 2}', encoding="utf-8")
    shutil.copy(broken, tmp_path / "dataset" / "repeated.json")
    (tmp_path / "ref").mkdir()
    shutil.copy(broken, tmp_path / "ref" / "broken.json")
    expected = "repeats the key 'a' in one object (line 1, column 10); a JSON key may appear once"
    for args in (
        ("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(broken)),
        ("score", "docile", "--dataset", str(root), "--split", "repeated", "--kile", str(broken)),
        ("score", "funsd", "--reference", str(tmp_path / "ref"), "--prediction", str(tmp_path)),
        ("score", "ec-funsd", "--reference", str(tmp_path / "ref"), "--prediction", str(tmp_path)),
        ("score", "omnidocbench", "--reference", str(broken)),
    ):
        code, out, err = run_cli(*args)
        assert (code, out) == (2, ""), args
        assert err.endswith((f"broken.json: {expected}\n", f"repeated.json: {expected}\n")) and err.count("\n") == 1, err


def test_a_docid_listed_twice_is_scored_once_with_a_warning(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", predictions)
    once = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    write(root / "dev.json", [DOCILE_ID, DOCILE_ID])
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    assert code == 0 and out == once[1]
    assert json.loads(out)["kile"]["TP"] == len(annotation["field_extractions"]) == 11
    assert err == f"tore: the split lists document {DOCILE_ID} 2 times; it is scored once\n"


@pytest.mark.parametrize("docid", ["../../outside", "/etc/hostname", "sub/../../../outside"])
def test_a_docid_cannot_read_outside_the_dataset_folder(tmp_path, docile_files, docid):
    _, annotation, ocr, _ = docile_files
    root = docile_dataset(tmp_path / "deep" / "dataset", annotation, ocr)
    write(tmp_path / "outside.json", annotation)  # a readable annotation just outside the folder
    write(root / "dev.json", [docid])
    write(tmp_path / "kile.json", {docid: []})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert (code, out) == (2, "")
    assert f"the annotations file of document {docid!r}" in err and "is outside the folder it must stay in" in err


def test_a_symbolic_link_out_of_the_dataset_is_refused(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "elsewhere.json", ocr)
    (root / "ocr" / f"{DOCILE_ID}.json").unlink()
    (root / "ocr" / f"{DOCILE_ID}.json").symlink_to(tmp_path / "elsewhere.json")
    write(tmp_path / "kile.json", predictions)
    code, _, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert code == 2 and "is outside the folder it must stay in" in err


@pytest.mark.parametrize("key, value, problem", [
    ("page", 2**70, "Expected int <= 1048576 (at 516f2d61ea404b30a9192a72[0].page)"),
    ("page", -(2**63) - 1, "Expected int >= -1048576 (at 516f2d61ea404b30a9192a72[0].page)"),
    ("line_item_id", 2**64, "Expected int <= 9223372036854775807 (at 516f2d61ea404b30a9192a72[0].line_item_id)"),
])
def test_integers_beyond_their_bounds_are_schema_errors(tmp_path, docile_files, key, value, problem):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    first = predictions[DOCILE_ID][0] | {key: value}
    write(tmp_path / "kile.json", {DOCILE_ID: [first, *predictions[DOCILE_ID][1:]]})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert (code, out) == (2, "") and err.endswith(f"kile.json: {problem}\n"), err


def test_an_unknown_prediction_key_is_dropped_with_a_warning_as_docile_benchmark_does(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", predictions)
    clean = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    write(tmp_path / "kile.json", {DOCILE_ID: [field | {"confidence": 0.3, "scroe": 1} for field in predictions[DOCILE_ID]]})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"), "--json")
    assert code == 0 and out == clean[1]
    assert "unknown field key(s) 'confidence', 'scroe' ignored, as docile-benchmark ignores them" in err


def test_a_non_finite_iou_threshold_is_refused_by_the_scorer_itself(docile_files):
    from tore_engine.docile import evaluate, load_dataset, score_docile

    dataset_dir, _, _, predictions = docile_files
    dataset = load_dataset(dataset_dir, "dev")
    fields = {DOCILE_ID: [Field(tuple(f["bbox"]), f["page"], f["fieldtype"], score=0.5) for f in predictions[DOCILE_ID]]}
    for threshold in (math.nan, math.inf, -math.inf):
        with pytest.raises(InputError, match="the PCC IoU threshold must be a finite number"):
            evaluate(dataset, fields, None, threshold)
    with pytest.raises(InputError, match="the PCC IoU threshold must be a finite number, got nan"):
        score_docile(dataset_dir, "dev", None, None, math.nan)
    assert evaluate(dataset, fields, None, 1.0).kile.metrics().TP == 11


@pytest.fixture
def omnidocbench_pages(tmp_path, omnidocbench_files):
    reference, _ = omnidocbench_files
    write(tmp_path / "OmniDocBench.json", reference)
    markdown = tmp_path / "markdown"
    markdown.mkdir()
    stems = [Path(page["page_info"]["image_path"]).stem for page in reference]
    (markdown / f"{stems[1]}.md").write_text("Some text.\n", encoding="utf-8")
    return tmp_path / "OmniDocBench.json", markdown, stems[0]


def _special_entry(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # a symbolic-link loop
        path.symlink_to(path)


@pytest.mark.parametrize("kind, problem", [
    ("fifo", "is not a regular file (a device, pipe or socket); expected a file"),
    ("folder", "is a folder; expected a file"),
    ("loop", "cannot be resolved (a symbolic-link loop, or an invalid name)"),
])
def test_a_markdown_entry_that_is_not_a_regular_file_is_refused_never_waited_on(omnidocbench_pages, kind, problem):
    reference, markdown, stem = omnidocbench_pages
    _special_entry(kind, markdown / f"{stem}.md")
    code, out, err = run_cli("score", "omnidocbench", "--reference", str(reference), "--markdown", str(markdown), "--json")
    assert (code, out) == (2, "") and problem in err and f"{stem}.md" in err


def test_a_markdown_link_out_of_the_folder_is_refused(omnidocbench_pages, tmp_path):
    reference, markdown, stem = omnidocbench_pages
    (tmp_path / "secret.md").write_text("outside\n", encoding="utf-8")
    (markdown / f"{stem}.md").symlink_to(tmp_path / "secret.md")
    code, _, err = run_cli("score", "omnidocbench", "--reference", str(reference), "--markdown", str(markdown))
    assert code == 2 and "Markdown file" in err and "is outside the folder it must stay in" in err


@pytest.mark.parametrize("option", ["--layout", "--reference"])
def test_a_device_given_as_a_file_is_refused_before_reading(omnidocbench_pages, option):
    reference, _, _ = omnidocbench_pages
    args = {"--reference": str(reference), option: "/dev/zero"}
    code, out, err = run_cli("score", "omnidocbench", *(item for pair in args.items() for item in pair))
    assert (code, out) == (2, "") and err == "tore: error: file /dev/zero: is not a regular file (a device, pipe or socket); expected a file\n"


def test_a_page_image_name_cannot_leave_the_images_folder(tmp_path, omnidocbench_files):
    reference, _ = omnidocbench_files
    escaped = json.loads(json.dumps(reference))
    escaped[0]["page_info"]["image_path"] = "../../etc/hostname"
    write(tmp_path / "OmniDocBench.json", escaped)
    code, _, err = run_cli("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"))
    assert code == 2 and "page image (page_info.image_path) '../../etc/hostname' is outside the folder it must stay in" in err
