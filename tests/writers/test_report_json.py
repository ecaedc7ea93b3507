"""report.json's encoder (`write_report_json`) against the one it replaced, the standard library's
`json.dump(report, indent=1, ensure_ascii=True)`: the same bytes for every report the tests make
(single and dual taxonomy, hostile names, mAP, the sweep), for floats of every magnitude, and for
what its fast path leaves to the standard library (NaN, a lone surrogate)."""

from __future__ import annotations

import csv
import json
import math
import struct

import numpy as np
import pytest

from tests import report_data
from tests.helpers import DEMO
from tore_engine.api import evaluate
from tore_engine.core.errors import InputWarning
from tore_engine.core.packed_warnings import PackedWarnings
from tore_engine.writers import report_json
from tore_engine.writers.report_json import build_report, write_report_json


def reference_bytes(report: dict) -> bytes:
    """report.json as it was written before the fast encoder (the warnings' records a list)."""
    return (json.dumps(report, indent=1, ensure_ascii=True, default=list) + "\n").encode("ascii")


def written(report: dict, tmp_path) -> bytes:
    path = tmp_path / "report.json"
    write_report_json(report, path)
    return path.read_bytes()


@pytest.fixture(scope="module")
def demo_with_sweep():
    return evaluate(DEMO / "reference.json", DEMO / "model_a.json", sweep=True)


@pytest.fixture(scope="module")
def demo_docling():
    return evaluate(DEMO / "reference.json", DEMO / "model_b.json", map="docling", min_score=0.3)


@pytest.mark.parametrize("source", ["public", "paper-single", "paper-dual", "hostile", "small", "demo_a", "demo_with_sweep", "demo_docling"])
def test_same_bytes_as_the_standard_library_on_every_report_fixture(source, request, tmp_path):
    fixtures = {"public": report_data.public, "paper-single": lambda: report_data.paper("single"),
                "paper-dual": lambda: report_data.paper("dual"), "hostile": report_data.hostile}
    evaluation = fixtures[source]() if source in fixtures else request.getfixturevalue(source)
    report = build_report(evaluation.report_content())
    assert written(report, tmp_path) == reference_bytes(report)


def _every_magnitude(count: int) -> list[float]:
    """Random doubles of every exponent (subnormals to the largest), with short and full mantissas,
    and the boundaries where Python's repr changes notation (1e-4, 1e16)."""
    rng = np.random.default_rng(20261204)
    bits = rng.integers(0, 2**63, count, dtype=np.int64).tolist()
    values = [struct.unpack("<d", struct.pack("<q", b))[0] for b in bits]
    values += [round(rng.random(), 3) * 10.0**e for e in range(-320, 308)]
    values += [1e-4, math.nextafter(1e-4, 0), 1e-5, 1e16, math.nextafter(1e16, 0), 9999999999999998.0, 5e-324, 0.0, -0.0, 1.0]
    return [v for value in values if math.isfinite(value) for v in (value, -value)]


def test_floats_of_every_magnitude_as_python_writes_them(tmp_path):
    values = _every_magnitude(20_000)
    report = {"values": values, "matrix": [values[:50], values[50:100]], "nested": {"a": {"b": {"c": values[:9]}}}}
    assert written(report, tmp_path) == reference_bytes(report)


def test_long_lists_are_written_in_pieces_with_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(report_json, "CHUNK_ITEMS", 7)
    report = {"warnings": [{"page": f"p{i}", "box": i, "side": None, "message": "é\x7f"} for i in range(30)],
              "cells": {"row": list(range(15)), "value": [i / 7 for i in range(15)]}, "exact": [7, 14], "empty": [], "none": {}}
    assert written(report, tmp_path) == reference_bytes(report)


@pytest.mark.parametrize("odd", [None, float("nan")])
def test_warnings_made_into_records_as_they_are_written_give_the_same_bytes(odd, tmp_path, monkeypatch):
    """`WarningRecords` over packed warnings, a chunk at a time, on the fast path and (a NaN elsewhere) the standard library's."""
    monkeypatch.setattr(report_json, "CHUNK_ITEMS", 7)
    warnings = [InputWarning(None if i % 4 else f"p{i}", i if i % 3 else None, "reference", "box clipped" if i % 5 else "é\x7f") for i in range(30)]
    report = {"odd": odd, "warnings": report_json.WarningRecords(PackedWarnings.of(warnings))}
    listed = {"odd": odd, "warnings": [warning.to_json() for warning in warnings]}
    assert written(report, tmp_path) == reference_bytes(listed)


