"""Bounded JSON: the rules every JSON input is held to, then a strict decode.

A JSON text is first scanned for its structure (`scan_json`): nesting deeper than `MAX_JSON_DEPTH`
and duplicate keys are errors, so no parser ever sees a hostile depth and no value silently replaces
another. Then msgspec decodes it against the reader's strict schema (`decode_json`): unknown keys,
missing keys and wrong types become errors that name where they are.

Below `KERNEL_MIN_BYTES` (512 KiB) the rules are checked by the NumPy structure scan, the fastest
check that loads no numba (benchmarks/RESULTS.md, "JSON rules (issue 21)": the standard library's
`object_pairs_hook` is as fast up to about 1 MB but 1.5x slower at 8 MiB, and could not say where a
repeated key is nor give the readers their spans); from there on, by the compiled scan, whose
bounded memory pays for loading numba, which a job of that size loads anyway for mAP (benchmarks/
RESULTS.md, "One reading path from 512 KiB").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.io.files import MAX_INPUT_BYTES, read_json_bytes

MAX_JSON_DEPTH = 64  # the deepest real input we know nests 17 levels
_QUOTE, _BACKSLASH, _COLON, _COMMA = 34, 92, 58, 44
_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY = 123, 125, 91, 93
_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[[_OPEN_OBJECT, _CLOSE_OBJECT, _OPEN_ARRAY, _CLOSE_ARRAY, _COLON, _COMMA]] = True
_FIRST_NON_BLANK = re.compile(rb"[^ \t\r\n]")
_KEY_PREFIX_BYTES = 8  # bytes of a key's start and end compared before its whole text


def _line_and_column(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - data.rfind(b"\n", 0, offset)
    return f"line {line}, column {column}"


def _string_quotes(chars: np.ndarray) -> np.ndarray:
    """Positions of the quotes that open or close a string (not the escaped ones)."""
    quotes = np.flatnonzero(chars == _QUOTE)
    after_backslash = quotes[(quotes > 0) & (chars[np.maximum(quotes - 1, 0)] == _BACKSLASH)]
    if not len(after_backslash):
        return quotes
    backslash = chars == _BACKSLASH
    run_starts = np.flatnonzero(backslash & ~np.r_[False, backslash[:-1]])
    run_lengths = after_backslash - run_starts[np.searchsorted(run_starts, after_backslash - 1, side="right") - 1]
    return np.setdiff1d(quotes, after_backslash[run_lengths % 2 == 1], assume_unique=True)


class JsonSpans(Protocol):
    """What a reader asks of a scanned text, whichever scan made it: the byte spans of the
    top-level object's values, and of an array's items."""

    def top_level_values(self) -> dict[str, tuple[int, int]]: ...

    def array_items(self, start: int, end: int) -> list[tuple[int, int]]: ...


@dataclass(frozen=True)
class JsonStructure:
    """Where a JSON text's structural characters are (outside strings), with the nesting depth after
    each: enough to find a top-level value's bytes, or an array's items, without parsing them."""

    data: bytes
    positions: np.ndarray  # (m,) int64: byte offsets of { } [ ] : , outside strings
    depth: np.ndarray  # (m,) int64: the depth after each (an opener counts itself)
    quotes: np.ndarray  # the quotes that delimit strings

    def top_level_values(self) -> dict[str, tuple[int, int]]:
        """The byte span of each value of the top-level object, by key."""
        at_top = self.depth == 1
        colons = np.flatnonzero(at_top & (self._chars() == _COLON))
        ends = np.flatnonzero((at_top & (self._chars() == _COMMA)) | ((self.depth == 0) & (self._chars() == _CLOSE_OBJECT)))
        spans = {}
        for colon in colons.tolist():
            key = self._key_before(int(self.positions[colon]))
            following = int(np.searchsorted(ends, colon))
            end = ends[following] if following < len(ends) else len(self.positions) - 1  # a text cut short: to its last
            spans[key] = (int(self.positions[colon]) + 1, int(self.positions[end]))
        return spans

    def array_items(self, start: int, end: int) -> list[tuple[int, int]]:
        """The byte spans of the items of the array that occupies `data[start:end]`."""
        first = int(np.searchsorted(self.positions, start))
        if first >= len(self.positions) or self._chars()[first] != _OPEN_ARRAY:
            return []
        level = int(self.depth[first])
        last = int(np.searchsorted(self.positions, end)) - 1
        inside = slice(first + 1, last)
        commas = self.positions[inside][(self.depth[inside] == level) & (self._chars()[inside] == _COMMA)]
        bounds = [int(self.positions[first]) + 1, *(int(c) + 1 for c in commas), int(self.positions[last]) + 1]
        items = [(bounds[k], bounds[k + 1] - 1) for k in range(len(bounds) - 1)]
        return [] if len(items) == 1 and not self.data[items[0][0] : items[0][1]].strip() else items

    def keys_at(self, depth: int) -> list[str]:
        """The keys of the objects at `depth` (1: the top-level object), in file order. Works on a
        truncated text too, which is how format detection reads a file's first bytes."""
        colons = np.flatnonzero((self.depth == depth) & (self._chars() == _COLON))
        return [self._key_before(int(self.positions[colon])) for colon in colons.tolist()]

    def value_start(self, key: str) -> int | None:
        """Where the value of the top-level object's first `key` starts, or None (a text cut
        short may end before it)."""
        colons = np.flatnonzero((self.depth == 1) & (self._chars() == _COLON))
        for colon in self.positions[colons].tolist():
            if self._key_before(colon) == key:
                start = colon + 1
                while start < len(self.data) and self.data[start] in b" \t\r\n":
                    start += 1
                return start
        return None

    def _chars(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.uint8)[self.positions]

    def _key_before(self, colon: int) -> str:
        close = int(np.searchsorted(self.quotes, colon)) - 1
        if close < 1:
            return ""
        try:
            return msgspec.json.decode(self.data[self.quotes[close - 1] : self.quotes[close] + 1])
        except msgspec.DecodeError:
            return ""


