"""An evaluation's warnings held packed: msgpack bytes, one chunk a batch, made into `InputWarning`s
only as they are read.

A run of 100,000 synthetic pages has 100,000 warnings (a box clipped at its page's edge on most
pages). Sent from the workers as objects, they arrived as 460,000 small Python objects, 25 MB held
beside the run's arrays, and left about 40 MB of Python's small-object pools that could not be given
back (the unpickling's temporaries interleaved with what stays). Packed, they are about 11 MB of
bytes, sent as a few large objects. Every reader of an evaluation's warnings goes through
`Sequence[InputWarning]`, so none of them changes; a pass over all of them decodes one chunk at a time.
A chunk that msgpack cannot hold (a lone surrogate, possible only through the Python API; an integer
beyond 64 bits) is kept as its warnings. A saved evaluation's warnings are packed from its text's
rows as they are decoded (`of_rows`), without a warning object made.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

import msgspec

from tore_engine.core.errors import InputWarning

CHUNK = 4096  # warnings a chunk, at most, when a list is packed: what one random read decodes

_Row = tuple[str | None, int | None, str | None, str]
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[_Row])
_Chunk = bytes | tuple[InputWarning, ...]


def _packed(rows: Sequence[Any]) -> _Chunk:
    """Rows that msgpack writes as [page, box, side, message] (tuples, array-like msgspec structs)."""
    try:
        return _ENCODER.encode(rows)
    except (UnicodeEncodeError, OverflowError):
        return tuple(InputWarning(*msgspec.to_builtins(row)) for row in rows)


def _unpacked(chunk: _Chunk) -> list[InputWarning]:
    return list(chunk) if isinstance(chunk, tuple) else [InputWarning(*row) for row in _DECODER.decode(chunk)]


def _rows(chunk: _Chunk) -> list[_Row]:
    return [_row(warning) for warning in chunk] if isinstance(chunk, tuple) else _DECODER.decode(chunk)


def _row(warning: InputWarning) -> _Row:
    return warning.page, None if warning.box is None else int(warning.box), warning.side, warning.message


def warning_rows(warnings: Sequence[InputWarning], start: int = 0, stop: int | None = None) -> Iterator[_Row]:
    """Warnings `start` to `stop` as rows (page, box, side, message), a chunk at a time: what
    report.json and a saved evaluation write, made from packed warnings without a warning object
    (100,000 warnings: 66-70 against 256-292 ms as objects made into report.json's records)."""
    stop = len(warnings) if stop is None else min(stop, len(warnings))
    if isinstance(warnings, PackedWarnings):
        yield from warnings.rows(start, stop)
        return
    for step in range(start, stop, CHUNK):
        yield from (_row(warning) for warning in warnings[step:min(step + CHUNK, stop)])


class PackedWarnings(Sequence[InputWarning]):
    """Warnings in order, packed in chunks; immutable. `of` packs a list, `joined` puts sequences
    together (reusing packed chunks as they are)."""

    __slots__ = ("_chunks", "_ends", "_last")

    def __init__(self, chunks: Sequence[_Chunk] = (), counts: Sequence[int] = ()) -> None:
        if len(chunks) != len(counts):
            raise ValueError("one count a chunk")
        kept = [(chunk, count) for chunk, count in zip(chunks, counts) if count]
        self._chunks = tuple(chunk for chunk, _ in kept)
        self._ends = tuple(itertools.accumulate(count for _, count in kept))
        self._last: tuple[int, list[InputWarning]] | None = None  # the chunk a random read decoded last

    @classmethod
    def of(cls, warnings: Iterable[InputWarning]) -> PackedWarnings:
        """`warnings` packed, `CHUNK` to a chunk."""
        return cls.of_rows([_row(warning) for warning in warnings])

    @classmethod
    def of_rows(cls, rows: Sequence[Any]) -> PackedWarnings:
        """Rows of [page, box, side, message] (tuples, or array-like msgspec structs such as a saved
        evaluation's) packed, `CHUNK` to a chunk."""
        parts = [rows[start:start + CHUNK] for start in range(0, len(rows), CHUNK)]
        return cls([_packed(part) for part in parts], [len(part) for part in parts])

    @classmethod
    def joined(cls, parts: Iterable[Sequence[InputWarning]]) -> PackedWarnings:
        """The warnings of `parts` one after the other; packed parts keep their chunks."""
        chunks: list[_Chunk] = []
        counts: list[int] = []
        for part in parts:
            packed = part if isinstance(part, PackedWarnings) else cls.of(part)
            chunks += packed._chunks
            counts += packed._counts()
        return cls(chunks, counts)

    def _counts(self) -> list[int]:
        return [end - start for start, end in zip((0, *self._ends), self._ends)]

    def _chunk(self, index: int) -> list[InputWarning]:
        last = self._last
        if last is not None and last[0] == index:
            return last[1]
        warnings = _unpacked(self._chunks[index])
        self._last = (index, warnings)
        return warnings

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> InputWarning: ...

    @overload
    def __getitem__(self, index: slice) -> list[InputWarning]: ...

    def __getitem__(self, index: int | slice) -> InputWarning | list[InputWarning]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            return self._range(start, stop)
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError("warning index out of range")
        chunk = bisect.bisect_right(self._ends, position)
        return self._chunk(chunk)[position - (self._ends[chunk - 1] if chunk else 0)]

    def _range(self, start: int, stop: int) -> list[InputWarning]:
        """Warnings `start` to `stop`, decoding only the chunks they are in."""
        return [warning for part in self._parts(start, stop, self._chunk) for warning in part]

    def rows(self, start: int, stop: int) -> Iterator[_Row]:
        """`warning_rows`: warnings `start` to `stop` as rows, decoding one chunk at a time, only those they are in."""
        for part in self._parts(max(start, 0), min(stop, len(self)), lambda chunk: _rows(self._chunks[chunk])):
            yield from part

    def _parts(self, start: int, stop: int, chunk_items: Callable[[int], list[Any]]) -> Iterator[list[Any]]:
        """Items `start` to `stop` (0 <= start, stop <= len), a chunk's at a time, from `chunk_items(chunk)`."""
        chunk = bisect.bisect_right(self._ends, start)
        while start < stop:
            first = self._ends[chunk - 1] if chunk else 0
            yield chunk_items(chunk)[start - first:min(stop, self._ends[chunk]) - first]
            start, chunk = self._ends[chunk], chunk + 1

    def __iter__(self) -> Iterator[InputWarning]:
        for chunk in self._chunks:
            yield from _unpacked(chunk)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) and not isinstance(other, str | bytes) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedWarnings({len(self)} warnings in {len(self._chunks)} chunks)"

    def __reduce__(self) -> tuple[type[PackedWarnings], tuple[tuple[_Chunk, ...], list[int]]]:
        return PackedWarnings, (self._chunks, self._counts())
