"""Parquet files opened with bounds and their errors named: what the Parquet and docling-eval readers
share, and the one stored image cell (`read_cell`) a page image may be. pyarrow comes with the
`parquet` extra; without it, a Parquet input is an error that says so."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.extras import optional_module
from tore_engine.io.files import MAX_INPUT_BYTES, open_regular

if TYPE_CHECKING:
    import pyarrow
    import pyarrow.parquet

pa = optional_module("pyarrow", "parquet")
pc = optional_module("pyarrow.compute", "parquet")
pq = optional_module("pyarrow.parquet", "parquet")
DOCLING_EVAL_COLUMN = "GroundTruthDocument"
MAX_EXACT_INTEGER = 2**53  # beyond, a 64-bit float cannot hold every integer


def _problem(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


@contextmanager
def open_parquet(path: Path) -> Iterator["pyarrow.parquet.ParquetFile"]:
    """A Parquet file opened through the input layer (regular files only, non-blocking open), its
    columns' names checked (`repeated_name`)."""
    with os.fdopen(open_regular(Path(path)), "rb") as handle:
        try:
            parquet = pq.ParquetFile(handle)
            schema = parquet.schema_arrow
        except (pa.ArrowException, OSError, ValueError) as error:
            raise InputError(f"is not a readable Parquet file ({_problem(error)})", file=str(path)) from None
        with parquet:
            if (name := repeated_name(list(schema))) is not None:
                raise InputError(f"has two columns named '{name}'; a column is found by its name, so each needs its own",
                                 file=str(path))
            yield parquet


def repeated_name(fields: Sequence["pyarrow.Field"], parent: str = "") -> str | None:
    """The first name that two columns share (a field of a struct, under lists or not, as
    `boxes.label`), or None: Arrow lets a file hold both, and finding a column by name then fails."""
    seen: set[str] = set()
    for field in fields:
        path = f"{parent}{field.name}"
        if field.name in seen:
            return path
        seen.add(field.name)
        kind = field.type
        while is_list(kind):
            kind = kind.value_type
        if pa.types.is_struct(kind) and (found := repeated_name([kind.field(k) for k in range(kind.num_fields)], f"{path}.")) is not None:
            return found
    return None


def check_declared_size(parquet: "pyarrow.parquet.ParquetFile", columns: Sequence[str], source: str, groups: Sequence[int] | None = None) -> None:
    """Refuse to decompress more than `MAX_INPUT_BYTES` of `columns` (a column is chosen by its
    top-level name): a small file may declare huge pages, and pyarrow would allocate them."""
    metadata = parquet.metadata
    wanted = set(columns)
    total = 0
    for group in range(metadata.num_row_groups) if groups is None else groups:
        row_group = metadata.row_group(group)
        for k in range(row_group.num_columns):
            chunk = row_group.column(k)
            if chunk.path_in_schema.split(".", 1)[0] in wanted:
                total += chunk.total_uncompressed_size
    if total > MAX_INPUT_BYTES:
        raise InputError(f"declares {total:,} bytes of column data, more than the {MAX_INPUT_BYTES:,} allowed", file=source)


@contextmanager
def arrow_errors(source: str, *also: type[Exception]) -> Iterator[None]:
    """Arrow's refusals (and `also`) inside the block as the file's `InputError`: hostile data it
    will not convert (offsets past 2^31 when chunks are combined) is the input's problem, not ours."""
    try:
        yield
    except (pa.ArrowException, *also) as error:
        raise InputError(f"cannot be read as Parquet ({_problem(error)})", file=source) from None


def read_columns(parquet: "pyarrow.parquet.ParquetFile", columns: Sequence[str], source: str, groups: Sequence[int] | None = None) -> "pyarrow.Table":
    """Some columns (top-level names or leaf paths) of a file, or of some of its row groups."""
    check_declared_size(parquet, columns, source, groups)
    with arrow_errors(source, OSError, ValueError):
        if groups is None:
            return parquet.read(columns=list(columns))
        return parquet.read_row_groups(list(groups), columns=list(columns))


def is_docling_eval_shard(path: Path) -> bool:
    """Whether a Parquet file is a docling-eval dataset shard (it has a `GroundTruthDocument` column)."""
    with open_parquet(path) as parquet:
        return DOCLING_EVAL_COLUMN in parquet.schema_arrow.names


def is_number(kind: "pyarrow.DataType") -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def is_list(kind: "pyarrow.DataType") -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)


def is_text(kind: "pyarrow.DataType") -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)


def is_binary(kind: "pyarrow.DataType") -> bool:
    return pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind)


def list_lengths(lists: "pyarrow.Array") -> np.ndarray:
    """The length of each list (0 for a null one)."""
    return pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False).astype(np.int64)


def _row_group_of(parquet: "pyarrow.parquet.ParquetFile", row: int, source: str) -> tuple[int, int]:
    """The row group that holds `row`, and the row's position in it."""
    metadata = parquet.metadata
    first = 0
    for group in range(metadata.num_row_groups):
        rows = metadata.row_group(group).num_rows
        if row < first + rows:
            return group, row - first
        first += rows
    raise InputError(f"has no row {row}", file=source)


def read_cell(path: Path, column: str, row: int, item: int | None) -> bytes:
    """The bytes stored in one cell: `column` of `row`, or its `item`-th element when the column
    is a list; a struct value (Hugging Face's images: {bytes, path}) gives its `bytes`. Only the
    row group that holds the row is read, and only that column."""
    source = str(path)
    with open_parquet(path) as parquet:
        if column not in parquet.schema_arrow.names:
            raise InputError(f"has no column '{column}'", file=source)
        group, offset = _row_group_of(parquet, row, source)
        value = read_columns(parquet, [column], source, [group]).column(0).slice(offset, 1).combine_chunks()
    if is_list(value.type):
        items = pc.list_flatten(value)
        if item is None or not 0 <= item < len(items):
            raise InputError(f"row {row} of column '{column}' has no item {item}", file=source)
        value = items.slice(item, 1)
    if pa.types.is_struct(value.type):
        value = pc.struct_field(value, "bytes")
    data = value[0].as_py() if len(value) else None
    if not isinstance(data, bytes):
        raise InputError(f"row {row} of column '{column}' holds no image bytes", file=source)
    return data