def _keys(data: bytes, chars: np.ndarray, quotes: np.ndarray, positions: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every object key as (opening quote, closing quote, position of its object's `{`)."""
    colons = positions[chars[positions] == _COLON]
    close_index = np.searchsorted(quotes, colons) - 1
    well_formed = (close_index >= 1) & (close_index % 2 == 1)
    colons, close_index = colons[well_formed], close_index[well_formed]
    key_open, key_close = quotes[close_index - 1], quotes[close_index]
    level = depth[np.searchsorted(positions, key_open) - 1]  # the depth the key sits at
    opener = chars[positions] == _OPEN_OBJECT
    object_level, object_position = depth[opener], positions[opener]
    span = len(data) + 1
    order = np.argsort(object_level * span + object_position, kind="stable")
    combined = (object_level * span + object_position)[order]
    owner = np.searchsorted(combined, level * span + key_open) - 1
    return key_open, key_close, object_position[order][np.maximum(owner, 0)]


def _key_fingerprints(data: bytes, chars: np.ndarray, key_open: np.ndarray, key_close: np.ndarray) -> np.ndarray:
    """(keys, 3) int64: a key's length and its first and last bytes packed, to sort candidates."""
    start, length = key_open + 1, key_close - key_open - 1
    head = np.zeros(len(start), dtype=np.uint64)
    tail = np.zeros(len(start), dtype=np.uint64)
    last = len(chars) - 1
    for k in range(_KEY_PREFIX_BYTES):
        present = k < length
        head |= np.where(present, chars[np.minimum(start + k, last)], 0).astype(np.uint64) << np.uint64(8 * k)
        tail |= np.where(present, chars[np.maximum(key_close - 1 - k, 0)], 0).astype(np.uint64) << np.uint64(8 * k)
    return np.stack([length, head.view(np.int64), tail.view(np.int64)], axis=1)


def _first_repeat(keys: list[tuple[int, str | bytes]]) -> int | None:
    """The offset of the first key (in file order) that repeats an earlier one of the list."""
    seen: set = set()
    for offset, key in sorted(keys):
        if key in seen:
            return offset
        seen.add(key)
    return None


def _duplicate_key(data: bytes, chars: np.ndarray, quotes: np.ndarray, positions: np.ndarray, depth: np.ndarray) -> tuple[int, str] | None:
    """The first key (in file order) that repeats an earlier key of its object, or None.

    Keys are grouped by object and by a fingerprint (length, first and last bytes); only keys that
    share both are compared in full. Keys written with escapes are compared by their decoded text
    with every key of their object (rare)."""
    key_open, key_close, owner = _keys(data, chars, quotes, positions, depth)
    if len(key_open) < 2:
        return None
    escaped = np.zeros(len(key_open), dtype=bool)
    if b"\\" in data:
        backslashes = np.flatnonzero(chars == _BACKSLASH)
        escaped = np.searchsorted(backslashes, key_close) > np.searchsorted(backslashes, key_open)
    repeats: list[int] = []
    fingerprints = _key_fingerprints(data, chars, key_open, key_close)
    plain = np.flatnonzero(~escaped[:])
    columns = fingerprints[plain]
    order = plain[np.lexsort((columns[:, 2], columns[:, 1], columns[:, 0], owner[plain]))]
    same = (owner[order][1:] == owner[order][:-1]) & (fingerprints[order][1:] == fingerprints[order][:-1]).all(axis=1)
    group_starts = np.flatnonzero(np.r_[True, ~same])
    for start, end in zip(group_starts.tolist(), [*group_starts[1:].tolist(), len(order)]):
        if end - start > 1:
            members = order[start:end].tolist()
            found = _first_repeat([(int(key_open[k]), data[key_open[k] + 1 : key_close[k]]) for k in members])
            repeats += [found] if found is not None else []
    for container in np.unique(owner[escaped]).tolist():
        members = np.flatnonzero(owner == container).tolist()
        found = _first_repeat([(int(key_open[k]), msgspec.json.decode(data[key_open[k] : key_close[k] + 1])) for k in members])
        repeats += [found] if found is not None else []
    if not repeats:
        return None
    offset = min(repeats)
    close = int(quotes[np.searchsorted(quotes, offset) + 1])
    return offset, msgspec.json.decode(data[offset : close + 1])


def structure_of(data: bytes) -> JsonStructure:
    """Where a JSON text's structural characters are, unchecked (the text may be cut short)."""
    chars = np.frombuffer(data, dtype=np.uint8)
    quotes = _string_quotes(chars)
    positions = np.flatnonzero(_STRUCTURAL[chars])
    positions = positions[np.searchsorted(quotes, positions) % 2 == 0]  # outside strings
    symbols = chars[positions]
    step = (symbols == _OPEN_OBJECT).astype(np.int64) + (symbols == _OPEN_ARRAY) - (symbols == _CLOSE_OBJECT) - (symbols == _CLOSE_ARRAY)
    return JsonStructure(data, positions, np.cumsum(step), quotes)


KERNEL_MIN_BYTES = 512 * 2**10  # from here a job loads numba anyway (mAP's kernels, from 200 pages of 40 boxes), so the
# compiled scan and page parser cost only their own loading: 1,000 pages (2.6 + 3.3 MB) 1.18-1.25 -> 0.98-1.03 s whole-process,
# 200 pages (0.5 + 0.7 MB) 0.97-1.23 s either way; the demo (26 pages, 0.1 MB) stays without numba, 0.52 s (1.04 s with it)


@dataclass(frozen=True)
class ScannedJson:
    """The compiled scan's findings (`tore_engine.io.json_compiled`), answering as `JsonStructure` does
    for the spans a reader asks for."""

    data: bytes
    top_level: np.ndarray  # rows (key start, key end, value start, value end)
    items: np.ndarray  # rows (array's opening bracket, item start, item end)

    def top_level_values(self) -> dict[str, tuple[int, int]]:
        return {msgspec.json.decode(self.data[k0 : k1 + 1]): (int(v0), int(v1)) for k0, k1, v0, v1 in self.top_level.tolist()}

    def array_items(self, start: int, end: int) -> list[tuple[int, int]]:
        bracket = start
        while bracket < end and self.data[bracket] in b" \t\r\n":
            bracket += 1
        rows = self.items[self.items[:, 0] == bracket]
        return [(int(a), int(b)) for a, b in rows[:, 1:].tolist()]


def _string_at(data: bytes, start: int) -> str:
    """The decoded JSON string whose opening quote is at `start`."""
    end = start + 1
    while True:
        end = data.index(b'"', end)
        backslashes = 0
        while data[end - 1 - backslashes] == _BACKSLASH:
            backslashes += 1
        if backslashes % 2 == 0:
            return msgspec.json.decode(data[start : end + 1])
        end += 1


def _error_at(data: bytes, source: str, status: int, offset: int, max_depth: int) -> InputError:
    from tore_engine.io import json_compiled as json_kernel

    where = _line_and_column(data, offset)
    if status == json_kernel.TOO_DEEP:
        return InputError(f"is nested more than {max_depth} levels deep ({where}); no layout format nests so deep", file=source)
    key = _string_at(data, offset)
    return InputError(f"repeats the key {key!r} in one object ({where}); a JSON key may appear once", file=source)


def _escaped_repeat(data: bytes, objects: np.ndarray) -> int | None:
    """In objects whose keys are written with escapes, the first key repeating another by decoded
    text (the NumPy scan compares those), as an offset in `data`; None if there is none (rare)."""
    found = []
    for start, end in objects.tolist():
        part = data[start : end + 1]
        structure = structure_of(part)
        duplicate = _duplicate_key(part, np.frombuffer(part, dtype=np.uint8), structure.quotes, structure.positions, structure.depth)
        if duplicate is not None:
            found.append(start + duplicate[0])
    return min(found, default=None)


def _scan_compiled(data: bytes, source: str, max_depth: int) -> ScannedJson | None:
    """The compiled scan, or None when the text is malformed (the NumPy scan then applies the
    rules and the decoder names the syntax error)."""
    from tore_engine.io import json_compiled as json_kernel

    status, offset, top, items, escaped = json_kernel.kernels.load()(np.frombuffer(data, dtype=np.uint8), max_depth)
    if status == json_kernel.TOO_DEEP:
        raise _error_at(data, source, status, int(offset), max_depth)
    if status == json_kernel.MALFORMED:
        return None
    repeats = [int(offset)] if status == json_kernel.REPEATED_KEY else []
    if len(escaped) and (other := _escaped_repeat(data, escaped)) is not None:
        repeats.append(other)
    if repeats:
        raise _error_at(data, source, json_kernel.REPEATED_KEY, min(repeats), max_depth)
    return ScannedJson(data, top, items)


def compiled_scan_wanted(size: int) -> bool:
    """Whether a JSON text of `size` bytes is scanned by the compiled kernel (see `scan_json`)."""
    from tore_engine.core.jit import numba_available

    if size < KERNEL_MIN_BYTES or not numba_available():
        return False
    from tore_engine.io import json_compiled as json_kernel

    return json_kernel.prepared(size)


def scan_json(data: bytes, source: str, *, max_depth: int = MAX_JSON_DEPTH, compiled: bool | None = None) -> JsonSpans:
    """The structure of a JSON text; an `InputError` when it nests deeper than `max_depth` or an
    object repeats a key. (Syntax errors are left to the decoder, which names them better.)

    Large texts are scanned by the compiled kernel (`json_kernel`, memory bounded by the open
    objects' keys), small ones with NumPy; both apply the same rules (`compiled` forces one)."""
    if compiled if compiled is not None else compiled_scan_wanted(len(data)):
        scanned = _scan_compiled(data, source, max_depth)
        if scanned is not None:
            return scanned  # else malformed: the NumPy scan applies the rules, the decoder names the error
    structure = structure_of(data)
    chars, quotes, positions, depth = np.frombuffer(data, dtype=np.uint8), structure.quotes, structure.positions, structure.depth
    too_deep = np.flatnonzero(depth > max_depth)
    if len(too_deep):
        where = _line_and_column(data, int(positions[too_deep[0]]))
        raise InputError(f"is nested more than {max_depth} levels deep ({where}); no layout format nests so deep", file=source)
    duplicate = _duplicate_key(data, chars, quotes, positions, depth)
    if duplicate is not None:
        offset, key = duplicate
        raise InputError(f"repeats the key {key!r} in one object ({_line_and_column(data, offset)}); a JSON key may appear once", file=source)
    return structure


_LOCATION = re.compile(r"^(?P<detail>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\.\.\.\]")


def path_text(steps: tuple[str | int, ...]) -> str:
    """A JSON path as `pages[3].boxes[2].bbox`."""
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps).lstrip(".")


class SchemaError(InputError):
    """Input that does not match its format's schema, with where it happened as a path of keys
    and indices (`location`), so a reader can name the page and box instead."""

    def __init__(self, detail: str, location: tuple[str | int, ...], *, file: str | None = None) -> None:
        self.detail = detail
        self.location = location
        where = path_text(location)
        super().__init__(f"{detail} (at {where})" if where else detail, file=file)

    def in_item(self, item_key: str | None = None) -> tuple[int | None, int | None, str]:
        """For an error inside a list of items (pages, lines, annotations) that hold a list
        `item_key` (boxes): the item's index, the sub-item's index and the problem, with the
        rest of the path."""
        steps = self.location
        index = steps[0] if steps and isinstance(steps[0], int) else None
        rest = steps[1:] if index is not None else steps
        box = rest[1] if item_key and len(rest) >= 2 and rest[0] == item_key and isinstance(rest[1], int) else None
        where = path_text(rest[2:] if box is not None else rest)
        return index, box, f"{self.detail} (at {where})" if where else self.detail

    def __reduce__(self) -> tuple[Callable[..., SchemaError], tuple[str, tuple[str | int, ...], str | None]]:
        """Keep every field when the error crosses a process boundary (a worker's failure)."""
        return _rebuild_schema_error, (self.detail, self.location, self.file)


def _rebuild_schema_error(detail: str, location: tuple[str | int, ...], file: str | None) -> SchemaError:
    return SchemaError(detail, location, file=file)


RESEMBLANCE = 0.75  # difflib's ratio from which a name is taken for a misspelling: 'box' of 'bbox' (0.86)
# or 'boxes' (0.75), 'widht' of 'width' (0.8); not 'nmae' of 'image' (0.67)


def resembling(name: str, known: Iterable[str]) -> str | None:
    """The known name that `name` most resembles, as a misspelling would, or None."""
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=RESEMBLANCE)
    return matches[0] if matches else None


