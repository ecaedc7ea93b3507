"""`tore export DIR` (tore_engine.cli.export): the pages of a saved evaluation that a tag, a cell or
an error type selects, as page ids and as COCO files of both sides; the COCO files evaluated again give the same
pages, boxes and per-page figures as the saved evaluation."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

import tore_engine as tore
from tests.cli.helpers import run_cli
from tests.helpers import DEMO


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Model A of the demo evaluated at minimum score 0.3 from copies of its inputs."""
    root = tmp_path_factory.mktemp("export")
    for name in ("reference.json", "model_a.json"):
        shutil.copy(DEMO / name, root / name)
    code, _, err = run_cli("evaluate", str(root / "reference.json"), str(root / "model_a.json"), "--out", str(root / "out"),
                           "--min-score", "0.3", "-q")
    assert code == 0, err
    return root


def _rows(path):
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_cells_pages_as_ids_and_as_coco_that_evaluates_back_the_same(saved, tmp_path):
    out = saved / "out"
    code, stdout, err = run_cli("export", str(out), "--cell", "Text/Table", "--pages", str(tmp_path / "p.csv"), "--coco", str(tmp_path / "sel.json"))
    assert (code, stdout) == (0, ""), err
    evaluation = tore.open(out)
    behind = set(evaluation.pages_for_cell("Text", "Table")["page"])
    pages = [row["page"] for row in _rows(tmp_path / "p.csv")]
    assert pages == [page for page in evaluation.page_ids if page in behind] and 1 < len(pages) < len(evaluation.page_ids)

    exported = tore.load_pair(tmp_path / "sel.json", tmp_path / "sel.predictions.json")
    original = tore.load_pair(saved / "reference.json", saved / "model_a.json")
    for side, (again, before) in enumerate(zip(exported, original)):
        assert again.page_ids() == pages
        positions = {page_id: k for k, page_id in enumerate(before.page_ids())}
        for page in again.pages:
            source = before.pages[positions[page.id]]
            source = source.above_score(0.3)[0] if side else source  # the boxes the evaluation kept
            assert page.labels == source.labels and (page.width, page.height) == (source.width, source.height)
            assert np.allclose(page.bboxes, source.bboxes, rtol=0, atol=1e-9)
            assert (page.scores is None) == (source.scores is None)
            if page.scores is not None:
                assert np.array_equal(page.scores, source.scores, equal_nan=True)

    code, _, err = run_cli("evaluate", str(tmp_path / "sel.json"), str(tmp_path / "sel.predictions.json"), "--out", str(tmp_path / "back"), "-q")
    assert code == 0, err
    before = {row["page"]: row for row in _rows(out / "pages.csv")}
    after = _rows(tmp_path / "back" / "pages.csv")
    assert [row["page"] for row in after] == pages
    for row in after:
        assert row == before[row["page"]]  # pixels, Foreground recall, precision, F1 and mAP of each page


def test_an_error_types_pages_re_evaluate_to_the_same_boxes_and_errors(saved, tmp_path):
    """--error Loc: the pages where boxes.csv (TIDE's decisions, read box by box) has a Loc error; their
    COCO files evaluated again give those pages with the same box counts and error counts."""
    out = saved / "out"
    code, stdout, err = run_cli("export", str(out), "--error", "Loc", "--pages", str(tmp_path / "p.csv"), "--coco", str(tmp_path / "sel.json"))
    assert (code, stdout) == (0, ""), err
    evaluation = tore.evaluate(saved / "reference.json", saved / "model_a.json", min_score=0.3)
    boxes = evaluation.boxes
    with_loc = set(boxes.loc[boxes["error"] == "Loc", "page"])
    pages = [row["page"] for row in _rows(tmp_path / "p.csv")]
    assert pages == [page for page in evaluation.page_ids if page in with_loc] and 0 < len(pages) < len(evaluation.page_ids)
    code, _, err = run_cli("evaluate", str(tmp_path / "sel.json"), str(tmp_path / "sel.predictions.json"), "--out", str(tmp_path / "back"), "-q")
    assert code == 0, err
    before = {row["page"]: row for row in _rows(out / "pages.csv")}
    after = _rows(tmp_path / "back" / "pages.csv")
    assert [row["page"] for row in after] == pages and all(row == before[row["page"]] for row in after)  # counts and errors too
    assert all(int(row["Loc"]) > 0 for row in after)


def test_an_error_type_needs_box_outcomes(tmp_path):
    """Dual taxonomy has no box outcomes: --error says why, exit 2, nothing on stdout."""
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_b.json"), "--out", str(tmp_path / "out"), "-q")
    assert code == 0, err
    code, stdout, err = run_cli("export", str(tmp_path / "out"), "--error", "Cls", "--pages", str(tmp_path / "p.csv"))
    assert (code, stdout) == (2, "") and "--error Cls: this evaluation has no box outcomes (dual taxonomy" in err
    assert not (tmp_path / "p.csv").exists()


