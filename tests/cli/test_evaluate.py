"""`tore evaluate` end to end, as a user runs it."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import DEMO as ASSETS
from tests.helpers import load_vector, write_json
from tore_engine.demo import MODEL_B_TAXONOMY, REFERENCE_TAXONOMY


def tore(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def public_files(tmp_path_factory):
    pages = load_vector("tore_public_pages.json")
    folder = tmp_path_factory.mktemp("public")
    return write_json(folder / "gt.json", pages["reference"]), write_json(folder / "model.json", pages["prediction"])


@pytest.mark.parametrize("mode, key", [("auto", None), ("dual", "dual")])
def test_report_equals_the_public_vector(public_files, tmp_path, mode, key):
    expected = load_vector("tore_public_expected.json")
    expected = expected[key] if key else expected
    result = tore("evaluate", *map(str, public_files), "--out", str(tmp_path / "out"), "--taxonomy", mode)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["mode"] == expected["mode"] and report["classes"] == expected["classes"]
    confusion, wanted = report["matrices"]["confusion"], expected["matrices"]["confusion"]
    assert all(abs(a - b) <= 1e-9 * max(1, abs(b)) for ra, rb in zip(confusion, wanted) for a, b in zip(ra, rb))
    assert len(report["warnings"]) == 32 + (mode == "auto")  # 21 + 11 boxes crossing the right or bottom edge; mAP's note (single)
    assert {w["message"].split(":")[0] for w in report["warnings"][:32]} == {"box clipped at the edge of the 1025 x 1025 page"}
    assert "TORE, " + expected["mode"] + " taxonomy" in result.stdout
    for prefix, view in (("", "matrices"), ("trimmed_", "trimmed"), ("reduced_", "reduced")):
        rows = report[view].get("rows", report[view].get("classes", report["classes"]))
        columns = report[view].get("columns", rows)
        for kind in ("confusion", "recall", "precision"):  # each CSV holds report.json's matrix, exactly
            header, *body = read_csv(tmp_path / "out" / f"{prefix}{kind}.csv")
            assert header == ["reference \\ prediction", *columns] and [line[0] for line in body] == rows
            assert [[number(value) for value in line[1:]] for line in body] == report[view][kind], f"{prefix}{kind}.csv"
    _, *pages = read_csv(tmp_path / "out" / "pages.csv")
    assert len(pages) == report["pages"] and sum(int(line[1]) for line in pages) == report["pixels"]


def read_csv(path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def number(text: str) -> float | None:
    """A CSV cell as report.json writes it: NaN (an undefined ratio) is null there."""
    value = float(text)
    return None if math.isnan(value) else value


def test_workers_do_not_change_a_single_bit(public_files, tmp_path):
    reports = []
    for workers in ("1", "2", "4"):
        out = tmp_path / workers
        assert tore("evaluate", *map(str, public_files), "--out", str(out), "--workers", workers).returncode == 0
        reports.append((out / "report.json").read_bytes())
        assert (out / "pages.csv").read_bytes() == (tmp_path / "1" / "pages.csv").read_bytes()
    assert reports[0] == reports[1] == reports[2]


def test_per_page_csv_has_the_reduced_scores(public_files, tmp_path):
    assert tore("evaluate", *map(str, public_files), "--out", str(tmp_path)).returncode == 0
    lines = (tmp_path / "pages.csv").read_text().splitlines()
    assert lines[0] == ('"page","pixels","foreground_recall","foreground_precision","foreground_f1","map","map_50","map_75",'
                        '"tp","fp","fn","Cls","Loc","Both","Dupe","Bkg","Miss"')  # text quoted
    assert len(lines) == 61 and lines[1].startswith('"page_00000",1050625,')
    empty_prediction = next(line for line in lines if line.startswith('"page_00013",'))
    assert empty_prediction.split(",")[2:8] == ["0.0"] * 6  # its reference boxes found by nothing: mAP 0 too


def test_label_map_merges_classes(tmp_path):
    paper = load_vector("tore_paper_example.json")
    gt, model = write_json(tmp_path / "gt.json", paper["reference"]), write_json(tmp_path / "model.json", paper["prediction"])
    label_map = write_json(tmp_path / "map.json", {"B": "A", "C": "A", "D": "A"})
    assert tore("evaluate", str(gt), str(model), "--out", str(tmp_path / "o"), "--label-map", str(label_map)).returncode == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["classes"] == ["Background", "A"]
    assert report["matrices"]["confusion"] == [[0, 0], [0, 7]]


@pytest.mark.parametrize(
    "reference, expected_fragments",
    [
        ('{"pages": [{"id": "p9", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, NaN, 1]}]}]}', ["is not valid JSON", "line 1, column 92", "NaN and Infinity are not JSON numbers"]),
        ('{"pages": [', ["is not valid JSON"]),
        ('{"pages": [{"id": "p", "width": -1, "height": 10, "boxes": []}]}', ["page 'p'", "width must be a positive finite number"]),
    ],
)
def test_bad_input_is_one_paragraph_and_exit_2(tmp_path, reference, expected_fragments):
    (tmp_path / "gt.json").write_text(reference)
    write_json(tmp_path / "model.json", {"pages": []})
    result = tore("evaluate", str(tmp_path / "gt.json"), str(tmp_path / "model.json"), "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert str(tmp_path / "gt.json") in result.stderr
    for fragment in expected_fragments:
        assert fragment in result.stderr


def test_help_explains_every_option():
    result = tore("evaluate", "--help")
    for option in ("--out", "--format", "--taxonomy", "--label-map", "--workers", "--scheduler"):
        assert option in result.stdout
    assert "evaluate" in tore("--help").stdout


def test_evaluation_path_imports_neither_streamlit_nor_plotly(public_files, tmp_path):
    code = (
        "import sys; from tore_engine.cli import main; "
        f"main(['evaluate', {str(public_files[0])!r}, {str(public_files[1])!r}, '--out', {str(tmp_path)!r}, '--workers', '1']); "
        "print(sorted(m for m in ('streamlit', 'plotly', 'pandas') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_tore_evaluate_reads_the_demo_without_warnings(tmp_path: Path, capsys) -> None:
    """The engine scores both simulated models: model A in one taxonomy, model B in two."""
    from tore_engine.cli import main

    for model, mode, columns in (("model_a", "single", 12), ("model_b", "dual", 1 + 11 + 6)):
        out = tmp_path / model
        assert main(["evaluate", str(ASSETS / "reference.json"), str(ASSETS / f"{model}.json"), "--out", str(out)]) == 0
        report = json.loads((out / "report.json").read_text())
        assert (report["mode"], len(report["classes"]), report["pages"]) == (mode, columns, 26)
        assert report["warnings"] == []
    assert report["classes"] == ["Background", *(f"ground-truth_{name}" for name in REFERENCE_TAXONOMY), *(f"model-b_{name}" for name in MODEL_B_TAXONOMY)]


def _renamed(tmp_path, name: str, rename) -> Path:
    """Demo model A with some page ids renamed (`rename(k, id)`)."""
    layout = json.loads((ASSETS / "model_a.json").read_text())
    for k, page in enumerate(layout["pages"]):
        page["id"] = rename(k, page["id"])
    return write_json(tmp_path / name, layout)


def test_ids_that_match_nothing_stop_the_run_naming_ids_and_the_rule(tmp_path):
    """Issue 36 N2: a prediction whose ids are the reference's with a prefix scored 0.0 everywhere, exit 0."""
    prefixed = _renamed(tmp_path, "prefixed.json", lambda k, page_id: f"doc_{page_id}")
    result = tore("evaluate", str(ASSETS / "reference.json"), str(prefixed), "--out", str(tmp_path / "out"), "--workers", "1")
    assert (result.returncode, result.stdout) == (2, "")
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert "'report-a/p1', 'report-a/p2', 'report-a/p3' ... (26 pages)" in message
    assert "'doc_report-a/p1', 'doc_report-a/p2', 'doc_report-a/p3' ... (26 pages)" in message
    assert "--page-id-map strip-prefix:doc_" in message and "(26 of 26 map so)" in message
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize("how", ["rule", "json", "csv", "table and rule"])
def test_a_page_id_map_gives_the_report_of_the_ids_renamed_in_the_file(tmp_path, how):
    prefixed = _renamed(tmp_path, "prefixed.json", lambda k, page_id: f"doc_{page_id}")
    ids = [page["id"] for page in json.loads((ASSETS / "model_a.json").read_text())["pages"]]
    (tmp_path / "map.json").write_text(json.dumps({f"doc_{page_id}": page_id for page_id in ids}))
    (tmp_path / "map.csv").write_text("prediction,reference\n" + "".join(f"doc_{page_id},{page_id}\n" for page_id in ids))
    (tmp_path / "first.json").write_text(json.dumps({f"doc_{ids[0]}": ids[0]}))
    options = {"rule": ["strip-prefix:doc_"], "json": [str(tmp_path / "map.json")], "csv": [str(tmp_path / "map.csv")],
               "table and rule": [str(tmp_path / "first.json"), "strip-prefix:doc_"]}[how]
    mapped = tore("evaluate", str(ASSETS / "reference.json"), str(prefixed), "--out", str(tmp_path / "mapped"), "--workers", "1",
                  *(argument for value in options for argument in ("--page-id-map", value)))
    plain = tore("evaluate", str(ASSETS / "reference.json"), str(ASSETS / "model_a.json"), "--out", str(tmp_path / "plain"), "--workers", "1")
    assert mapped.returncode == plain.returncode == 0, mapped.stderr
    assert (tmp_path / "mapped" / "report.json").read_bytes() == (tmp_path / "plain" / "report.json").read_bytes()
    assert not mapped.stdout.startswith("Only ")


