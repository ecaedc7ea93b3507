"""The shared data types: a layout set (a dataset's reference, or one model's predictions) of pages,
each page holding its boxes column-wise, as NumPy arrays (the way `supervision.Detections` does).

Every reader (`tore_engine.formats`) builds these, and a notebook user may build them by hand:
either way they validate themselves, with the same clear errors as the readers. Everything
downstream (rasterisation, the scorers' TORE conversion, the app's overlays) reads only these.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, overload

import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.offsets import offsets_of
from tore_engine.core.polygons import Polygons, check_page

BACKGROUND = "Background"
MAX_PAGE_SIDE = 2**31  # pixels; a side beyond this is a unit mistake, not a page
MAX_IMAGE_PIXELS = 120_000_000  # of a page image decoded or drawn (an A0 poster at 300 dpi): more risks the memory
NAMES_SHOWN = 20  # names listed in one message


@dataclass(frozen=True)
class PageImage:
    """Where a page can be drawn from: an image file, one page (0-based) of a PDF, or an image stored
    inside the data file at `path` (`parquet_cell` = column, row, and the item of a list column, in a
    Parquet or docling-eval shard; or ("pages", page_no, None) for the image a DoclingDocument
    embeds). `tore_engine.formats.stored_images.read_image_bytes` reads the stored ones."""

    path: Path
    pdf_page: int | None = None
    parquet_cell: tuple[str, int, int | None] | None = None


def unicode_problem(text: str) -> str | None:
    """Why `text` cannot be written out as UTF-8 (a lone surrogate), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{text!r} is not valid Unicode (it holds a lone surrogate)"
    return None


def _check_frame(page_id: str, width: float, height: float) -> None:
    for key, value in (("width", width), ("height", height)):
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"{key} must be a positive finite number, got {value!r}", page=page_id)
        if value > MAX_PAGE_SIDE:
            raise InputError(f"{key} = {value!r} is larger than {MAX_PAGE_SIDE} pixels", page=page_id)


def _check_label(label: object, page_id: str, box: int) -> None:
    if not isinstance(label, str) or not label:
        raise InputError(f"label must be a non-empty string, got {label!r}", page=page_id, box=box)
    if (problem := unicode_problem(label)) is not None:
        raise InputError(f"label {problem}", page=page_id, box=box)


def _first_bad_box(bboxes: np.ndarray) -> int | None:
    bad = np.flatnonzero(~np.isfinite(bboxes).all(axis=1))
    return int(bad[0]) if len(bad) else None


