"""What every `tore score` command shares: the unmutated samples the mutation tests start from are
valid, and each scorer refuses deep nesting and repeated keys with the one JSON reader's message
(tore_engine.inputs), in one paragraph and exit code 2."""

from __future__ import annotations

import shutil

from tests.cli.helpers import docile_dataset, run_cli
from tests.helpers import FUNSD_FORM, shared_path
from tests.helpers import write_json as write


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