def test_a_bad_page_id_map_fails_before_reading_the_inputs(tmp_path):
    (tmp_path / "map.csv").write_text("prediction,reference\nx\n")
    result = tore("evaluate", str(ASSETS / "reference.json"), str(tmp_path / "missing.json"), "--out", str(tmp_path / "out"),
                  "--page-id-map", str(tmp_path / "map.csv"))
    assert (result.returncode, result.stdout) == (2, "")
    assert "line 2: a page id map's line holds two ids" in result.stderr and "map.csv" in result.stderr


def test_when_at_most_half_the_pages_pair_the_summary_says_so_first(tmp_path):
    quarter = _renamed(tmp_path, "quarter.json", lambda k, page_id: page_id if k < 6 else f"doc_{page_id}")
    result = tore("evaluate", str(ASSETS / "reference.json"), str(quarter), "--out", str(tmp_path / "out"), "--workers", "1")
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("Only 6 of 26 reference pages have a prediction page with their id: the other 20 are scored as all Background")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert sum(w["message"] == "no prediction for this page; scored as all Background" for w in report["warnings"]) == 20
    most = _renamed(tmp_path, "most.json", lambda k, page_id: page_id if k < 14 else f"doc_{page_id}")  # 14 of 26: most pair
    result = tore("evaluate", str(ASSETS / "reference.json"), str(most), "--out", str(tmp_path / "out2"), "--workers", "1")
    assert result.returncode == 0 and not result.stdout.startswith("Only ")