def test_a_tags_pages(saved, tmp_path):
    database = tmp_path / "tags.sqlite"
    store = tore.tags(database)
    evaluation = tore.open(saved / "out")
    reference_name = tore.load(saved / "reference.json").name
    chosen = [evaluation.page_ids[5], evaluation.page_ids[2]]
    store.add(reference_name, chosen[0], "reference wrong")
    store.add(reference_name, chosen[1], "reference wrong", side="reference", box=0)
    store.add(reference_name, evaluation.page_ids[7], "ambiguous")
    code, _, err = run_cli("export", str(saved / "out"), "--tag", "reference wrong", "--db", str(database), "--pages", str(tmp_path / "p.csv"))
    assert code == 0, err
    assert [row["page"] for row in _rows(tmp_path / "p.csv")] == [evaluation.page_ids[2], evaluation.page_ids[5]]  # in page order


def test_without_its_inputs_the_coco_export_says_so(saved, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(saved / "out", out)
    (saved / "model_a.json").rename(tmp_path / "away.json")
    try:
        code, stdout, err = run_cli("export", str(out), "--coco", str(tmp_path / "sel.json"))
    finally:
        (tmp_path / "away.json").rename(saved / "model_a.json")
    assert (code, stdout) == (2, "") and "model_a.json" in err and "not there any more" in err
    assert not (tmp_path / "sel.json").exists()
    code, _, err = run_cli("export", str(out), "--cell", "Text/Nothing", "--pages", str(tmp_path / "p.csv"))
    assert code == 2 and "'Nothing' is no predicted (column) class" in err


def test_mapped_page_ids_and_a_prediction_only_minimum_score_export_as_evaluated(tmp_path):
    """The run's --page-id-map and --min-score-side are saved and applied again: the COCO evaluated
    back gives pages.csv's rows."""
    prediction = json.loads((DEMO / "model_a.json").read_text())
    for page in prediction["pages"]:
        page["id"] = f"m-{page['id']}"
    (tmp_path / "model.json").write_text(json.dumps(prediction))
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(tmp_path / "model.json"), "--out", str(tmp_path / "out"), "-q",
                           "--page-id-map", "strip-prefix:m-", "--min-score", "0.5", "--min-score-side", "prediction")
    assert code == 0, err
    code, _, err = run_cli("export", str(tmp_path / "out"), "--coco", str(tmp_path / "all.json"))
    assert code == 0, err
    code, _, err = run_cli("evaluate", str(tmp_path / "all.json"), str(tmp_path / "all.predictions.json"), "--out", str(tmp_path / "back"), "-q")
    assert code == 0, err
    assert _rows(tmp_path / "back" / "pages.csv") == _rows(tmp_path / "out" / "pages.csv")


def test_polygon_boxes_export_as_their_outline(tmp_path):
    """A polygon box goes to COCO as its one-polygon segmentation (its bbox alone would paint more)."""
    reference = {"name": "gt", "pages": [{"id": "p1", "width": 100, "height": 100, "boxes": [
        {"label": "Text", "polygon": [10, 10, 60, 20, 40, 70]}, {"label": "Title", "bbox": [0, 80, 50, 90]}]}]}
    prediction = {"name": "m", "pages": [{"id": "p1", "width": 100, "height": 100, "boxes": [
        {"label": "Text", "polygon": [12, 10, 60, 25, 40, 70], "score": 0.8}, {"label": "Title", "bbox": [0, 81, 50, 90], "score": 0.9}]}]}
    (tmp_path / "r.json").write_text(json.dumps(reference))
    (tmp_path / "p.json").write_text(json.dumps(prediction))
    assert run_cli("evaluate", str(tmp_path / "r.json"), str(tmp_path / "p.json"), "--out", str(tmp_path / "out"), "-q")[0] == 0
    assert run_cli("export", str(tmp_path / "out"), "--coco", str(tmp_path / "c.json"))[0] == 0
    assert run_cli("evaluate", str(tmp_path / "c.json"), str(tmp_path / "c.predictions.json"), "--out", str(tmp_path / "back"), "-q")[0] == 0
    for name in ("confusion.csv", "pages.csv"):
        assert (tmp_path / "back" / name).read_bytes() == (tmp_path / "out" / name).read_bytes(), name
    assert json.loads((tmp_path / "c.json").read_text())["annotations"][0]["segmentation"] == [[10, 10, 60, 20, 40, 70]]
