"""Parquet layouts (docs/formats.md#your-data): a file, or a folder of `*.parquet` files, one row a page.

Columns (any other page-level column is an error, as is a wrong type):

- `id` (string), `width`, `height` (integer or floating-point numbers): required, never null;
- `boxes`: a list of struct {`label` string, `bbox` list of 4 numbers, optional `score` number};
  a null list is a page without boxes;
- `image` (string: a path relative to the file, or to `--page-images`) or `image_bytes` (binary:
  a PNG or JPEG file's bytes), optional, at most one of the two set in a row.

The Arrow schema's key-value metadata may carry `tore.name` (text) and `tore.taxonomy` (a JSON
list of class names): the layout's name and class order, as `name`/`taxonomy` in section 1.
Without `tore.name` the name is the file's (or folder's) stem.

Parquet is already columnar, so the columns go straight into `PageColumns` with pyarrow compute
(`ColumnsBuilder` is for readers that decode page by page). Image bytes are never loaded with the
layout: a page with `image_bytes` gets `PageImage(path=<the file>, parquet_cell=("image_bytes",
row, None))`, and `read_cell` reads that one cell's row group when the page is drawn.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, PageColumns, PageImage
from tore_engine.core.offsets import offsets_of
from tore_engine.formats.columns import non_finite_score
from tore_engine.formats.image_refs import ImageFolder, image_name
from tore_engine.formats.parquet_files import (
    MAX_EXACT_INTEGER,
    arrow_errors,
    is_binary,
    is_list,
    is_number,
    is_text,
    list_lengths,
    open_parquet,
    pa,
    pc,
    pq,
    read_columns,
)
from tore_engine.formats.progress import advance
from tore_engine.formats.stored_images import page_image_bytes
from tore_engine.io.files import input_files
from tore_engine.io.json import SchemaError, parse_json, unknown_name

if TYPE_CHECKING:
    import pyarrow
    import pyarrow.parquet

NAME_KEY, TAXONOMY_KEY = b"tore.name", b"tore.taxonomy"
REQUIRED = ("id", "width", "height")
OPTIONAL = ("boxes", "image", "image_bytes")
BOX_FIELDS = ("label", "bbox", "score")
IMAGE_BYTES = "image_bytes"
ROWS_PER_GROUP = 65536  # rows a written row group holds
ROWS_PER_GROUP_WITH_IMAGES = 64  # with image bytes: bounds the images held while writing, and read back for one


def _wrong_type(column: str, expected: str, kind: "pyarrow.DataType", source: str) -> InputError:
    return InputError(f"column '{column}' must hold {expected}, it holds {kind}", file=source)


def _check_boxes_type(kind: "pyarrow.DataType", source: str) -> None:
    if not is_list(kind) or not pa.types.is_struct(kind.value_type):
        raise _wrong_type("boxes", "a list of struct {label, bbox, score}", kind, source)
    box = kind.value_type
    names = [box.field(k).name for k in range(box.num_fields)]
    for name in names:
        if name not in BOX_FIELDS:
            raise InputError(f"column 'boxes' has an {unknown_name('field', name, BOX_FIELDS)}; known: {', '.join(BOX_FIELDS)}", file=source)
    for name in ("label", "bbox"):
        if name not in names:
            raise InputError(f"column 'boxes' has no field '{name}'", file=source)
    checks = {
        "label": (is_text, "strings"),
        "bbox": (lambda t: is_list(t) and is_number(t.value_type), "lists of 4 numbers"),
        "score": (is_number, "numbers"),
    }
    for name in names:
        accepts, expected = checks[name]
        if not accepts(box.field(name).type):
            raise _wrong_type(f"boxes.{name}", expected, box.field(name).type, source)


def check_schema(schema: "pyarrow.Schema", source: str) -> None:
    """The page-level columns and their types, before any data is read."""
    for name in schema.names:
        if name not in REQUIRED + OPTIONAL:
            raise InputError(f"has an {unknown_name('column', name, REQUIRED + OPTIONAL)}; known: {', '.join(REQUIRED + OPTIONAL)}", file=source)
    for name in REQUIRED:
        if name not in schema.names:
            raise InputError(f"has no column '{name}'", file=source)
    if not is_text(schema.field("id").type):
        raise _wrong_type("id", "strings", schema.field("id").type, source)
    for name in ("width", "height"):
        if not is_number(schema.field(name).type):
            raise _wrong_type(name, "numbers", schema.field(name).type, source)
    if "boxes" in schema.names:
        _check_boxes_type(schema.field("boxes").type, source)
    if "image" in schema.names and not is_text(schema.field("image").type):
        raise _wrong_type("image", "strings (paths)", schema.field("image").type, source)
    if IMAGE_BYTES in schema.names and not is_binary(schema.field(IMAGE_BYTES).type):
        raise _wrong_type(IMAGE_BYTES, "binary (PNG or JPEG bytes)", schema.field(IMAGE_BYTES).type, source)


def _metadata(schema: "pyarrow.Schema", source: str) -> tuple[str | None, list[str] | None]:
    metadata = schema.metadata or {}
    try:
        name = metadata[NAME_KEY].decode("utf-8") if NAME_KEY in metadata else None
    except UnicodeDecodeError:
        raise InputError("its schema metadata 'tore.name' is not UTF-8 text", file=source) from None
    return name, _taxonomy(metadata.get(TAXONOMY_KEY), source)


def _taxonomy(text: bytes | None, source: str) -> list[str] | None:
    """`tore.taxonomy`, read as any JSON input is (`io.json.parse_json`: its depth and keys scanned
    before a parser sees it), its problems named with the key."""
    if text is None:
        return None
    try:
        return parse_json(text, source, list[str])
    except SchemaError as error:
        raise InputError(f"its schema metadata 'tore.taxonomy' must be a JSON list of class names: {error.problem}", file=source) from None
    except InputError as error:
        raise InputError(f"its schema metadata 'tore.taxonomy' {error.problem}", file=source) from None


@dataclass
class _Part:
    """One file's pages, column-wise."""

    source: str
    ids: list[str]
    sizes: np.ndarray  # (pages, 2)
    counts: np.ndarray  # (pages,) boxes a page
    bboxes: np.ndarray  # (boxes, 4)
    labels: "pyarrow.Array"  # (boxes,) strings
    scores: np.ndarray | None  # (boxes,) NaN where a box has no score; None: no score column
    images: dict[int, PageImage]
    name: str | None
    taxonomy: list[str] | None
    warnings: list[InputWarning] = field(default_factory=list)


