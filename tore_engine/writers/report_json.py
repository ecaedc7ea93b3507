"""report.json (docs/cli.md#reportjson): its content and its bytes."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import msgspec

from tore_engine.core.errors import InputWarning, warning_record
from tore_engine.core.packed_warnings import warning_rows
from tore_engine.writers.content import ReportContent
from tore_engine.writers.matrix_form import form_json, matrices_json, matrix_form


def build_report(content: ReportContent) -> dict:
    """report.json: docs/cli.md#reportjson (`matrices` and `trimmed` laid out as `matrix_form` says),
    `map` (docs/cli.md#map-beside-tore; null with `map_reason` saying why) and `sweep` (null unless made)."""
    matrices = content.matrices
    trimmed = matrices.trimmed
    form = matrix_form(len(matrices.classes))
    return {
        "mode": matrices.mode,
        "classes": matrices.classes,
        "pages": len(content.page_ids),
        "pixels": content.pixels,
        "matrix_form": form_json(len(matrices.classes)),
        "matrices": matrices_json(matrices.full, form),
        "trimmed": {"rows": trimmed.rows, "columns": trimmed.columns, **matrices_json(trimmed, form)},
        "reduced": {"classes": matrices.reduced.rows, **matrices.reduced.to_json()},
        "per_class": matrices.per_class,
        "means": matrices.means,
        "map": None if content.map is None else content.map.to_json(),
        "map_reason": content.map_reason,
        "sweep": None if content.sweep is None else content.sweep.to_json(),
        "errors": content.errors,
        "errors_reason": content.errors_reason,
        "warnings": WarningRecords(content.warnings),
    }


class WarningRecords(Sequence[dict]):
    """report.json's warnings, {page, box, side, message}, made `CHUNK_ITEMS` at a time as they are
    written (`_pieces`): 100,000 of them made at once held 42.6 MiB at the end of a 100,000-page run."""

    def __init__(self, warnings: Sequence[InputWarning]) -> None:
        self._warnings = warnings

    def __len__(self) -> int:
        return len(self._warnings)

    @overload
    def __getitem__(self, index: int) -> dict: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict]: ...

    def __getitem__(self, index: int | slice) -> dict | list[dict]:
        if isinstance(index, slice) and index.step in (None, 1):
            start, stop, _ = index.indices(len(self))
            return [warning_record(*row) for row in warning_rows(self._warnings, start, stop)]  # no warning object made
        if isinstance(index, slice):
            return [warning.to_json() for warning in self._warnings[index]]
        return self._warnings[index].to_json()


def _listed(value: object) -> list:
    """`json.dump`'s `default`: the warnings' records as a list."""
    if isinstance(value, WarningRecords):
        return value[:]
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


SPLIT_DEPTH = 3  # objects nested less deeply are encoded member by member (the matrices, the sweep's classes)
CHUNK_ITEMS = 4_096  # a longer list is encoded this many items at a time (the warnings, sparse cells)
# the float tokens msgspec writes otherwise than Python's repr: an exponent ("1e16", "2.5e-7"), and
# a number below 1e-4 in positional notation ("0.00001"); every other token is the same text
MSGSPEC_ONLY_FLOAT = re.compile(rb"(?<=[\[,])-?(?:0\.0000\d*|\d+(?:\.\d+)?e[-+]?\d+)")


def _indent(compact: bytes, depth: int) -> bytes:
    """Compact JSON indented as `json.dump(indent=1)` indents it `depth` levels deep (msgspec copies
    every token as it is)."""
    text = msgspec.json.format(compact, indent=1)
    return text.replace(b"\n", b"\n" + b" " * depth) if depth else text