def scaled_boxes(bboxes: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Boxes from one frame into another as docs/algorithm.md#pages says: multiply, then divide, in
    float64, with the declared frames (`396 * (1000 / 792)` is one ulp short of 500, and outward
    rounding would add a column). A coordinate past float64's range (a frame of 5e-324 scaled to
    10) is IEEE's infinity, which rasterisation clips at the page's edge as any coordinate beyond
    it, and the clipped box is in the warnings: that is the exact float64 result, so it is no
    event for NumPy to print."""
    with np.errstate(over="ignore"):
        return bboxes * numerator / denominator


def _size_text(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


@dataclass(slots=True, repr=False)
class Page:
    """One page: its frame in pixels and its boxes `[x1, y1, x2, y2]` (origin top-left).

    `scores` holds NaN for a box without a score, or is None when no box has one. `polygons`, when
    some boxes are polygons, holds their outlines (one entry a box: None, or its points), each
    box's `bbox` then being its outline's bounding box (`core.polygons`).
    """

    id: str
    width: float
    height: float
    labels: list[str]
    bboxes: np.ndarray  # (n, 4) float64
    scores: np.ndarray | None = None  # (n,) float64
    image: PageImage | None = None
    polygons: Polygons | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or unicode_problem(self.id) is not None:
            raise InputError(f"a page id must be a string of valid Unicode, got {self.id!r}")
        self.width, self.height = _as_float(self.width, "width", self.id), _as_float(self.height, "height", self.id)
        _check_frame(self.id, self.width, self.height)
        self.labels = list(self.labels)
        self.bboxes = self._column(self.bboxes, (len(self.labels), 4), "bboxes")
        if self.scores is not None:
            self.scores = self._column(self.scores, (len(self.labels),), "scores")
            if np.isinf(self.scores).any():
                raise InputError("a score is infinite", page=self.id, box=int(np.flatnonzero(np.isinf(self.scores))[0]))
        for box, label in enumerate(self.labels):
            _check_label(label, self.id, box)
        self.polygons = _polygon_column(self.polygons, len(self.labels), self.id)
        check_page(self.polygons, self.bboxes, np.array([0, len(self.labels)]), [self.id])
        if (bad := _first_bad_box(self.bboxes)) is not None:
            raise InputError(f"bbox has a NaN or infinite coordinate: {self.bboxes[bad].tolist()}", page=self.id, box=bad)

    def __repr__(self) -> str:
        """One short line (a page may hold thousands of boxes): id, frame, boxes."""
        scored = ", scored" if self.scores is not None else ""
        return f"Page({self.id!r}, {_size_text(self.width)} x {_size_text(self.height)}, {self.box_count:,} boxes{scored})"

    def _column(self, values: object, shape: tuple[int, ...], name: str) -> np.ndarray:
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be numbers", page=self.id) from None
        if array.size == 0 and shape[0] == 0:
            return array.reshape(shape)
        if array.shape != shape:
            raise InputError(f"{name} has shape {array.shape}, expected {shape} for {len(self.labels)} labels", page=self.id)
        return array

    @classmethod
    def empty(cls, page_id: str, width: float, height: float, image: PageImage | None = None) -> "Page":
        """A page without boxes: all Background on its side."""
        return cls(page_id, width, height, [], np.zeros((0, 4)), None, image)

    @classmethod
    def _unchecked(cls, page_id: str, width: float, height: float, labels: list[str], bboxes: np.ndarray,
                   scores: np.ndarray | None, image: PageImage | None, polygons: Polygons | None = None) -> "Page":
        """A page from columns that `PageColumns.validate` has already checked (no second check)."""
        page = object.__new__(cls)
        page.id, page.width, page.height, page.labels, page.bboxes, page.scores, page.image, page.polygons = (
            page_id, width, height, labels, bboxes, scores, image, polygons)
        return page

    @property
    def box_count(self) -> int:
        return len(self.labels)

    def scaled_to(self, width: float, height: float) -> "Page":
        """This page's boxes in another (checked) frame, `scaled_boxes`: results of arithmetic,
        which may be infinite, not input, so not checked again as a page built by hand is."""
        if (width, height) == (self.width, self.height):
            return self
        numerator = np.array([width, height, width, height])
        denominator = np.array([self.width, self.height, self.width, self.height])
        polygons = None if self.polygons is None else self.polygons.scaled(
            np.broadcast_to(numerator[:2], (self.box_count, 2)), np.broadcast_to(denominator[:2], (self.box_count, 2)))
        return Page._unchecked(self.id, width, height, self.labels, scaled_boxes(self.bboxes, numerator, denominator), self.scores, self.image, polygons)

    def above_score(self, threshold: float) -> tuple["Page", np.ndarray | None]:
        """The page without the boxes scored below `threshold` (boxes without a score stay), and
        the original indices of the boxes kept (None when nothing was dropped)."""
        if self.scores is None:
            return self, None
        keep = ~(self.scores < threshold)  # NaN (no score) compares False: kept
        if keep.all():
            return self, None
        labels = [label for label, kept in zip(self.labels, keep.tolist()) if kept]
        polygons = None if self.polygons is None else self.polygons.take(keep)
        return replace(self, labels=labels, bboxes=self.bboxes[keep], scores=self.scores[keep], polygons=polygons), np.flatnonzero(keep)


def _polygon_column(polygons: object, boxes: int, page_id: str) -> Polygons | None:
    """A page's `polygons` as given (a `Polygons`, or one entry a box) as a column, or None when no
    box is a polygon."""
    if polygons is None:
        return None
    if not isinstance(polygons, Polygons):
        if not isinstance(polygons, Sequence) or isinstance(polygons, str):
            raise InputError("polygons must be one entry a box: None, or the box's points", page=page_id)
        try:
            polygons = Polygons.of(polygons)
        except InputError as error:
            raise InputError(error.problem, page=page_id) from None
    if len(polygons) != boxes:
        raise InputError(f"polygons has {len(polygons)} entries, expected one for each of the {boxes} boxes", page=page_id)
    return polygons if polygons.is_polygon().any() else None


def _as_float(value: object, key: str, page_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{key} must be a number, got {value!r}", page=page_id)
    return float(value)


class PagePart(Protocol):
    """Some pages of a layout set, sent to a worker: `columns` gives them (reading them from their
    file, if that is where they still are)."""

    def columns(self) -> "PageColumns": ...


class PageSource(Sequence[Page], ABC):
    """A layout set's pages, however they are held: in columns (`PageColumns`), or still in their
    file (a reader's lazy pages, which workers read themselves). The runner needs only these."""

    ids: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, position: int) -> Page: ...

    @overload
    def __getitem__(self, position: slice) -> list[Page]: ...

    def __getitem__(self, position: int | slice) -> Page | list[Page]:
        if isinstance(position, slice):
            return [self._page(k) for k in range(*position.indices(len(self)))]
        if not -len(self) <= position < len(self):
            raise IndexError(position)
        return self._page(position % len(self))

    @abstractmethod
    def _page(self, position: int) -> "Page":
        """The page at `position` (0 <= position < len)."""

    @abstractmethod
    def labels_in_use(self) -> list[str]: ...

    @abstractmethod
    def relabelled(self, label_map: dict[str, str]) -> "PageSource": ...

    @abstractmethod
    def validate(self) -> None: ...

    @abstractmethod
    def box_count(self) -> int: ...

    def polygon_rows(self) -> int:
        """The pixel rows of the boxes that paint as polygons (each a rectangle a row for the page
        kernel), by their bounding boxes: what a job's polygons weigh. 0 unless known without
        reading the pages (a file read on demand tells its boxes, not their shapes)."""
        return 0

    @abstractmethod
    def first_uses_of(self, labels: set[str]) -> dict[str, tuple[str, int]]:
        """Where each of `labels` first occurs, in page order: (page id, box index)."""

    @abstractmethod
    def part(self, positions: np.ndarray) -> PagePart:
        """The pages at `positions`, in that order, as a small picklable task part."""


