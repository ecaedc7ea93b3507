"""docling-eval datasets (docs/formats.md#your-data): one folder holds both sides.

A dataset is `*/*.parquet` shards (`test/shard_000000_000000.parquet`; a split's folder or one
shard may be given too), one row a document, as docling-eval's `DatasetRecordWithPrediction`
writes them: `document_id`, `GroundTruthDocument` and `PredictedDocument` (DoclingDocument JSON
strings), and the page images `GroundTruthPageImages` / `PredictionPageImages` (lists of Hugging
Face images, struct {bytes, path}, page `page_no` at item `page_no - 1`). Other columns (status,
timings, the binary document) are not read.

- Page ids are `<document_id>/<page_no>` on both sides: the row, not the documents' own names,
  pairs the two (docling names a converted stream after the stream, so a prediction's name is
  often just `file`); in docling-eval's datasets the ground truth's name is its document_id, so
  the ids are those `--format docling` gives for the same documents.
- Boxes are docling's (`tore_engine.formats.docling.add_document`, one conversion for both).
- Page images are the page-image cells, read only when a page is drawn; a prediction page without
  its own image is drawn on the ground truth's.
- A row without a `PredictedDocument` (a failed conversion) gives no prediction pages: its pages
  are scored as all Background and listed under `warnings`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, PageImage
from tore_engine.core.taxonomy import DOCLING
from tore_engine.formats import (
    docling,  # first: without docling-core, the error names the 'docling' extra
    parquet,
)
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.progress import advance
from tore_engine.io.files import is_regular_file, regular_files

DOCUMENT_ID, GROUND_TRUTH, PREDICTION = "document_id", "GroundTruthDocument", "PredictedDocument"
GROUND_TRUTH_IMAGES, PREDICTION_IMAGES = "GroundTruthPageImages", "PredictionPageImages"
REFERENCE_NAME, PREDICTION_NAME = "ground_truth", "prediction"
SHARD_PATTERN = "*/*.parquet"


def _shards(dataset: Path) -> list[Path]:
    """The shards of one split: the file itself, a split folder's files, or a dataset's `*/*.parquet`."""
    if not dataset.is_dir():
        return [dataset]
    shards = [file for file in regular_files(dataset) if file.name.endswith(".parquet")]
    shards = shards or sorted(f for f in dataset.glob(SHARD_PATTERN) if is_regular_file(f))
    if not shards:
        raise InputError(f"holds no docling-eval shards ({SHARD_PATTERN})", file=str(dataset))
    splits = sorted({shard.parent.name for shard in shards})
    if len(splits) > 1:
        raise InputError(f"holds several splits ({', '.join(splits)}): give one split's folder, e.g. "
                         f"{dataset / splits[0]}", file=str(dataset))
    return shards


def _check_columns(schema, source: str) -> None:
    for name in (DOCUMENT_ID, GROUND_TRUTH, PREDICTION):
        if name not in schema.names:
            extra = "; a ground-truth dataset has no predictions: docling-eval's create-eval adds them" if name == PREDICTION else ""
            raise InputError(f"has no column '{name}'{extra}", file=source)
        kind = schema.field(name).type
        if not (parquet.is_text(kind) or (name != DOCUMENT_ID and parquet.is_binary(kind))):
            raise InputError(f"column '{name}' must hold strings, it holds {kind}", file=source)


def _image_counts(shard_file, column: str, source: str) -> np.ndarray:
    """How many images each row's list in `column` holds, read from the list's smallest leaf
    (the images' `path`) so that no image bytes are read."""
    rows = shard_file.metadata.num_rows
    if column not in shard_file.schema_arrow.names:
        return np.zeros(rows, dtype=np.int64)
    leaves = [shard_file.schema.column(k).path for k in range(len(shard_file.schema))]
    under = [leaf for leaf in leaves if leaf.split(".", 1)[0] == column]
    leaf = next((leaf for leaf in under if leaf.endswith(".path")), under[0])
    lists = parquet.read_columns(shard_file, [leaf], source).column(0).combine_chunks()
    if not parquet.is_list(lists.type):
        raise InputError(f"column '{column}' must be a list of images", file=source)
    return parquet.list_lengths(lists)


def _rows(shard_file, source: str) -> Iterator[tuple[int, str | None, str | bytes | None, str | bytes | None]]:
    """(row, document_id, ground-truth JSON, predicted JSON or None), one row group at a time."""
    row = 0
    for group in range(shard_file.metadata.num_row_groups):
        table = parquet.read_columns(shard_file, [DOCUMENT_ID, GROUND_TRUTH, PREDICTION], source, [group])
        for document_id, truth, predicted in zip(*(table.column(name).to_pylist() for name in table.column_names)):
            yield row, document_id, truth, predicted
            row += 1


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def _image(shard: Path, column: str, row: int, counts: np.ndarray) -> docling.PageImages:
    """The page image of page `page_no` of `row` in `column`, when the row's list holds it."""
    def image(page_no: int) -> PageImage | None:
        return PageImage(shard, parquet_cell=(column, row, page_no - 1)) if page_no - 1 < counts[row] else None

    return image


def _either(own: docling.PageImages, truth: docling.PageImages) -> docling.PageImages:
    """A prediction's own page image, else the reference's (the same page of the same document)."""
    return lambda page_no: own(page_no) or truth(page_no)


@dataclass
class _Side:
    builder: ColumnsBuilder = field(default_factory=ColumnsBuilder)
    warnings: list[InputWarning] = field(default_factory=list)


def _add(side: _Side, text: str | bytes, document_id: str, source: str, images: docling.PageImages) -> None:
    """One row's document on one side."""
    document, messages = docling.parse_document(_as_bytes(text), source)
    side.warnings += docling.loading_warnings(messages, document, document_id)
    docling.add_document(side.builder, document, document_id, source, images)


def _read_shard(shard: Path, sides: tuple[_Side, _Side], seen: dict[str, str]) -> None:
    source = str(shard)
    with parquet.open_parquet(shard) as shard_file, parquet.arrow_errors(source):
        _check_columns(shard_file.schema_arrow, source)
        truth_images = _image_counts(shard_file, GROUND_TRUTH_IMAGES, source)
        predicted_images = _image_counts(shard_file, PREDICTION_IMAGES, source)
        resolved = shard.resolve()
        for row, document_id, truth, predicted in _rows(shard_file, source):
            if document_id is None or truth is None:
                raise InputError(f"row {row} has no {DOCUMENT_ID if document_id is None else GROUND_TRUTH}", file=source)
            if document_id in seen:
                raise InputError(f"row {row} repeats document_id {document_id!r} ({seen[document_id]})", file=source)
            seen[document_id] = f"{shard.name} row {row}"
            truth_image = _image(resolved, GROUND_TRUTH_IMAGES, row, truth_images)
            _add(sides[0], truth, document_id, f"{source}, row {row} ({GROUND_TRUTH})", truth_image)
            if predicted is not None:
                own_image = _image(resolved, PREDICTION_IMAGES, row, predicted_images)
                _add(sides[1], predicted, document_id, f"{source}, row {row} ({PREDICTION})", _either(own_image, truth_image))
    advance(shard.stat().st_size)


def read_pair(dataset: Path, prediction: Path | None) -> tuple[LayoutSet, LayoutSet]:
    """The ground truth and the predictions of a docling-eval dataset."""
    dataset = Path(dataset)
    if prediction is not None and Path(prediction) != dataset:
        raise InputError("a docling-eval dataset holds both sides: give only the dataset "
                         "(tore evaluate DATASET --format docling-eval)", file=str(prediction))
    sides = (_Side(), _Side())
    seen: dict[str, str] = {}
    for shard in _shards(dataset):
        _read_shard(shard, sides, seen)
    source = str(dataset)
    truth, predicted = sides
    return (LayoutSet(REFERENCE_NAME, truth.builder.build(), None, source, truth.warnings, vocabulary=DOCLING),
            LayoutSet(PREDICTION_NAME, predicted.builder.build(), None, source, predicted.warnings, vocabulary=DOCLING))