def _encoded(value: object, depth: int) -> bytes:
    """`value` as `json.dump(indent=1, ensure_ascii=True)` writes it: the standard library's C
    encoder (its escapes and float reprs are the reference's own), re-indented. Raises ValueError
    for a non-finite float and msgspec.DecodeError for a lone surrogate's escape, which the caller
    leaves to the reference."""
    return _indent(json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii"), depth)


def _python_float(token: re.Match[bytes]) -> bytes:
    return repr(float(token.group())).encode("ascii")


PLAIN_TYPES = frozenset({str, int, bool, type(None)})  # JSON scalars that are not floats


def _plain(values: list) -> bool:
    """Whether `values` holds only non-float scalars, or only objects with text keys and such values
    (the warnings): nothing msgspec's text could differ in but its strings' escapes, and no NaN
    among its nulls."""
    kinds = set(map(type, values))
    if kinds <= PLAIN_TYPES:
        return True
    return (kinds == {dict} and set(map(type, itertools.chain.from_iterable(map(dict.values, values)))) <= PLAIN_TYPES
            and set(map(type, itertools.chain.from_iterable(values))) == {str})


def _list(values: list, depth: int) -> bytes:
    """A list as `_encoded` writes it; one of numbers (a matrix row, sparse cells) made by msgspec,
    as Python's `repr` costs a microsecond a float, most of report.json's time. Both write the
    shortest text that reads back as the same float, so only msgspec's other notations
    (`MSGSPEC_ONLY_FLOAT`) are rewritten. Strings and nulls are msgspec's too in a `_plain` list
    whose text is ASCII without a backslash or DEL: no string needed an escape, which is where the
    two differ (`json` escapes DEL, msgspec writes other text as UTF-8). Anything else (msgspec's
    null may be a NaN) goes to `_encoded`."""
    try:
        compact = msgspec.json.encode(values)
    except (TypeError, OverflowError, UnicodeEncodeError):  # an integer beyond 64 bits, a lone surrogate
        return _encoded(values, depth)
    if b'"' in compact or b"null" in compact:
        if compact.isascii() and b"\\" not in compact and b"\x7f" not in compact and _plain(values):
            return _indent(compact, depth)
        return _encoded(values, depth)
    if b"e" in compact or b"0.0000" in compact:  # scanned only where there may be such a token
        compact = MSGSPEC_ONLY_FLOAT.sub(_python_float, compact)
    return _indent(compact, depth)


def _pieces(value: object, depth: int = 0) -> Iterator[bytes]:
    """`value`'s text in pieces that are each small: objects above `SPLIT_DEPTH` member by member
    (those with text keys: `json` writes other keys as text), lists of lists (matrices) row by row,
    long lists `CHUNK_ITEMS` items at a time, everything else whole."""
    pad = b"\n" + b" " * (depth + 1)
    if isinstance(value, dict) and value and depth < SPLIT_DEPTH and all(isinstance(key, str) for key in value):
        for number, (key, member) in enumerate(value.items()):
            yield (b"," if number else b"{") + pad + _encoded(key, 0) + b": "
            yield from _pieces(member, depth + 1)
        yield b"\n" + b" " * depth + b"}"
    elif isinstance(value, list) and value and all(type(item) is list for item in value):
        for number, item in enumerate(value):
            yield (b"," if number else b"[") + pad
            yield from _pieces(item, depth + 1)
        yield b"\n" + b" " * depth + b"]"
    elif isinstance(value, list | WarningRecords) and len(value) > CHUNK_ITEMS:
        for start in range(0, len(value), CHUNK_ITEMS):
            chunk = _list(value[start : start + CHUNK_ITEMS], depth)  # "[", its items, "\n", depth spaces, "]"
            yield (b"," if start else b"[") + chunk[1 : -(depth + 2)]
        yield b"\n" + b" " * depth + b"]"
    elif isinstance(value, list | WarningRecords):
        yield _list(value if isinstance(value, list) else value[:], depth)
    else:
        yield _encoded(value, depth)


def write_report_json(report: dict, path: Path) -> None:
    """report.json from `build_report`'s content: the bytes of `json.dump(report, indent=1,
    ensure_ascii=True)` (ASCII only, so any label is safe), made about 40 times faster (`_pieces`).
    Written as it is encoded: the whole text is never held. What the fast path refuses, a NaN or a
    lone surrogate (possible only through the Python API), is written by `json.dump` itself."""
    path = Path(path)
    try:
        with path.open("wb") as handle:
            for piece in _pieces(report):
                handle.write(piece)
            handle.write(b"\n")
    except (ValueError, msgspec.DecodeError):
        with path.open("w", encoding="ascii") as text:
            json.dump(report, text, indent=1, ensure_ascii=True, default=_listed)
            text.write("\n")
