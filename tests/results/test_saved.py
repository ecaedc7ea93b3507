"""A saved evaluation (tore_engine.results.saved, docs/cli.md#saved-evaluations): `tore evaluate --out DIR`
leaves what `tore.open(DIR)` reopens without the inputs, and the reopened evaluation writes every
file of DIR again byte for byte; a saved file replaced by a pickle, random or truncated bytes, an
edit, or a folder of another version is an error naming the file, and nothing in it runs."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import pickle
import shutil
import struct
import zipfile
from pathlib import Path

import msgspec
import numpy as np
import pytest

import tore_engine as tore
from tests.cli.helpers import run_cli
from tests.helpers import DEMO, write_json
from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.packed_warnings import PackedWarnings
from tore_engine.results.saved import ARRAYS, MANIFEST, TEXT, open_saved, read_manifest, saved_evaluations, write_saved
from tore_engine.run.runner import evaluate_dataset
from tore_engine.writers.outputs import write_outputs


def _evaluated(tmp_path: Path, prediction: str = "model_a.json", *options: str) -> Path:
    """The demo's reference and a model evaluated into DIR from copies of the inputs, which are then removed."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("reference.json", prediction):
        shutil.copy(DEMO / name, inputs / name)
    out = tmp_path / "out"
    code, _, err = run_cli("evaluate", str(inputs / "reference.json"), str(inputs / prediction), "--out", str(out), "--cells", "-q", *options)
    assert code == 0, err
    shutil.rmtree(inputs)  # reopened without its inputs
    return out


@pytest.fixture(scope="module")
def saved_a(tmp_path_factory):
    return _evaluated(tmp_path_factory.mktemp("saved"), "model_a.json", "--sweep", "--min-score", "0.3")


def _rewritten(evaluation, tmp_path: Path, reports: list[str]) -> Path:
    again = tmp_path / "again"
    again.mkdir()
    write_outputs(evaluation.report_content(), again, reports)
    return again


def test_a_reopened_evaluation_writes_every_file_again_byte_for_byte(saved_a, tmp_path):
    evaluation = tore.open(saved_a)
    again = _rewritten(evaluation, tmp_path, ["cells", "sweep"])
    written = sorted(path.name for path in again.iterdir())
    assert written == sorted(name for name in os.listdir(saved_a) if name.endswith((".csv", ".json")) and not name.startswith("saved"))
    for name in written:
        assert (again / name).read_bytes() == (saved_a / name).read_bytes(), name
    assert evaluation.to_json() == json.loads((saved_a / "report.json").read_text())


def test_its_tables_are_the_written_ones(saved_a):
    evaluation = tore.open(saved_a)
    with (saved_a / "pages.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    pages = evaluation.pages
    assert pages.index.tolist() == [row["page"] for row in rows]
    for column in ("pixels", "foreground_f1", "map"):
        written = [float(row[column]) if row[column] else np.nan for row in rows]
        assert np.array_equal(pages[column].to_numpy(float), np.array(written), equal_nan=True), column
    with (saved_a / "cells.csv").open(newline="") as handle:
        cells = [row for row in csv.DictReader(handle) if (row["reference_class"], row["predicted_class"]) == ("Text", "Table")]
    behind = evaluation.pages_for_cell("Text", "Table")
    assert cells and sorted(behind["page"]) == sorted(row["page"] for row in cells)
    assert dict(zip(behind["page"], behind["pixels"])) == {row["page"]: float(row["pixels"]) for row in cells}
    report = json.loads((saved_a / "report.json").read_text())
    assert evaluation.per_class[["recall", "precision", "f1"]].to_dict("index") == report["per_class"]
    assert evaluation.map is not None and evaluation.map.to_json() == report["map"]
    assert evaluation.warnings == report["warnings"] and any("scored below" in w["message"] for w in report["warnings"])


def test_dual_taxonomy_without_map_reopens(tmp_path):
    out = _evaluated(tmp_path, "model_b.json")
    evaluation = tore.open(out / "report.json")  # the folder's report.json names it too
    report = json.loads((out / "report.json").read_text())
    assert report["mode"] == "dual" and report["map"] is None and report["map_reason"]
    assert evaluation.to_json() == report
    again = _rewritten(evaluation, tmp_path, ["cells"])
    assert (again / "pages.csv").read_bytes() == (out / "pages.csv").read_bytes()
    assert (again / "cells.csv").read_bytes() == (out / "cells.csv").read_bytes()


def test_python_integers_beyond_int64_come_back_exact(tmp_path):
    """Three pages of 2^31 x 2^31 pixels: the sweep's counts sum past int64 and are saved as decimal text."""
    side = 2**31
    pages = [{"id": f"p{k}", "width": side, "height": side, "boxes": [{"label": "Text", "bbox": [0, 0, side, side]}]} for k in range(3)]
    predicted = [{**page, "boxes": [{"label": "Text", "bbox": [0, 0, side / 2, side], "score": 0.9}]} for page in pages]
    reference = write_json(tmp_path / "r.json", {"name": "gt", "pages": pages})
    prediction = write_json(tmp_path / "p.json", {"name": "model", "pages": predicted})
    evaluation = evaluate_dataset(*tore.load_pair(reference, prediction), sweep=True)
    write_saved(evaluation, tmp_path)
    assert json.loads((tmp_path / TEXT).read_text())["decimal_integers"]  # the path under test is taken
    reopened = open_saved(tmp_path)
    assert reopened.sweep_state is not None and evaluation.sweep_state is not None
    assert reopened.sweep_state.reduced.tolist() == evaluation.sweep_state.reduced.tolist()
    assert max(reopened.sweep_state.reduced.ravel().tolist()) > np.iinfo(np.int64).max
    assert reopened.page_pixels.tolist() == [side * side] * 3
    assert reopened.to_json() == evaluation.to_json() and reopened.sweep().equals(evaluation.sweep())


# --- untrusted folders ----------------------------------------------------------------------------


class _Planted:
    """Unpickling this creates a file: proof that a pickle was run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _copy(saved: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "copy"
    shutil.copytree(saved, folder)
    return folder


def _resealed(folder: Path, name: str) -> None:
    """The manifest made to agree with the file's new bytes, as an attacker would."""
    manifest = json.loads((folder / MANIFEST).read_text())
    data = (folder / name).read_bytes()
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / MANIFEST).write_text(json.dumps(manifest))


