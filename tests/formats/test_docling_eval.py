"""docling-eval datasets: one made here, as docling-eval lays them out, from the real DoclingDocument
files (pre-Heron as ground truth, Heron as prediction) and page images rendered from their PDFs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pymupdf
import pytest

from tests.helpers import shared_path
from tore_engine.api import detect_format, load_pair
from tore_engine.core.errors import InputError
from tore_engine.core.layout import PageImage
from tore_engine.formats.progress import reading
from tore_engine.formats.stored_images import read_image_bytes
from tore_engine.run.runner import evaluate_dataset

DOCUMENTS = ("data", "layouts", "docling_documents")
PDFS = ("data", "layouts", "docling_two_layout_models", "pdfs")
IMAGES = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))  # Hugging Face's Sequence(Image())
SCHEMA = pa.schema([("document_id", pa.string()), ("GroundTruthDocument", pa.string()), ("PredictedDocument", pa.string()),
                    ("GroundTruthPageImages", IMAGES), ("PredictionPageImages", IMAGES), ("status", pa.string())])
RENDER_DPI = 36  # small renders: the test needs real PNGs, not sharp ones


def rendered_pages(pdf: Path) -> list[bytes]:
    with pymupdf.open(pdf) as document:
        return [page.get_pixmap(dpi=RENDER_DPI).tobytes("png") for page in document]


def rows() -> dict[str, list]:
    documents, pdfs = shared_path(*DOCUMENTS), shared_path(*PDFS)
    columns: dict[str, list] = {name: [] for name in SCHEMA.names}
    for file in sorted((documents / "pre_heron").glob("*.json")):
        pages = rendered_pages(pdfs / f"{file.stem}.pdf")
        columns["document_id"].append(file.stem)
        columns["GroundTruthDocument"].append(file.read_text(encoding="utf-8"))
        columns["PredictedDocument"].append((documents / "heron" / file.name).read_text(encoding="utf-8"))
        columns["GroundTruthPageImages"].append([{"bytes": png, "path": None} for png in pages])
        # the prediction's own images for one document only: the others fall back to the ground truth's
        columns["PredictionPageImages"].append([{"bytes": png[::-1], "path": None} for png in pages] if file.stem == "amt_handbook_sample" else [])
        columns["status"].append("success")
    return columns


def write_dataset(folder: Path, columns: dict[str, list], schema: pa.Schema = SCHEMA) -> Path:
    (folder / "test").mkdir(parents=True)
    pq.write_table(pa.table(columns, schema=schema), folder / "test" / "shard_000000_000000.parquet", row_group_size=2)
    return folder


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> tuple[Path, dict[str, list]]:
    columns = rows()
    return write_dataset(tmp_path_factory.mktemp("docling_eval"), columns), columns


def numbers(report: dict, prefixes: tuple[str, str]) -> dict:
    """The report with the side names taken out of the class names (they differ by design)."""
    text = json.dumps(report, sort_keys=True)
    for prefix in prefixes:
        text = text.replace(f'"{prefix}_', '"')
    return json.loads(text)


def test_the_dataset_gives_the_matrices_of_the_two_folders_bit_for_bit(dataset):
    folder, _ = dataset
    assert detect_format(folder) == "docling-eval"
    reference, prediction = load_pair(folder)
    assert (reference.name, prediction.name) == ("ground_truth", "prediction")
    documents = shared_path(*DOCUMENTS)
    expected = evaluate_dataset(*load_pair(documents / "pre_heron", documents / "heron")).to_json()
    report = evaluate_dataset(reference, prediction).to_json()
    assert report["mode"] == expected["mode"] == "single" and report["pixels"] == expected["pixels"]  # one vocabulary: Docling's
    assert report["matrices"] == expected["matrices"] and report["reduced"] == expected["reduced"]
    assert numbers(report, ("ground_truth", "prediction")) == numbers(expected, ("pre_heron", "heron"))


def test_page_images_come_from_the_dataset(dataset):
    folder, columns = dataset
    shard = (folder / "test" / "shard_000000_000000.parquet").resolve()
    reference, prediction = load_pair(folder, format="docling-eval")
    row_of = {document_id: row for row, document_id in enumerate(columns["document_id"])}
    for truth, predicted in zip(reference.pages, prediction.pages):
        document_id, page_no = truth.id.rsplit("/", 1)
        row, item = row_of[document_id], int(page_no) - 1
        assert truth.image == PageImage(shard, parquet_cell=("GroundTruthPageImages", row, item))
        assert read_image_bytes(truth.image) == columns["GroundTruthPageImages"][row][item]["bytes"]
        own = columns["PredictionPageImages"][row]
        wanted = own[item]["bytes"] if own else columns["GroundTruthPageImages"][row][item]["bytes"]
        assert read_image_bytes(predicted.image) == wanted


def test_evaluate_takes_the_dataset_alone(dataset, tmp_path):
    folder, _ = dataset
    result = subprocess.run([sys.executable, "-m", "tore_engine", "evaluate", str(folder), "--format", "docling-eval", "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "out" / "report.json").read_text())["pages"] == 7


def test_a_failed_conversion_leaves_its_pages_unpredicted(tmp_path):
    columns = rows()
    columns["PredictedDocument"][0] = None
    reference, prediction = load_pair(write_dataset(tmp_path, columns))
    missing = set(reference.page_ids()) - set(prediction.page_ids())
    assert missing == {f"{columns['document_id'][0]}/1"}


def dataset_error(tmp_path, columns, schema=SCHEMA, prediction=None) -> InputError:
    folder = write_dataset(tmp_path, columns, schema)
    with pytest.raises(InputError) as caught:
        load_pair(folder, prediction, format="docling-eval")
    return caught.value


def test_a_broken_row_names_the_shard_row_and_column(tmp_path):
    columns = rows()
    document = json.loads(columns["PredictedDocument"][3])
    text = next(k for k, item in enumerate(document["texts"]) if item["label"] == "text")
    document["texts"][text]["label"] = "txet"
    columns["PredictedDocument"][3] = json.dumps(document)
    error = dataset_error(tmp_path, columns)
    assert error.file == f"{tmp_path / 'test' / 'shard_000000_000000.parquet'}, row 3 (PredictedDocument)"
    assert error.problem.startswith("is not a valid DoclingDocument: ") and error.problem.endswith(f"got 'txet' (at texts[{text}].label)")


def test_a_ground_truth_dataset_without_predictions_is_a_clear_error(tmp_path):
    columns = rows()
    del columns["PredictedDocument"]
    error = dataset_error(tmp_path, columns, pa.schema([f for f in SCHEMA if f.name != "PredictedDocument"]))
    assert error.problem == "has no column 'PredictedDocument'; a ground-truth dataset has no predictions: docling-eval's create-eval adds them"


def test_a_repeated_document_id_is_a_clear_error(tmp_path):
    columns = rows()
    columns["document_id"][1] = columns["document_id"][0]
    assert dataset_error(tmp_path, columns).problem == f"row 1 repeats document_id {columns['document_id'][0]!r} (shard_000000_000000.parquet row 0)"


def test_a_dataset_of_several_splits_asks_for_one(tmp_path):
    folder = write_dataset(tmp_path, rows())
    (folder / "train").mkdir()
    shutil.copy(folder / "test" / "shard_000000_000000.parquet", folder / "train")
    with pytest.raises(InputError, match=r"holds several splits \(test, train\): give one split's folder"):
        load_pair(folder, format="docling-eval")
    assert len(load_pair(folder / "train")[0].pages) == 7  # one split's folder is a dataset


def test_a_dataset_takes_no_second_path(tmp_path):
    error = dataset_error(tmp_path, rows(), prediction=tmp_path / "other")
    assert error.problem.startswith("a docling-eval dataset holds both sides")


def test_reading_reports_the_shards_bytes(dataset):
    folder, _ = dataset
    done: list[int] = []
    with reading(done.append):
        load_pair(folder)
    assert sum(done) == (folder / "test" / "shard_000000_000000.parquet").stat().st_size
