"""`tore score funsd` and `tore score ec-funsd` as a user runs them, against the public corpus vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.cli.helpers import exits_cleanly
from tests.helpers import FUNSD_FORM, shared_path, write_json
from tests.helpers import write_json as write
from tests.mutations import EXAMPLES, any_mutation, mutated
from tests.scorers.funsd.helpers import (
    assert_panel_equal,
    cases,
    corpus_params,
    vectors,
)
from tore_engine.cli import main


def write_folders(tmp_path, section: str, perturbation: str, gt_key: str) -> tuple[str, str]:
    """ref/<doc>.json and pred/<doc>.json for one perturbation, as the vectors README describes."""
    reference, prediction = tmp_path / "ref", tmp_path / "pred"
    reference.mkdir(), prediction.mkdir()
    for case in cases(section, perturbation=perturbation):
        write_json(reference / f"{case['doc']}.json", vectors()["documents"][case["doc"]][gt_key])
        write_json(prediction / f"{case['doc']}.json", case["pred"])
    return str(reference), str(prediction)


def run_json(capsys, *args: str) -> tuple[dict, str]:
    assert main([*args, "--json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


@pytest.mark.parametrize("perturbation", corpus_params("funsd"))
def test_score_funsd_json_equals_the_corpus_vector(tmp_path, capsys, perturbation):
    reference, prediction = write_folders(tmp_path, "funsd_cases", perturbation, "gt")
    result, err = run_json(capsys, "score", "funsd", "--reference", reference, "--prediction", prediction)
    expected = dict(vectors()["corpus_public"]["funsd"][perturbation])
    assert isinstance(result.pop("aggregation"), str) and expected.pop("aggregation")  # informational
    assert_panel_equal(result, expected)
    assert err == ""


@pytest.mark.parametrize("perturbation", corpus_params("ec"))
def test_score_ec_funsd_json_equals_the_corpus_vector(tmp_path, capsys, perturbation):
    reference, prediction = write_folders(tmp_path, "ec_cases", perturbation, "ec_gt")
    result, err = run_json(capsys, "score", "ec-funsd", "--reference", reference, "--prediction", prediction)
    assert_panel_equal(result, vectors()["corpus_public"]["ec"][perturbation])
    assert err == ""


def test_missing_prediction_is_scored_as_empty_and_named(tmp_path, capsys):
    reference, prediction = write_folders(tmp_path, "funsd_cases", "identity", "gt")
    (tmp_path / "pred" / "82491256.json").rename(tmp_path / "pred" / "unpaired.json")
    result, err = run_json(capsys, "score", "funsd", "--reference", reference, "--prediction", prediction)
    assert "scored as empty: 82491256.json" in err and "ignored: unpaired.json" in err
    missing = next(c for c in cases("funsd_cases", perturbation="empty_prediction") if c["doc"] == "82491256")
    identity = vectors()["corpus_public"]["funsd"]["identity"]
    assert result["counts"]["pred_words"] == identity["counts"]["pred_words"] - missing["expected"]["counts"]["gt_words"]
    assert result["entity_detection"]["fn"] == missing["expected"]["entity_detection"]["fn"]


def test_human_summary_shows_null_as_n_a(tmp_path, capsys):
    reference, prediction = write_folders(tmp_path, "ec_cases", "combined", "ec_gt")
    assert vectors()["corpus_public"]["ec"]["combined"]["el_given_gold_entities"] is None
    assert main(["score", "ec-funsd", "--reference", reference, "--prediction", prediction]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "Linking F1, gold entities" in line)
    assert line.split()[4] == "n/a"
    f1 = vectors()["corpus_public"]["ec"]["combined"]["ser_seqeval"]["overall"]["f1"]
    assert "SER F1 (seqeval)" in out and f"{f1:.4f}" in out


def test_the_installed_entry_point_prints_one_json_object(tmp_path):
    reference, prediction = write_folders(tmp_path, "funsd_cases", "ocr_typos", "gt")
    result = subprocess.run(
        [sys.executable, "-m", "tore_engine", "score", "funsd", "--reference", reference, "--prediction", prediction,
         "--json"], capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0 and result.stderr == ""
    expected = vectors()["corpus_public"]["funsd"]["ocr_typos"]["ocr"]
    assert_panel_equal(json.loads(result.stdout)["ocr"], expected)


EMPTY_REFERENCE = {"funsd": {"form": []}, "ec-funsd": {"document": [], "label_entities": [], "label_linkings": []}}


@pytest.mark.parametrize("benchmark", ["funsd", "ec-funsd"])
def test_bad_input_is_one_paragraph_and_exit_2(tmp_path, capsys, benchmark):
    (tmp_path / "ref").mkdir(), (tmp_path / "pred").mkdir()
    write_json(tmp_path / "ref" / "a.json", EMPTY_REFERENCE[benchmark])
    (tmp_path / "pred" / "a.json").write_text("{not json", encoding="utf-8")
    assert main(["score", benchmark, "--reference", str(tmp_path / "ref"), "--prediction", str(tmp_path / "pred"),
                 "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("tore: error: file ") and "pred/a.json: is not valid JSON: object keys must be strings (line 1, column 2)" in err
    assert len(err.strip().splitlines()) == 1


def test_missing_reference_folder_is_an_input_error(tmp_path, capsys):
    assert main(["score", "funsd", "--reference", str(tmp_path / "nowhere"), "--prediction", str(tmp_path)]) == 2
    assert "reference folder does not exist" in capsys.readouterr().err


# --- hostile input ------------------------------------------------------------------------------


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
