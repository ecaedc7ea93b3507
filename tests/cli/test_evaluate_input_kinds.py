"""`tore evaluate` on inputs that are no layout, or not quite one (issue 36 N5, issue 42 C4, C8, C9, C11), each
as the issues write it: one paragraph naming the file (and the page and box where there is one), exit 2,
nothing on stdout, no traceback, and no --out left behind."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tore_engine
from tests.cli.helpers import run_cli
from tests.helpers import layout_json, shared_path, write_json
from tore_engine.formats.detect import CVAT_NOT_READ, RESULT_FILE_IS, RESULT_FOLDER_IS

PAGE = {"id": "p1", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 6, 4], "score": 0.9}, {"label": "b", "bbox": [2, 2, 9, 9], "score": 0.5}]}
LAYOUT = layout_json("model", [PAGE, PAGE | {"id": "p2"}])
BOX_TYPE = pa.struct([("label", pa.string()), ("bbox", pa.list_(pa.float64())), ("score", pa.float64())])


def refused(tmp_path: Path, prediction: Path, *fragments: str, reference: Path | None = None, options: tuple[str, ...] = ()) -> str:
    """The one-paragraph error of `tore evaluate REFERENCE PREDICTION`, checked: exit 2, stdout empty, one
    line naming the file, every fragment in it, no --out created."""
    reference = reference or write_json(tmp_path / "gt.json", LAYOUT)
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("evaluate", str(reference), str(prediction), "--out", str(out), "--workers", "1", *options)
    assert (code, stdout) == (2, ""), stderr
    assert stderr.startswith(f"tore: error: file {prediction}") and stderr.count("\n") == 1 and "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in stderr
    assert not out.exists()
    return stderr


def parquet_pages(path: Path, scores: list[list[float | None]]) -> Path:
    boxes = [[{"label": "a", "bbox": [0.0, 0.0, 6.0, 4.0], "score": score} for score in page] for page in scores]
    pq.write_table(pa.table({"id": [f"p{k + 1}" for k in range(len(scores))], "width": [10] * len(scores), "height": [10] * len(scores),
                             "boxes": pa.array(boxes, pa.list_(BOX_TYPE))}), path)
    return path


# --- issue 36, N5: messages that say what the file is ----------------------------------------------------


def test_an_empty_file(tmp_path):
    empty = tmp_path / "model.json"
    empty.write_bytes(b"")
    refused(tmp_path, empty, ": the file is empty")


def test_a_cvat_xml_file(tmp_path):
    xml = shared_path("data", "layouts", "docling_eval_cvat_human_annotations", "case_03_annotations.xml")
    refused(tmp_path, xml, CVAT_NOT_READ, '"COCO 1.0"')


def test_a_tore_result_file_and_folder(tmp_path):
    previous = tmp_path / "previous"
    gt, model = write_json(tmp_path / "a.json", LAYOUT), write_json(tmp_path / "b.json", LAYOUT)
    assert run_cli("evaluate", str(gt), str(model), "--out", str(previous), "--workers", "1")[0] == 0
    refused(tmp_path, previous / "report.json", f": {RESULT_FILE_IS}", "tore.open(DIR)")
    refused(tmp_path, previous / "report.json", f": {RESULT_FILE_IS}", reference=previous / "report.json", options=("--format", "tore"))
    refused(tmp_path, previous, f": {RESULT_FOLDER_IS}")
    reopened = tore_engine.open(previous)  # as the message says
    assert reopened.to_json() == json.loads((previous / "report.json").read_text())


def test_a_misspelt_key(tmp_path):
    typo = write_json(tmp_path / "model.json", layout_json("m", [PAGE | {"boxes": [{"label": "a", "box": [0, 0, 6, 4]}]}]))
    refused(tmp_path, typo, f"file {typo}, page 'p1', box 0: unknown key 'box' (did you mean 'bbox'?)")


# --- issue 42, C4: a NaN score, in every reader that reads scores -----------------------------------------


def test_nan_scores_in_parquet_are_refused_at_the_first(tmp_path):
    """Every third box scored NaN: the third box of the file is page p2's box 0."""
    scored = parquet_pages(tmp_path / "model.parquet", [[0.9, 0.5], [float("nan"), 0.7], [0.6, float("nan")]])
    refused(tmp_path, scored, f"file {scored}, page 'p2', box 0: score is NaN, and a score must be a finite number")
    refused(tmp_path, scored, "score is NaN", options=("--min-score", "0.5"))