class PageColumns(PageSource):
    """Many pages held column-wise in a few large arrays: what the readers produce.

    A hundred thousand `Page` objects, each with its own small arrays, cost several times their
    boxes' bytes in object headers; here a box costs its four coordinates, a label code and a
    score. Indexing gives an ordinary `Page` (made on access), so everything downstream reads both
    kinds alike. `validate` checks every page at once with NumPy and names the first bad box.
    """

    def __init__(self, ids: list[str], sizes: np.ndarray, offsets: np.ndarray, bboxes: np.ndarray,
                 codes: np.ndarray, vocabulary: list[str], scores: np.ndarray | None, images: dict[int, PageImage],
                 polygons: Polygons | None = None) -> None:
        self.ids = ids
        self.sizes = sizes  # (pages, 2) width, height
        self.offsets = offsets  # (pages + 1,) first box of each page
        self.bboxes = bboxes  # (boxes, 4)
        self.codes = codes  # (boxes,) index into vocabulary
        self.vocabulary = vocabulary
        self.scores = scores  # (boxes,) NaN where a box has no score, or None
        self.images = images  # page position -> image, for the pages that have one
        self.polygons = polygons  # the outlines of the boxes that are polygons, or None when none is

    def __repr__(self) -> str:
        return f"PageColumns({len(self.ids):,} pages, {self.box_count():,} boxes)"

    @classmethod
    def from_pages(cls, pages: Sequence[Page]) -> "PageColumns":
        vocabulary: dict[str, int] = {}
        counts = [page.box_count for page in pages]
        has_scores = any(page.scores is not None for page in pages)
        return cls(
            [page.id for page in pages],
            np.array([(page.width, page.height) for page in pages], dtype=np.float64).reshape(-1, 2),
            np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]),
            np.concatenate([page.bboxes for page in pages] or [np.zeros((0, 4))]).reshape(-1, 4),
            np.array([vocabulary.setdefault(label, len(vocabulary)) for page in pages for label in page.labels], dtype=np.int64),
            list(vocabulary),
            np.concatenate([page.scores if page.scores is not None else np.full(page.box_count, np.nan) for page in pages])
            if has_scores else None,
            {position: page.image for position, page in enumerate(pages) if page.image is not None},
            Polygons.concatenate([page.polygons or Polygons.none(page.box_count) for page in pages])
            if any(page.polygons is not None for page in pages) else None,
        )

    def _page(self, position: int) -> Page:
        start, end = self.offsets[position], self.offsets[position + 1]
        return Page._unchecked(
            self.ids[position],
            float(self.sizes[position, 0]),
            float(self.sizes[position, 1]),
            [self.vocabulary[code] for code in self.codes[start:end]],
            self.bboxes[start:end],
            None if self.scores is None else self.scores[start:end],
            self.images.get(position),
            self._polygons_of(slice(int(start), int(end))),
        )

    def _polygons_of(self, boxes: np.ndarray | slice) -> Polygons | None:
        """The outlines of `boxes` (indices, or a run of them), or None when none of them is a polygon."""
        if self.polygons is None:
            return None
        taken = self.polygons.between(boxes.start, boxes.stop) if isinstance(boxes, slice) else self.polygons.take(boxes)
        return taken if taken.is_polygon().any() else None

    def labels_in_use(self) -> list[str]:
        return sorted({self.vocabulary[code] for code in np.unique(self.codes)})

    def columns(self) -> "PageColumns":
        return self

    def box_count(self) -> int:
        return int(self.offsets[-1])

    def polygon_rows(self) -> int:
        if self.polygons is None:
            return 0
        painted = self.polygons.is_polygon() & ~self.polygons.axis_aligned_rectangles()  # an axis-aligned rectangle paints as its box
        return int(_painted_rows(self.bboxes)[painted].sum())  # every box's rows, then the painted ones': a gather of 4 columns costs more

    def first_uses_of(self, labels: set[str]) -> dict[str, tuple[str, int]]:
        codes, first_boxes = np.unique(self.codes, return_index=True)  # each code's first box, in one pass
        first: dict[str, int] = {}
        for code, box in zip(codes.tolist(), first_boxes.tolist()):
            label = self.vocabulary[code]
            if label in labels:  # two codes may share a label after relabelling: the earlier box counts
                first[label] = min(box, first.get(label, box))
        return {label: self._page_of_box(box) for label, box in sorted(first.items(), key=lambda item: item[1])}

    def part(self, positions: np.ndarray) -> "PageColumns":
        """The pages at `positions` as columns of their own (arrays only: cheap to send)."""
        positions = np.asarray(positions, dtype=np.int64)
        if len(positions) and positions[-1] - positions[0] == len(positions) - 1 and (np.diff(positions) == 1).all():
            return self._run(int(positions[0]), int(positions[-1]) + 1)
        starts, ends = self.offsets[positions], self.offsets[positions + 1]
        counts = ends - starts
        boxes = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(int(counts.sum()))
        return PageColumns(
            [self.ids[k] for k in positions.tolist()],
            self.sizes[positions],
            offsets_of(counts),
            self.bboxes[boxes],
            self.codes[boxes],
            self.vocabulary,
            None if self.scores is None else self.scores[boxes],
            {new: self.images[old] for new, old in enumerate(positions.tolist()) if old in self.images},
            self._polygons_of(boxes),
        )

    def _run(self, first: int, end: int) -> "PageColumns":
        """`part` of the pages first .. end - 1, a run (what a job's batches are): its slices copied,
        with no index arrays and gathers (the driver's part of 10,000 turned pages: 0.16 s)."""
        box_first, box_end = int(self.offsets[first]), int(self.offsets[end])
        boxes = slice(box_first, box_end)
        return PageColumns(
            self.ids[first:end],
            self.sizes[first:end].copy(),
            self.offsets[first:end + 1] - box_first,
            self.bboxes[boxes].copy(),
            self.codes[boxes].copy(),
            self.vocabulary,
            None if self.scores is None else self.scores[boxes].copy(),
            {new: self.images[old] for new, old in enumerate(range(first, end)) if old in self.images},
            self._polygons_of(boxes),
        )

    def above_score(self, threshold: float) -> tuple["PageColumns", np.ndarray | None]:
        """The pages without the boxes scored below `threshold` (boxes without a score stay), and
        for each box kept its index within its page before (None when nothing was dropped)."""
        if self.scores is None:
            return self, None
        keep = ~(self.scores < threshold)  # NaN (no score) compares False: kept
        if keep.all():
            return self, None
        page_of_box = np.repeat(np.arange(len(self.ids)), np.diff(self.offsets))
        within = np.arange(len(keep)) - self.offsets[page_of_box]
        offsets = np.concatenate([[0], np.cumsum(np.bincount(page_of_box[keep], minlength=len(self.ids)))]).astype(np.int64)
        kept = PageColumns(self.ids, self.sizes, offsets, self.bboxes[keep], self.codes[keep], self.vocabulary, self.scores[keep], self.images,
                           self._polygons_of(np.flatnonzero(keep)))
        return kept, within[keep]

    def relabelled(self, label_map: dict[str, str]) -> "PageColumns":
        """The same pages with labels renamed or merged (only the vocabulary changes)."""
        vocabulary = [label_map.get(label, label) for label in self.vocabulary]
        return PageColumns(self.ids, self.sizes, self.offsets, self.bboxes, self.codes, vocabulary, self.scores, self.images, self.polygons)

    def _page_of_box(self, box: int) -> tuple[str, int]:
        page = int(np.searchsorted(self.offsets, box, side="right")) - 1
        return self.ids[page], box - int(self.offsets[page])

    def validate(self) -> None:
        """Every page's frame, every box's coordinates, label and score, checked at once."""
        for page_id in self.ids:
            if not isinstance(page_id, str) or unicode_problem(page_id) is not None:
                raise InputError(f"a page id must be a string of valid Unicode, got {page_id!r}")
        bad_frame = np.flatnonzero(~(np.isfinite(self.sizes) & (self.sizes > 0) & (self.sizes <= MAX_PAGE_SIDE)).all(axis=1))
        if len(bad_frame):
            position = int(bad_frame[0])
            _check_frame(self.ids[position], *(float(v) for v in self.sizes[position]))
        for code, label in enumerate(self.vocabulary):
            if not isinstance(label, str) or not label or unicode_problem(label) is not None:
                _check_label(label, *self._page_of_box(int(np.flatnonzero(self.codes == code)[0])))
        check_page(self.polygons, self.bboxes, self.offsets, self.ids)
        if (box := _first_bad_box(self.bboxes)) is not None:
            page_id, index = self._page_of_box(box)
            raise InputError(f"bbox has a NaN or infinite coordinate: {self.bboxes[box].tolist()}", page=page_id, box=index)
        if self.scores is not None and np.isinf(self.scores).any():
            raise InputError("a score is infinite", page=self._page_of_box(int(np.flatnonzero(np.isinf(self.scores))[0]))[0])