def unknown_name(kind: str, name: str, known: Iterable[str]) -> str:
    """"unknown key 'box' (did you mean 'bbox'?)": an unknown name, with the known one it resembles."""
    guess = resembling(name, known)
    return f"unknown {kind} {name!r}" + (f" (did you mean {guess!r}?)" if guess is not None else "")


def _keys_at(schema: Any, path: str) -> list[str]:
    """The keys a schema defines for the object at msgspec's `path` (`.boxes[0]`, `[...]` for a
    dict's value), to say which one an unknown key resembles; none when it leads to no struct."""
    from msgspec import inspect

    def following(kind: inspect.Type, step: str | int | None) -> list[inspect.Type]:
        if isinstance(kind, inspect.UnionType):
            return [found for member in kind.types for found in following(member, step)]
        if isinstance(step, str) and isinstance(kind, inspect.StructType):
            return [field.type for field in kind.fields if field.encode_name == step]
        if step is None and isinstance(kind, inspect.DictType):
            return [kind.value_type]
        if isinstance(step, int) and isinstance(kind, (inspect.ListType, inspect.VarTupleType)):
            return [kind.item_type]
        return [kind.item_types[step]] if isinstance(step, int) and isinstance(kind, inspect.TupleType) and step < len(kind.item_types) else []

    kinds = [inspect.type_info(schema)]
    for name, index in _STEP.findall(path):
        step = name or (int(index) if index else None)
        kinds = [found for kind in kinds for found in following(kind, step)]
    kinds = [member for kind in kinds for member in (kind.types if isinstance(kind, inspect.UnionType) else (kind,))]
    return [field.encode_name for kind in kinds if isinstance(kind, inspect.StructType) for field in kind.fields]