NAN_TEXTS = {  # every JSON reader: NaN is no JSON number
    "native": ('{"pages": [{"id": "p1", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 6, 4], "score": NaN}]}]}', "model.json"),
    "jsonl": ('{"id": "p1", "width": 10, "height": 10, "boxes": [{"label": "a", "bbox": [0, 0, 6, 4], "score": NaN}]}\n'
              '{"id": "p2", "width": 10, "height": 10}\n', "model.jsonl"),
    "coco": ('{"images": [{"id": 1, "file_name": "p1", "width": 10, "height": 10}], "categories": [{"id": 1, "name": "a"}], '
             '"annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 6, 4], "score": NaN}]}', "model.json"),
}


@pytest.mark.parametrize("reader", NAN_TEXTS)
def test_nan_scores_in_json_are_refused_with_their_place(tmp_path, reader):
    text, name = NAN_TEXTS[reader]
    path = tmp_path / name
    path.write_text(text)
    refused(tmp_path, path, "NaN and Infinity are not JSON numbers", "line 1, column")


def test_nan_scores_in_a_coco_results_list_are_refused(tmp_path):
    images = write_json(tmp_path / "images.json", {"images": [{"id": 1, "file_name": "p1", "width": 10, "height": 10}],
                                                   "categories": [{"id": 1, "name": "a"}]})
    results = tmp_path / "results.json"
    results.write_text('[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 6, 4], "score": NaN}]')
    refused(tmp_path, results, "NaN and Infinity are not JSON numbers", reference=images)


# --- issue 42, C8, C9, C11 --------------------------------------------------------------------------------


def test_a_parquet_file_with_a_repeated_column(tmp_path):
    path = tmp_path / "model.parquet"
    ids, sizes = pa.array(["p1"]), pa.array([10])
    boxes = pa.array([[{"label": "a", "bbox": [0.0, 0.0, 6.0, 4.0], "score": 0.5}]], pa.list_(BOX_TYPE))
    pq.write_table(pa.Table.from_arrays([ids, sizes, sizes, boxes, ids], names=["id", "width", "height", "boxes", "id"]), path)
    refused(tmp_path, path, "has two columns named 'id'")
    refused(tmp_path, path, "has two columns named 'id'", reference=path, options=("--format", "parquet"))


def test_a_file_that_is_a_layout_and_a_coco_file(tmp_path):
    both = write_json(tmp_path / "model.json", LAYOUT | {"images": [{"id": 1, "file_name": "p1", "width": 10, "height": 10}],
                                                         "annotations": [], "categories": [{"id": 1, "name": "a"}]})
    refused(tmp_path, both, "is both a layout JSON (key 'pages') and a COCO file (keys 'annotations', 'categories', 'images')",
            "--format coco", "--format tore")


@pytest.mark.parametrize("encoding, mark", [("UTF-16LE", b""), ("UTF-16BE", codecs.BOM_UTF16_BE), ("UTF-32LE", codecs.BOM_UTF32_LE), ("UTF-32BE", b"")])
def test_a_layout_in_utf16_or_utf32(tmp_path, encoding, mark):
    path = tmp_path / "model.json"
    path.write_bytes(mark + json.dumps(LAYOUT).encode(encoding))
    refused(tmp_path, path, f"the text is {encoding[:-2]} ({encoding[-2:]}); TORE reads UTF-8: convert it with `iconv -f {encoding} -t UTF-8")
