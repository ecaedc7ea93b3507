"""The shared data types: a layout set (a dataset's reference, or one model's predictions) of pages,
each page holding its boxes column-wise, as NumPy arrays (the way `supervision.Detections` does),
so that ten thousand pages of forty boxes stay small in memory.

Loaders for each input format build these (`tore_engine.loaders`); everything downstream
(rasterisation, scorers' TORE conversion, the app's overlays) reads only these types.
"""

from __future__ import annotations

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
    pages: list[Page]
    taxonomy: list[str] | None = None  # declared class order, if any
    source: str = "<memory>"  # the file it came from, for error messages
    warnings: list = field(default_factory=list)  # InputWarning raised while loading

    def labels_in_use(self) -> list[str]:
        """The sorted set of labels that occur in the boxes."""
        return sorted({label for page in self.pages for label in page.labels})

    def class_list(self) -> list[str]:
        """The declared taxonomy, else the sorted set of labels in use."""
        return list(self.taxonomy) if self.taxonomy is not None else self.labels_in_use()