def _readable(detail: str, schema: Any, path: str) -> str:
    """msgspec's messages in our words; an unknown key with the key of `schema` (at msgspec's
    `path`) it resembles."""
    if (match := re.fullmatch(r"Object contains unknown field `(.*)`", detail, re.DOTALL)) is not None:
        return unknown_name("key", match.group(1), _keys_at(schema, path) if schema is not Any else ())
    if (match := re.fullmatch(r"Object missing required field `(.*)`", detail, re.DOTALL)) is not None:
        return f"missing key {match.group(1)!r}"
    replacements = (
        (r"Expected `array` of length (\d+), got (\d+)", r"expected a list of \1 numbers, got \2 values"),
        (r"Expected `array` of length (\d+)$", r"expected a list of \1 numbers"),
        (r"Expected `(.*?)`, got `(.*?)`", r"expected \1, got \2"),
        (r"Number out of range", "number out of range"),
    )
    for pattern, replacement in replacements:
        detail = re.sub(pattern, replacement, detail)
    return detail.replace("`", "")


def _location(path: str) -> tuple[str | int, ...]:
    return tuple(name if name else int(index) for name, index in _STEP.findall(path) if name or index)


def schema_error(error: msgspec.ValidationError, source: str, prefix: tuple[str | int, ...] = (), schema: Any = Any) -> SchemaError:
    """msgspec's validation error as a `SchemaError` at its place (after `prefix`); `schema`, the type
    decoded, lets an unknown key be told with the key it resembles."""
    match = _LOCATION.match(str(error))
    assert match is not None  # the pattern matches any text
    path = match["path"] or ""
    return SchemaError(_readable(match["detail"], schema, path), prefix + _location(path), file=source)