def _first_null(array: "pyarrow.Array") -> int:
    return int(np.flatnonzero(~pc.is_valid(array).to_numpy(zero_copy_only=False))[0])


def _no_nulls(array: "pyarrow.Array", column: str, ids: list[str] | None, source: str) -> None:
    if array.null_count:
        row = _first_null(array)
        page = ids[row] if ids is not None else None
        raise InputError(f"column '{column}' is null (row {row})", file=source, page=page)


def _numbers(array: "pyarrow.Array", column: str, error_at: Callable[[int, str], InputError]) -> np.ndarray:
    """`array` as 64-bit floats, nulls as NaN. An integer beyond 2^53 in size has no exact float
    (pyarrow refuses the cast): `error_at(index, problem)` names where it is."""
    if pa.types.is_integer(array.type):
        values = pc.fill_null(array, 0).to_numpy(zero_copy_only=False)
        beyond = values > MAX_EXACT_INTEGER
        if not pa.types.is_unsigned_integer(array.type):
            beyond |= values < -MAX_EXACT_INTEGER
        if len(found := np.flatnonzero(beyond)):
            index = int(found[0])
            raise error_at(index, f"column '{column}' holds {values[index]}, beyond 2^53 in size, which a 64-bit float cannot hold exactly")
    return pc.fill_null(pc.cast(array, pa.float64()), math.nan).to_numpy(zero_copy_only=False)


def _finite(scores: "pyarrow.Array", error_at: Callable[[int, str], InputError]) -> "pyarrow.Array":
    """`scores`, refused at the first NaN or infinite one (`non_finite_score`); a null is no score."""
    if pa.types.is_floating(scores.type):
        bad = np.flatnonzero(pc.fill_null(pc.invert(pc.is_finite(scores)), False).to_numpy(zero_copy_only=False))
        if len(bad):
            raise error_at(int(bad[0]), non_finite_score(scores[int(bad[0])].as_py()))
    return scores


def _box_error(problem: str, box: int, offsets: np.ndarray, ids: list[str], source: str) -> InputError:
    page = int(np.searchsorted(offsets, box, side="right")) - 1
    return InputError(f"{problem} (row {page})", file=source, page=ids[page], box=box - int(offsets[page]))