def test_to_json_gives_the_warnings_as_a_list(tmp_path):
    evaluation = report_data.hostile()
    report = evaluation.to_json(tmp_path / "report.json")
    assert type(report["warnings"]) is list and report["warnings"] == evaluation.warnings
    assert json.loads((tmp_path / "report.json").read_text()) == json.loads(json.dumps(report))


ESCAPED = ["plain", 'a "quote"', "back\\slash", "del\x7f", "unit\x1f", "tab\t", "é", "\u2028", "</script>", "\ud800", ""]


@pytest.mark.parametrize("text", ESCAPED)
def test_lists_of_text_and_nulls_as_before_whatever_their_escapes(text, tmp_path):
    """msgspec writes the warnings (objects of text, integers and nulls) only where no string needs
    an escape; every other text, and a NaN beside a null, takes the standard library's path."""
    report = {"warnings": [{"page": None if i % 3 else f"p{i}", "box": i, "side": "reference", "ok": True, "message": text} for i in range(5)],
              "names": [text, None, "x", 3], "float": [{"x": 1e16, "y": None}]}
    assert written(report, tmp_path) == reference_bytes(report)


def test_a_nan_beside_nulls_is_written_as_before(tmp_path):
    report = {"warnings": [{"page": None, "box": 1, "message": "x"}, {"page": None, "box": float("nan"), "message": "y"}]}
    assert written(report, tmp_path) == reference_bytes(report)


def test_plain_warnings_are_encoded_without_the_standard_library(monkeypatch):
    warnings = [{"page": None if i % 2 else f"page {i}", "box": i, "side": "prediction", "message": "box clipped at the edge: bbox [1.5, 2]"}
                for i in range(50)]
    expected = report_json._encoded(warnings, 1)
    monkeypatch.setattr(report_json, "_encoded", lambda value, depth: pytest.fail(f"{value!r} took the slow path"))
    assert report_json._list(warnings, 1) == expected


@pytest.mark.parametrize("odd", [float("nan"), float("inf"), "\ud800", 2**80, [1.5, None, "x"]])
def test_what_the_fast_path_refuses_is_written_as_before(odd, tmp_path):
    report = {"mode": "single", "matrices": {"confusion": [[1.0, 2.5], [odd, 0.1]]}, "per_class": {"x": odd}}
    assert written(report, tmp_path) == reference_bytes(report)


def test_a_large_taxonomy_is_written_sparse_and_reads_back_as_the_dense_matrix(tmp_path):
    """Beyond DENSE_CLASS_LIMIT classes: one class a box, shifted, on one page. report.json, the CSVs
    and the workbook hold the non-zero cells (Background and each class: 3 a class), which rebuild
    the dense matrices exactly; the result folder stays small."""
    from tests.cli.helpers import run_cli
    from tests.helpers import write_json
    from tore_engine.writers.matrix_form import DENSE_CLASS_LIMIT

    classes = DENSE_CLASS_LIMIT + 44
    names = [f"c{k}" for k in range(classes)]

    def side(name: str, shift: int) -> dict:
        boxes = [{"label": names[k], "bbox": [(k % 20) * 10 + shift, (k // 20) * 10 + shift, (k % 20) * 10 + 8 + shift, (k // 20) * 10 + 8 + shift]}
                 for k in range(classes)]
        return {"name": name, "taxonomy": names, "pages": [{"id": "p", "width": 200, "height": 200, "boxes": boxes}]}

    out = tmp_path / "out"
    code, _, err = run_cli("evaluate", str(write_json(tmp_path / "gt.json", side("gt", 0))), str(write_json(tmp_path / "model.json", side("model", 1))),
                           "--out", str(out), "--map", "off", "--xlsx", "-q")
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert report["matrix_form"] == {"form": "sparse", "dense_up_to": DENSE_CLASS_LIMIT}
    evaluation = evaluate(tmp_path / "gt.json", tmp_path / "model.json", map="off")
    full = evaluation.matrices.full
    for kind in ("confusion", "recall", "precision"):
        cells = report["matrices"][kind]
        dense = np.zeros((classes + 1, classes + 1))
        dense[cells["row"], cells["column"]] = cells["value"]
        assert np.array_equal(dense, getattr(full, kind))  # every non-zero cell, exactly
        assert len(cells["value"]) == 1 + 3 * classes  # Background with itself; each class with itself, as Background, from Background
    rows = list(csv.reader((out / "recall.csv").open(newline="", encoding="utf-8")))
    assert rows[0] == ["reference", "prediction", "recall"] and len(rows) == 2 + 3 * classes
    assert sum(path.stat().st_size for path in out.iterdir()) < 2_000_000