def decode_json(data: bytes, source: str, schema: Any = Any, *, prefix: tuple[str | int, ...] = ()) -> Any:
    """Decode JSON bytes (already scanned, or a part of a scanned text) against `schema`."""
    try:
        return msgspec.json.decode(data, type=schema)
    except msgspec.ValidationError as error:
        raise schema_error(error, source, prefix, schema) from None
    except msgspec.DecodeError as error:
        raise InputError(f"is not valid JSON: {_decode_problem(data, str(error))}", file=source) from None
    except RecursionError:
        raise InputError("is not valid JSON: nested too deeply", file=source) from None


def _decode_problem(data: bytes, message: str) -> str:
    """msgspec's syntax error with its byte offset as a line and column (and a word on NaN)."""
    match = re.search(r"\(byte (\d+)\)", message)
    text = message.removeprefix("JSON is malformed: ").replace("Invalid UTF-8 encoded string", "the text is not UTF-8")
    if match:
        offset = int(match.group(1))
        text = text.replace(match.group(0), f"({_line_and_column(data, offset)})")
        if data[offset : offset + 9].lstrip(b"-").startswith((b"NaN", b"Infinity")):
            text += ": NaN and Infinity are not JSON numbers (coordinates and scores must be finite)"
    return text


def parse_json(data: bytes, source: str, schema: Any = Any, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Scan, then decode, a whole JSON text."""
    scan_json(data, source, max_depth=max_depth)
    return decode_json(data, source, schema)


def read_json(path: str | Path, schema: Any = Any, *, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """A JSON file, bounded in size and depth, without duplicate keys, decoded against `schema`."""
    return parse_json(read_json_bytes(path, max_bytes=max_bytes), str(path), schema)


def first_char(data: bytes, start: int = 0) -> bytes:
    """The first non-blank byte of `data` at or after `start` (b"" if none), without copying it."""
    match = _FIRST_NON_BLANK.search(data, start)
    return match.group(0) if match else b""