def _boxes(boxes: "pyarrow.Array", ids: list[str], source: str) -> tuple[np.ndarray, np.ndarray, "pyarrow.Array", np.ndarray | None]:
    """Box counts, coordinates, labels and scores, from the flattened `boxes` column."""
    counts = list_lengths(boxes)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    flat = pc.list_flatten(boxes)
    if flat.null_count:
        raise _box_error("the box is null", _first_null(flat), offsets, ids, source)
    labels, bbox = pc.struct_field(flat, "label"), pc.struct_field(flat, "bbox")
    for column, values in (("boxes.label", labels), ("boxes.bbox", bbox)):
        if values.null_count:
            raise _box_error(f"'{column}' is null", _first_null(values), offsets, ids, source)
    lengths = pc.list_value_length(bbox).to_numpy(zero_copy_only=False)
    if (lengths != 4).any():
        box = int(np.flatnonzero(lengths != 4)[0])
        raise _box_error(f"bbox has {lengths[box]} values, expected 4 (x1, y1, x2, y2)", box, offsets, ids, source)
    coordinates = pc.list_flatten(bbox)
    if coordinates.null_count:
        raise _box_error("bbox holds a null coordinate", _first_null(coordinates) // 4, offsets, ids, source)
    scores = None
    if flat.type.get_field_index("score") >= 0:
        def error_at(box: int, problem: str) -> InputError:
            return _box_error(problem, box, offsets, ids, source)

        scores = _numbers(_finite(pc.struct_field(flat, "score"), error_at), "boxes.score", error_at)
    bboxes = _numbers(coordinates, "boxes.bbox", lambda value, problem: _box_error(problem, value // 4, offsets, ids, source))
    return counts, bboxes.reshape(-1, 4), labels, scores


def _image_rows(parquet: "pyarrow.parquet.ParquetFile", source: str) -> np.ndarray:
    """Which rows have image bytes, read one row group at a time (the bytes are dropped at once)."""
    stored = [pc.is_valid(batch.column(0)).to_numpy(zero_copy_only=False)
              for group in range(parquet.metadata.num_row_groups)
              for batch in read_columns(parquet, [IMAGE_BYTES], source, [group]).to_batches()]
    return np.concatenate(stored) if stored else np.zeros(0, dtype=bool)


def _images(ids: list[str], table: "pyarrow.Table", parquet: "pyarrow.parquet.ParquetFile", path: Path, folder: ImageFolder,
            warnings: list[InputWarning]) -> dict[int, PageImage]:
    """Each row's page image: a path found through `folder`, or a cell of `image_bytes`."""
    names = table.column("image").to_pylist() if "image" in table.column_names else [None] * len(ids)
    stored = _image_rows(parquet, str(path)) if IMAGE_BYTES in parquet.schema_arrow.names else np.zeros(len(ids), dtype=bool)
    images: dict[int, PageImage] = {}
    for row in np.flatnonzero(stored).tolist():
        if names[row] is not None:
            raise InputError(f"row {row} sets both 'image' and 'image_bytes'; give one", file=str(path), page=ids[row])
        images[row] = PageImage(path.resolve(), parquet_cell=(IMAGE_BYTES, row, None))
    for row, name in enumerate(names):
        if name is not None and (image := folder.locate(name, ids[row], "", warnings)) is not None:
            images[row] = image
    return images


def _read_file(path: Path, folder: ImageFolder) -> _Part:
    source = str(path)
    with open_parquet(path) as parquet:
        schema = parquet.schema_arrow
        check_schema(schema, source)
        name, taxonomy = _metadata(schema, source)
        with arrow_errors(source):
            part = _pages(parquet, path, folder)
    advance(path.stat().st_size)
    return replace(part, name=name, taxonomy=taxonomy)


def _pages(parquet: "pyarrow.parquet.ParquetFile", path: Path, folder: ImageFolder) -> _Part:
    """One file's pages, its schema checked."""
    source = str(path)
    table = read_columns(parquet, [name for name in parquet.schema_arrow.names if name != IMAGE_BYTES], source)
    ids_column = table.column("id").combine_chunks()
    _no_nulls(ids_column, "id", None, source)
    ids = ids_column.to_pylist()
    sizes = []
    for column_name in ("width", "height"):
        column = table.column(column_name).combine_chunks()
        _no_nulls(column, column_name, ids, source)
        sizes.append(_numbers(column, column_name, lambda row, problem: InputError(f"{problem} (row {row})", file=source, page=ids[row])))
    if "boxes" in table.column_names:
        counts, bboxes, labels, scores = _boxes(table.column("boxes").combine_chunks(), ids, source)
    else:
        counts, bboxes, labels, scores = np.zeros(len(ids), np.int64), np.zeros((0, 4)), pa.array([], pa.string()), None
    warnings: list[InputWarning] = []
    images = _images(ids, table, parquet, path, folder, warnings)
    return _Part(source, ids, np.stack(sizes, axis=1).reshape(-1, 2), counts, bboxes, labels, scores, images, None, None, warnings)


def _agreed(parts: list[_Part], key: str, folder: Path):
    """The name or taxonomy the files of a folder declare: the same in every file that declares one."""
    declared = [(part.source, getattr(part, key)) for part in parts if getattr(part, key) is not None]
    for source, value in declared[1:]:
        if value != declared[0][1]:
            raise InputError(f"its files declare different 'tore.{key}': {Path(declared[0][0]).name} and {Path(source).name}", file=str(folder))
    return declared[0][1] if declared else None


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays one after another; a single one as it is (a large file's coordinates are not copied)."""
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _columns(parts: list[_Part]) -> PageColumns:
    """The parts' pages as one set of columns, labels encoded once over all files."""
    labels = (parts[0].labels if len(parts) == 1 else pa.concat_arrays([pc.cast(part.labels, pa.large_string()) for part in parts])).dictionary_encode()
    has_scores = any(part.scores is not None for part in parts)
    scores = [part.scores if part.scores is not None else np.full(len(part.bboxes), math.nan) for part in parts]
    images, first = {}, 0
    for part in parts:
        images.update({first + row: image for row, image in part.images.items()})
        first += len(part.ids)
    return PageColumns(
        [page_id for part in parts for page_id in part.ids],
        _joined([part.sizes for part in parts]),
        offsets_of(_joined([part.counts for part in parts])),
        _joined([part.bboxes for part in parts]).reshape(-1, 4),
        labels.indices.to_numpy(zero_copy_only=False).astype(np.int64),
        labels.dictionary.to_pylist(),
        _joined(scores) if has_scores else None,
        images,
    )


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A Parquet file, or a folder of them, of pages."""
    path = Path(path)
    parts = [_read_file(file, ImageFolder.beside(file, page_images)) for file in input_files(path, (".parquet",), ".parquet files")]
    name = _agreed(parts, "name", path) or path.stem
    taxonomy = _agreed(parts, "taxonomy", path)
    warnings = [warning for part in parts for warning in part.warnings]
    return LayoutSet(name, _columns(parts), taxonomy, str(path), warnings)


BOX_TYPE_FIELDS = [("label", pa.string()), ("bbox", pa.list_(pa.float64(), 4))]


def _box_array(columns: PageColumns, start: int, end: int) -> "pyarrow.Array":
    """The `boxes` of pages `start:end`: list<struct<label, bbox, score>>."""
    first, last = int(columns.offsets[start]), int(columns.offsets[end])
    labels = pa.array(columns.vocabulary, pa.string()).take(pa.array(columns.codes[first:last]))
    bboxes = pa.FixedSizeListArray.from_arrays(pa.array(columns.bboxes[first:last].reshape(-1)), 4)
    fields, names = [labels, bboxes], ["label", "bbox"]
    if columns.scores is not None:
        scores = columns.scores[first:last]
        fields.append(pa.array(scores, pa.float64(), mask=np.isnan(scores)))
        names.append("score")
    struct = pa.StructArray.from_arrays(fields, names=names)
    return pa.ListArray.from_arrays(pa.array(columns.offsets[start : end + 1] - first, pa.int32()), struct)


def _schema(layout: LayoutSet, columns: PageColumns, image_bytes: bool) -> "pyarrow.Schema":
    box_fields = BOX_TYPE_FIELDS + ([("score", pa.float64())] if columns.scores is not None else [])
    fields = [("id", pa.string()), ("width", pa.float64()), ("height", pa.float64()),
              ("boxes", pa.list_(pa.struct(box_fields))), ("image", pa.string())]
    fields += [(IMAGE_BYTES, pa.binary())] if image_bytes else []
    metadata = {NAME_KEY: layout.name.encode("utf-8")}
    if layout.taxonomy is not None:
        metadata[TAXONOMY_KEY] = json.dumps(layout.taxonomy).encode("utf-8")
    return pa.schema(fields, metadata=metadata)


def _row_group(columns: PageColumns, start: int, end: int, folder: Path, image_bytes: bool) -> list["pyarrow.Array"]:
    pictures = [columns.images.get(row) for row in range(start, end)]
    names = [None if picture is None or image_bytes else image_name(picture, folder) for picture in pictures]
    arrays = [pa.array(columns.ids[start:end], pa.string()), pa.array(columns.sizes[start:end, 0]),
              pa.array(columns.sizes[start:end, 1]), _box_array(columns, start, end), pa.array(names, pa.string())]
    if image_bytes:
        arrays.append(pa.array([None if picture is None else page_image_bytes(picture) for picture in pictures], pa.binary()))
    return arrays


def write(layout: LayoutSet, path: Path, *, image_bytes: bool = False) -> None:
    """The layout as one Parquet file. Page images are written as `image` paths (relative to the
    file's folder when they lie inside it), or with `image_bytes=True` as the images' bytes (PDF
    pages rendered to PNG), `ROWS_PER_GROUP_WITH_IMAGES` pages at a time so that only those are held."""
    path = Path(path)
    columns = layout.pages if isinstance(layout.pages, PageColumns) else PageColumns.from_pages(layout.pages)
    schema = _schema(layout, columns, image_bytes)
    folder = path.parent.resolve()
    rows = ROWS_PER_GROUP_WITH_IMAGES if image_bytes else ROWS_PER_GROUP
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, max(len(columns), 1), rows):
            end = min(start + rows, len(columns))
            writer.write_batch(pa.record_batch(_row_group(columns, start, end, folder, image_bytes), schema=schema))
