"""The shared data types: a layout set (a dataset's reference, or one model's predictions) of pages,
each page holding its boxes column-wise, as NumPy arrays (the way `supervision.Detections` does),
so that ten thousand pages of forty boxes stay small in memory.

Loaders for each input format build these (`tore_engine.loaders`); everything downstream
(rasterisation, scorers' TORE conversion, the app's overlays) reads only these types.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class PageImage:
    """Where a page can be drawn from: an image file, or one page (0-based) of a PDF."""

    path: Path
    pdf_page: int | None = None


@dataclass(slots=True)
class Page:
    """One page: its frame in pixels and its boxes `[x1, y1, x2, y2]` (origin top-left)."""

    id: str
    width: float
    height: float
    labels: list[str]
    bboxes: np.ndarray  # (n, 4) float64
    scores: np.ndarray | None = None  # (n,) float64, NaN where a box has no score
    image: PageImage | None = None

    def __post_init__(self) -> None:
        self.bboxes = np.asarray(self.bboxes, dtype=np.float64).reshape(-1, 4)

    @property
    def box_count(self) -> int:
        return len(self.labels)


@dataclass
class LayoutSet:
    """A dataset's reference layout or one model's predicted layout, as formats.md section 1 says."""

    name: str
    pages: Sequence[Page]  # a list, or `PageColumns` for a large file
    taxonomy: list[str] | None = None  # declared class order, if any
    source: str = "<memory>"  # the file it came from, for error messages
    warnings: list = field(default_factory=list)  # InputWarning raised while loading

    def labels_in_use(self) -> list[str]:
        """The sorted set of labels that occur in the boxes."""
        if isinstance(self.pages, PageColumns):
            return self.pages.labels_in_use()
        return sorted({label for page in self.pages for label in page.labels})

    def page_ids(self) -> list[str]:
        return self.pages.ids if isinstance(self.pages, PageColumns) else [page.id for page in self.pages]

    def class_list(self) -> list[str]:
        """The declared taxonomy, else the sorted set of labels in use."""
        return list(self.taxonomy) if self.taxonomy is not None else self.labels_in_use()


class PageColumns(Sequence):
    """Many pages held column-wise in a few large arrays: what a large file is loaded into.

    A hundred thousand `Page` objects, each with its own small arrays, cost several times their
    boxes' bytes in object headers and allocator fragmentation; here a box costs its four
    coordinates, a label code and a score. Indexing gives an ordinary `Page` (made on access), so
    everything downstream reads both kinds alike.
    """

    def __init__(self, ids: list[str], sizes: np.ndarray, offsets: np.ndarray, bboxes: np.ndarray,
                 codes: np.ndarray, vocabulary: list[str], scores: np.ndarray | None, images: dict[int, PageImage]) -> None:
        self.ids = ids
        self.sizes = sizes  # (pages, 2) width, height
        self.offsets = offsets  # (pages + 1,) first box of each page
        self.bboxes = bboxes  # (boxes, 4)
        self.codes = codes  # (boxes,) index into vocabulary
        self.vocabulary = vocabulary
        self.scores = scores  # (boxes,) NaN where a box has no score, or None
        self.images = images  # page position -> image, for the pages that have one

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, position: int) -> Page:  # type: ignore[override]
        if not -len(self) <= position < len(self):
            raise IndexError(position)
        position %= len(self)
        start, end = self.offsets[position], self.offsets[position + 1]
        return Page(
            self.ids[position],
            float(self.sizes[position, 0]),
            float(self.sizes[position, 1]),
            [self.vocabulary[code] for code in self.codes[start:end]],
            self.bboxes[start:end],
            None if self.scores is None else self.scores[start:end],
            self.images.get(position),
        )

    def labels_in_use(self) -> list[str]:
        return sorted({self.vocabulary[code] for code in np.unique(self.codes)})

    def relabelled(self, label_map: dict[str, str]) -> "PageColumns":
        """The same pages with labels renamed or merged (only the vocabulary changes)."""
        vocabulary = [label_map.get(label, label) for label in self.vocabulary]
        return PageColumns(self.ids, self.sizes, self.offsets, self.bboxes, self.codes, vocabulary, self.scores, self.images)


class PageColumnsBuilder:
    """Collects pages one at a time into growing flat buffers, then freezes them as `PageColumns`."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.sizes = array("d")
        self.offsets = array("q", [0])
        self.coordinates = array("d")
        self.codes = array("q")
        self.scores = array("d")
        self.vocabulary: dict[str, int] = {}
        self.images: dict[int, PageImage] = {}

    def add(self, page: Page) -> None:
        if page.image is not None:
            self.images[len(self.ids)] = page.image
        self.ids.append(page.id)
        self.sizes.extend((page.width, page.height))
        self.offsets.append(self.offsets[-1] + page.box_count)
        self.coordinates.extend(page.bboxes.ravel().tolist())
        self.codes.extend(self.vocabulary.setdefault(label, len(self.vocabulary)) for label in page.labels)
        self.scores.extend(page.scores.tolist() if page.scores is not None else [float("nan")] * page.box_count)

    def build(self) -> PageColumns:
        scores = np.frombuffer(self.scores, dtype=np.float64)
        return PageColumns(
            self.ids,
            np.frombuffer(self.sizes, dtype=np.float64).reshape(-1, 2),
            np.frombuffer(self.offsets, dtype=np.int64),
            np.frombuffer(self.coordinates, dtype=np.float64).reshape(-1, 4),
            np.frombuffer(self.codes, dtype=np.int64),
            list(self.vocabulary),
            None if np.isnan(scores).all() else scores,
            self.images,
        )