def named(names: Sequence[str], shown: int = NAMES_SHOWN) -> str:
    """Names quoted for a message, the first `shown` of them and how many more: a hostile file's
    hundred thousand names must not make a message of megabytes."""
    listed = ", ".join(map(repr, names[:shown]))
    return listed + (f" and {len(names) - shown:,} more" if len(names) > shown else "")


def _check_taxonomy(taxonomy: list[str] | None) -> list[str] | None:
    if taxonomy is None:
        return None
    if not isinstance(taxonomy, list) or not all(isinstance(t, str) and t for t in taxonomy):
        raise InputError("'taxonomy' must be a list of class names (non-empty strings)")
    duplicates = sorted(name for name, times in Counter(taxonomy).items() if times > 1)
    if duplicates:
        raise InputError(f"'taxonomy' lists a class twice: {named(duplicates)}")
    if BACKGROUND in taxonomy:
        raise InputError(f"'taxonomy' must not list {BACKGROUND!r}: it is always class 0")
    for label in taxonomy:
        if (problem := unicode_problem(label)) is not None:
            raise InputError(f"'taxonomy' class {problem}")
    return list(taxonomy)


@dataclass
class LayoutSet:
    """A dataset's reference layout or one model's predicted layout, as docs/formats.md#layout-json says.

    Built by a reader or by hand, it checks itself: page ids unique, labels declared when a
    taxonomy is given (all offenders named at once), every page valid.
    """

    name: str
    pages: Sequence[Page]  # a list of `Page`, or `PageColumns`
    taxonomy: list[str] | None = None  # declared class order, if any
    source: str = "<memory>"  # the file it came from, for error messages
    warnings: list[InputWarning] = field(default_factory=list)  # raised while loading
    vocabulary: str | None = None  # the fixed label set its format's labels come from (core.taxonomy.VOCABULARIES)

    def __post_init__(self) -> None:
        try:
            self._validate()
        except InputError as error:
            raise error.located(file=self.source) from None

    def _validate(self) -> None:
        if not isinstance(self.name, str) or not self.name or unicode_problem(self.name) is not None:
            raise InputError(f"a layout set's name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.pages, PageSource):
            self.pages = list(self.pages)
            if not all(isinstance(page, Page) for page in self.pages):
                raise InputError("pages must be Page objects (tore_engine.Page)")
        else:
            self.pages.validate()
        self.taxonomy = _check_taxonomy(self.taxonomy)
        seen: set[str] = set()
        for page_id in self.page_ids():
            if page_id in seen:
                raise InputError("duplicate page id", page=page_id)
            seen.add(page_id)
        self._check_labels_declared()
        self._note_polygons()

    def _note_polygons(self) -> None:
        """Say once, in `warnings`, that some boxes are polygons and what reads them how (the pages
        of a large file still unread are not counted)."""
        if isinstance(self.pages, PageColumns):
            count = 0 if self.pages.polygons is None else int(self.pages.polygons.is_polygon().sum())
        elif isinstance(self.pages, PageSource):
            return
        else:
            count = sum(int(page.polygons.is_polygon().sum()) for page in self.pages if page.polygons is not None)
        note = polygon_note(count)
        if count and not any(warning.message == note for warning in self.warnings):
            self.warnings.append(InputWarning(None, None, None, note))

    def _check_labels_declared(self) -> None:
        if self.taxonomy is None or set(self.taxonomy).issuperset(self.labels_in_use()):
            return
        unknown = set(self.labels_in_use()) - set(self.taxonomy)
        uses = page_source(self).first_uses_of(unknown)
        listed = "; ".join(f"{label!r} (first at page {page!r}, box {box})" for label, (page, box) in list(uses.items())[:NAMES_SHOWN])
        more = f"; and {len(uses) - NAMES_SHOWN:,} more" if len(uses) > NAMES_SHOWN else ""
        raise InputError(f"labels not in the declared taxonomy: {listed}{more}")

    @classmethod
    def empty(cls, name: str, taxonomy: list[str] | None = None) -> "LayoutSet":
        return cls(name, [], taxonomy)

    def __repr__(self) -> str:
        classes = len(self.class_list())
        return f"LayoutSet({self.name!r}, {len(self.pages):,} pages, {classes} classes, from {self.source})"

    def labels_in_use(self) -> list[str]:
        """The sorted set of labels that occur in the boxes."""
        if isinstance(self.pages, PageSource):
            return self.pages.labels_in_use()
        return sorted({label for page in self.pages for label in page.labels})

    def page_ids(self) -> list[str]:
        return self.pages.ids if isinstance(self.pages, PageSource) else [page.id for page in self.pages]

    def class_list(self) -> list[str]:
        """The declared taxonomy, else the sorted set of labels in use."""
        return list(self.taxonomy) if self.taxonomy is not None else self.labels_in_use()

    def box_count(self) -> int:
        if isinstance(self.pages, PageSource):
            return self.pages.box_count()
        return sum(page.box_count for page in self.pages)

    def polygon_rows(self) -> int:
        """`PageSource.polygon_rows` of its pages."""
        if isinstance(self.pages, PageSource):
            return self.pages.polygon_rows()
        return sum(PageColumns.from_pages([page]).polygon_rows() for page in self.pages if page.polygons is not None)


def _painted_rows(bboxes: np.ndarray) -> np.ndarray:
    """The pixel rows each (x1, y1, x2, y2) box spans (0 for none or a non-finite one)."""
    with np.errstate(invalid="ignore"):
        rows = np.ceil(bboxes[:, 3]) - np.floor(bboxes[:, 1])
    return np.where(np.isfinite(rows) & (rows > 0), rows, 0)


def polygon_note(count: int) -> str:
    return (f"{count:,} boxes are polygons: TORE's matrices paint each polygon's own pixels (a pixel belongs to a polygon when the "
            "polygon covers part of its square); mAP and the box outcomes use each polygon's bounding box")


def page_source(layout: LayoutSet) -> PageSource:
    """A layout set's pages as a `PageSource` (pages built by hand become columns)."""
    return layout.pages if isinstance(layout.pages, PageSource) else PageColumns.from_pages(layout.pages)