def _refused(folder: Path, name: str, *words: str) -> str:
    with pytest.raises(InputError) as raised:
        tore.open(folder)
    message = str(raised.value)
    assert str(folder / name) in message and all(word in message for word in words), message
    return message


@pytest.mark.parametrize("name", [ARRAYS, TEXT, MANIFEST])
def test_a_pickle_in_place_of_a_file_is_refused_and_never_run(saved_a, tmp_path, name):
    folder = _copy(saved_a, tmp_path)
    marker = tmp_path / "ran"
    (folder / name).write_bytes(pickle.dumps(_Planted(marker)))
    if name != MANIFEST:
        _resealed(folder, name)
    _refused(folder, name)
    assert not marker.exists()


def test_an_object_array_inside_the_archive_is_refused_and_never_run(saved_a, tmp_path):
    folder = _copy(saved_a, tmp_path)
    marker = tmp_path / "ran"
    with zipfile.ZipFile(folder / ARRAYS) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    planted = io.BytesIO()
    np.save(planted, np.array([_Planted(marker)], dtype=object), allow_pickle=True)
    members["tore.page_pixels.npy"] = planted.getvalue()
    with zipfile.ZipFile(folder / ARRAYS, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    _resealed(folder, ARRAYS)
    _refused(folder, ARRAYS, "tore.page_pixels")
    assert not marker.exists()


@pytest.mark.parametrize("name", [ARRAYS, TEXT, MANIFEST])
def test_random_or_truncated_bytes_are_refused_naming_the_file(saved_a, tmp_path, name):
    for damage in ("random", "truncated", "random resealed", "truncated resealed"):
        folder = tmp_path / damage
        shutil.copytree(saved_a, folder)
        data = (folder / name).read_bytes()
        damaged = np.random.default_rng(0).bytes(len(data)) if damage.startswith("random") else data[: len(data) // 2]
        (folder / name).write_bytes(damaged)
        if damage.endswith("resealed") and name != MANIFEST:
            _resealed(folder, name)
        _refused(folder, name)


def test_each_array_is_viewed_in_place_at_a_multiple_of_64_bytes(saved_a, tmp_path):
    data = (saved_a / ARRAYS).read_bytes()
    with zipfile.ZipFile(saved_a / ARRAYS) as archive:
        infos = archive.infolist()
    for info in infos:
        name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
        start = info.header_offset + 30 + name_length + extra_length
        header = io.BytesIO(data[start:start + info.file_size])
        np.lib.format.read_array_header_1_0(header, max_header_size=10_000) if np.lib.format.read_magic(header) == (1, 0) else None
        assert start % 64 == 0 and header.tell() % 64 == 0, info.filename  # so an array's first value is too
    evaluation = tore.open(saved_a)
    for again in ("again", "once more"):
        (tmp_path / again).mkdir()
        write_saved(evaluation, tmp_path / again)
    assert (tmp_path / "again" / ARRAYS).read_bytes() == (tmp_path / "once more" / ARRAYS).read_bytes()  # no time stamp in the members

    def buffer(array: np.ndarray) -> object:
        while isinstance(array.base, np.ndarray):
            array = array.base
        return array.base.obj if isinstance(array.base, memoryview) else array.base

    arrays = (evaluation.contribution_value, evaluation.page_reduced, evaluation.contribution_cell)
    assert all(array.flags.writeable for array in arrays)  # as NumPy's own
    assert len({id(buffer(array)) for array in arrays}) == 1 and isinstance(buffer(arrays[0]), bytearray)  # views of one read, no copy


def test_a_damaged_member_inside_a_resealed_archive_is_refused(saved_a, tmp_path):
    with zipfile.ZipFile(saved_a / ARRAYS) as archive:
        first = archive.infolist()[0]
    data = bytearray((saved_a / ARRAYS).read_bytes())
    for damage, at, value in (("signature", first.header_offset, b"XX"), ("npy magic", None, b"\x00NUMPY")):
        folder = tmp_path / damage
        shutil.copytree(saved_a, folder)
        damaged = bytearray(data)
        if at is None:
            name_length, extra_length = struct.unpack_from("<HH", data, first.header_offset + 26)
            at = first.header_offset + 30 + name_length + extra_length
        damaged[at:at + len(value)] = value
        (folder / ARRAYS).write_bytes(bytes(damaged))
        _resealed(folder, ARRAYS)
        _refused(folder, ARRAYS)


def test_an_array_with_fewer_bytes_than_its_shape_is_refused(saved_a, tmp_path):
    folder = _copy(saved_a, tmp_path)
    with np.load(folder / ARRAYS, allow_pickle=False) as archive:
        arrays = dict(archive)
    short = io.BytesIO()
    np.save(short, arrays["tore.page_pixels"])
    with zipfile.ZipFile(folder / ARRAYS, "w") as archive:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.save(buffer, array)
            archive.writestr(f"{name}.npy", buffer.getvalue()[:-8] if name == "tore.page_pixels" else buffer.getvalue())
    _resealed(folder, ARRAYS)
    _refused(folder, ARRAYS, "tore.page_pixels", "cannot be read")


def test_warnings_are_made_when_first_read_and_equal_report_jsons(saved_a, monkeypatch):
    made, init = [], InputWarning.__init__
    monkeypatch.setattr(InputWarning, "__init__", lambda self, *fields: made.append(fields) or init(self, *fields))
    evaluation = open_saved(saved_a)
    assert made == [] and isinstance(evaluation.input_warnings, PackedWarnings)  # none made by the opening: packed from the text's rows
    monkeypatch.undo()
    written = json.loads((saved_a / "report.json").read_text())["warnings"]
    assert len(evaluation.input_warnings) == len(written) > 0
    assert [warning.to_json() for warning in evaluation.input_warnings] == written
    assert [warning.to_json() for warning in evaluation.input_warnings[1:3]] == written[1:3] and evaluation.input_warnings[-1].to_json() == written[-1]


def test_an_edit_is_refused_even_with_the_manifest_resealed(saved_a, tmp_path):
    folder = _copy(saved_a, tmp_path)
    (folder / TEXT).write_bytes((folder / TEXT).read_bytes().replace(b'"Text"', b'"Txet"', 1))
    _refused(folder, TEXT, "SHA-256")
    text = msgspec.json.decode((folder / TEXT).read_bytes())
    text["page_ids"] = text["page_ids"][:-1]  # one page fewer than the arrays have
    (folder / TEXT).write_bytes(msgspec.json.encode(text))
    _resealed(folder, TEXT)
    _refused(folder, ARRAYS, "rows")
    text["page_ids"].append(text["page_ids"][0])
    (folder / TEXT).write_bytes(msgspec.json.encode(text))
    _resealed(folder, TEXT)
    _refused(folder, TEXT, "page id twice")


def test_an_index_out_of_range_is_refused_before_use(saved_a, tmp_path):
    folder = _copy(saved_a, tmp_path)
    with np.load(folder / ARRAYS, allow_pickle=False) as archive:
        arrays = dict(archive)
    arrays["tore.contribution_cell"] = arrays["tore.contribution_cell"].copy()
    arrays["tore.contribution_cell"][0] = 10**6
    np.savez(folder / ARRAYS, **arrays)
    _resealed(folder, ARRAYS)
    _refused(folder, ARRAYS, "tore.contribution_cell", "outside")


def test_contributions_out_of_page_order_are_refused(saved_a, tmp_path):
    """The evaluation holds where each page's contributions start: a folder whose pages are not in
    order (none tore evaluate writes) is refused, not read as other pages' contributions."""
    folder = _copy(saved_a, tmp_path)
    with np.load(folder / ARRAYS, allow_pickle=False) as archive:
        arrays = dict(archive)
    pages = arrays["tore.contribution_page"]
    assert pages[0] < pages[-1]
    arrays["tore.contribution_page"] = pages[::-1].copy()
    np.savez(folder / ARRAYS, **arrays)
    _resealed(folder, ARRAYS)
    _refused(folder, ARRAYS, "tore.contribution_page", "page order")


def test_another_version_or_a_foreign_folder_says_why(saved_a, tmp_path):
    folder = _copy(saved_a, tmp_path)
    manifest = json.loads((folder / MANIFEST).read_text())
    (folder / MANIFEST).write_text(json.dumps({**manifest, "version": 2, "product_version": "9.0.0", "new_field": 1}))
    _refused(folder, MANIFEST, "format version 2", "9.0.0", "reads format version 1")
    (folder / MANIFEST).write_text(json.dumps({**manifest, "parts": [*manifest["parts"], "errors"]}))
    _refused(folder, MANIFEST, "'errors'", "newer version")
    (folder / MANIFEST).write_text(json.dumps({**manifest, "format": "something-else"}))
    _refused(folder, MANIFEST, "something-else")
    (folder / MANIFEST).unlink()
    with pytest.raises(InputError, match="no saved.json: it was written by a version of tore evaluate before"):
        read_manifest(folder)
    with pytest.raises(InputError, match="is no saved evaluation"):
        tore.open(tmp_path / "empty")



def test_without_the_sweep_only_maps_summary_is_kept_and_a_merge_is_refused(tmp_path, saved_a):
    out = _evaluated(tmp_path, "model_a.json")
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["parts"] == ["tore", "map", "boxes"]  # no match records: a 100,000-page folder is 160 MB smaller
    with np.load(out / ARRAYS, allow_pickle=False) as archive:
        assert not any(name.startswith("map.") and name != "map.pages" for name in archive.files)
    evaluation = tore.open(out)
    assert evaluation.to_json() == json.loads((out / "report.json").read_text())
    with pytest.raises(ValueError, match="keeps mAP's summary, not its records"):
        evaluation.merge(tore.open(saved_a))
    assert json.loads((saved_a / MANIFEST).read_text())["parts"] == ["tore", "map", "map_records", "sweep", "boxes"]


def test_a_search_for_saved_evaluations_is_bounded(saved_a, tmp_path):
    for where in ("a", "b/c", ".hidden/d", "1/2/3/4/5"):
        (tmp_path / where).mkdir(parents=True)
        shutil.copy(saved_a / MANIFEST, tmp_path / where / MANIFEST)
    (tmp_path / "b" / "c" / MANIFEST).write_text("{}")  # listed as the error that names it
    found = saved_evaluations(tmp_path)
    assert [item.folder.name for item in found if not isinstance(item, InputError)] == ["a"]
    assert [str(tmp_path / "b" / "c" / MANIFEST) in str(item) for item in found if isinstance(item, InputError)] == [True]


def test_box_outcomes_reopen_as_their_summary(saved_a):
    """TIDE's summary and each page's counts are saved (part `boxes`), not its decisions box by box:
    the reopened evaluation's `errors` and pages are report.json's and pages.csv's, `boxes` needs the
    inputs (gone), and a merge, which needs the decisions, is refused."""
    evaluation = tore.open(saved_a)
    report = json.loads((saved_a / "report.json").read_text())
    assert report["errors"] is not None and evaluation.errors == report["errors"]
    assert "boxes" in read_manifest(saved_a).manifest.parts
    with pytest.raises(ValueError, match="no inputs"):
        _ = evaluation.boxes
    with pytest.raises(ValueError, match="TIDE's summary, not its decisions"):
        evaluation.merge(evaluation)


def test_box_counts_that_do_not_fit_are_refused(saved_a, tmp_path):
    folder = _copy(saved_a, tmp_path)
    with np.load(folder / ARRAYS, allow_pickle=False) as archive:
        arrays = dict(archive)
    arrays["boxes.page_counts"] = -arrays["boxes.page_counts"] - 1
    np.savez(folder / ARRAYS, **arrays)
    _resealed(folder, ARRAYS)
    _refused(folder, ARRAYS, "boxes.page_counts")