def test_a_sweep_of_unscored_boxes_gives_one_notice_and_no_best_point(tmp_path):
    """Issue 36 N4: 90 of 90 boxes unscored printed "Best minimum score: Foreground F1 0.9575 at 0.05"."""
    unscored = json.loads((ASSETS / "model_a.json").read_text())
    for page in unscored["pages"]:
        for box in page["boxes"]:
            box.pop("score", None)
    prediction = write_json(tmp_path / "unscored.json", unscored)
    result = tore("evaluate", str(ASSETS / "reference.json"), str(prediction), "--out", str(tmp_path / "out"), "--workers", "1", "--sweep")
    assert result.returncode == 0, result.stderr
    assert "Best minimum score" not in result.stdout
    notices = [line for line in result.stdout.splitlines() if line.startswith("Minimum score sweep: ")]
    assert notices == ["Minimum score sweep: no prediction box has a score: every minimum score keeps every box, so the points are "
                       "one and there is no best minimum score (the sweep needs a model's confidences)"]
    sweep = json.loads((tmp_path / "out" / "report.json").read_text())["sweep"]
    assert sweep["notice"] == notices[0][len("Minimum score sweep: "):]
    curves = [sweep["foreground"], *sweep["per_class"].values(), sweep["detection"]["all"], *sweep["detection"]["per_class"].values()]
    assert all(curve["best"] is None for curve in curves) and len(set(sweep["foreground"]["f1"])) == 1  # every point the same run
    with (tmp_path / "out" / "sweep.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows and not any(row["best"] == "True" or row["detection_best"] == "True" for row in rows)
    scored = tore("evaluate", str(ASSETS / "reference.json"), str(ASSETS / "model_a.json"), "--out", str(tmp_path / "scored"), "--workers", "1",
                  "--sweep")
    assert "Best minimum score: Foreground F1 " in scored.stdout  # a model with scores still has its best point
    assert json.loads((tmp_path / "scored" / "report.json").read_text())["sweep"]["notice"] is None


def test_min_score_side_prediction_keeps_a_scored_reference_whole(tmp_path):
    """Issue 36 N4: --min-score dropped boxes on both sides; comparing two models, the reference is a scored model."""
    reference = write_json(tmp_path / "pseudo.json", json.loads((ASSETS / "model_a.json").read_text()))
    assert any("score" in box for page in json.loads(reference.read_text())["pages"] for box in page["boxes"])
    kept = json.loads((ASSETS / "model_a.json").read_text())
    for page in kept["pages"]:
        page["boxes"] = [box for box in page["boxes"] if box.get("score", 1.0) >= 0.6]
    by_hand = write_json(tmp_path / "kept.json", kept)
    side = tore("evaluate", str(reference), str(ASSETS / "model_a.json"), "--out", str(tmp_path / "side"), "--workers", "1",
                "--min-score", "0.6", "--min-score-side", "prediction", "--map", "off")
    expected = tore("evaluate", str(reference), str(by_hand), "--out", str(tmp_path / "hand"), "--workers", "1", "--map", "off")
    assert side.returncode == expected.returncode == 0, side.stderr
    for name in ("confusion.csv", "pages.csv"):
        assert (tmp_path / "side" / name).read_bytes() == (tmp_path / "hand" / name).read_bytes()
    bad = tore("evaluate", str(reference), str(by_hand), "--out", str(tmp_path / "bad"), "--min-score-side", "reference")
    assert bad.returncode == 2 and bad.stdout == "" and "invalid choice: 'reference'" in bad.stderr
