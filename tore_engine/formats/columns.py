"""Collecting decoded pages into `PageColumns`: what every reader does after decoding.

Readers append each page's id, frame and boxes to flat buffers (plain Python sequences extend
fast), or hand over pages already in columns (the compiled parser's chunks), which are kept as they
are; `build` joins them into NumPy arrays in one copy, and `LayoutSet` then checks them all at once.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.layout import PageColumns, PageImage
from tore_engine.core.offsets import offsets_of
from tore_engine.core.polygons import Polygons

if TYPE_CHECKING:
    from tore_engine.formats.page_parser import ParsedPages

NO_SCORE = math.nan


def non_finite_score(score: float) -> str:
    """Why a NaN or infinite score read from a file is refused: TORE holds a box without a score as
    NaN (`NO_SCORE`), so a NaN read as a score would silently rank as none."""
    kind = "NaN" if math.isnan(score) else "infinite"
    return f"score is {kind}, and a score must be a finite number; a box without a score has none (or null)"


_COLUMNS = ("sizes", "box_counts", "coordinates", "codes", "scores", "polygon_counts", "polygon_points")


class ColumnsBuilder:
    """Pages appended one at a time into growing flat buffers, or in columns (`extend`)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.sizes = array("d")
        self.box_counts = array("q")
        self.coordinates = array("d")
        self.codes = array("q")
        self.scores = array("d")
        self.vocabulary: dict[str, int] = {}
        self.images: dict[int, PageImage] = {}
        self._scored = False
        self.polygon_counts = array("q")  # points of each box's polygon (0: a plain box)
        self.polygon_points = array("d")  # x, y of every polygon point
        # The columns so far, in `_COLUMNS` order, a chunk at a time: `extend`'s as it takes them, and
        # the buffers of the pages `add`ed before each. Joined once, by `build`: appending 25 MB of
        # turned boxes' points to the buffers copied them twice, holding the GIL, so that the two
        # sides' reading threads ran one after the other.
        self._chunks: list[tuple[np.ndarray, ...]] = []

    def add(self, page_id: str, width: float, height: float, labels: Sequence[str],
            coordinates: Iterable[float], scores: Sequence[float | None] | None = None,
            image: PageImage | None = None, polygons: Sequence[object | None] | None = None) -> None:
        """One page; `coordinates` are its boxes' x1, y1, x2, y2 one after another, `scores` one
        per box (None for a box without a score), or None when no box has one; `polygons` one per
        box (None, or its points, flat or as pairs; its bbox then bounds it), or None when no box
        is a polygon."""
        if image is not None:
            self.images[len(self.ids)] = image
        self.ids.append(page_id)
        self.sizes.extend((width, height))
        self.box_counts.append(len(labels))
        self.coordinates.extend(coordinates)
        vocabulary = self.vocabulary
        self.codes.extend([vocabulary.setdefault(label, len(vocabulary)) for label in labels])
        self._add_polygons(page_id, len(labels), polygons)
        if scores is None:
            self.scores.extend([NO_SCORE] * len(labels))
        else:
            self._scored = self._scored or any(score is not None for score in scores)
            self.scores.extend([NO_SCORE if score is None else score for score in scores])

    def _add_polygons(self, page_id: str, boxes: int, polygons: Sequence[object | None] | None) -> None:
        if polygons is None:
            self.polygon_counts.frombytes(bytes(8 * boxes))
            return
        points = self.polygon_points
        for box, polygon in enumerate(polygons):
            if polygon is None:
                self.polygon_counts.append(0)
                continue
            before = len(points)
            try:  # a flat list of numbers (native JSON's) straight in: a NumPy array a polygon took half the reading
                points.extend(polygon)  # type: ignore[arg-type]  # anything else raises, and is read below
                count = len(points) - before
            except (TypeError, OverflowError):
                del points[before:]
                try:
                    flat = np.asarray(polygon, dtype=np.float64).reshape(-1)
                except (TypeError, ValueError, OverflowError):
                    raise InputError("a polygon must be numbers, each within a double's range", page=page_id, box=box) from None
                points.frombytes(flat.tobytes())
                count = len(flat)
            if count % 2:
                raise InputError(f"a polygon has an odd count of numbers ({count}): x1, y1, x2, y2, ...", page=page_id, box=box)
            self.polygon_counts.append(count // 2)

    def extend(self, pages: "ParsedPages", images: dict[int, PageImage] | None = None) -> None:
        """Pages already in columns (the compiled parser's), as `add` would have taken them one by
        one; `images` by the pages' positions among them."""
        self.images.update({len(self.ids) + position: image for position, image in (images or {}).items()})
        vocabulary = self.vocabulary
        codes = np.array([vocabulary.setdefault(label, len(vocabulary)) for label in pages.labels], dtype=np.int64)
        self._flush()
        self.ids.extend(pages.ids)
        if pages.scores is not None:
            self._scored = True
        self._chunks.append((np.asarray(pages.sizes, np.float64).reshape(-1), np.asarray(pages.counts, np.int64),
                             np.asarray(pages.coordinates, np.float64).reshape(-1), codes[pages.codes],
                             np.full(len(pages.codes), NO_SCORE) if pages.scores is None else np.asarray(pages.scores, np.float64),
                             np.asarray(pages.polygon_counts, np.int64), np.asarray(pages.polygon_points, np.float64).reshape(-1)))

    def _flush(self) -> None:
        """The buffers of the pages `add`ed so far, as a chunk (emptied)."""
        if self.box_counts:
            self._chunks.append(tuple(np.frombuffer(buffer, dtype=buffer.typecode) for buffer in (getattr(self, name) for name in _COLUMNS)))
            for name in _COLUMNS:
                setattr(self, name, array(getattr(self, name).typecode))

    def build(self) -> PageColumns:
        self._flush()
        sizes, box_counts, coordinates, codes, scores, polygon_counts, polygon_points = (
            np.concatenate(column) if column else np.zeros(0, getattr(self, name).typecode)  # a buffer's typecode is its NumPy dtype's
            for name, column in zip(_COLUMNS, zip(*self._chunks) if self._chunks else [()] * len(_COLUMNS)))
        offsets = offsets_of(box_counts)
        if len(coordinates) != 4 * offsets[-1]:
            raise ValueError("a reader gave a box without four coordinates")
        polygons = None
        if len(polygon_points):
            polygons = Polygons(offsets_of(polygon_counts), polygon_points.reshape(-1, 2))
        return PageColumns(self.ids, sizes.reshape(-1, 2), offsets, coordinates.reshape(-1, 4), codes, list(self.vocabulary),
                           scores if self._scored else None, self.images, polygons)
