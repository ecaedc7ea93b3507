"""Pages left in their file until a worker reads them: large native JSON and JSON Lines files.

The driver reads only an index of each page (its byte span, id, box labels and page image: what
pairing, the taxonomy and the strict key rules need) and keeps no box. A task then carries the
spans of its pages, a path and a few numbers, and the worker reads and decodes just those bytes
into columns, checked as the whole-file reader checks them. So the driver's memory does not grow
with the boxes, and with several workers (or a Dask cluster sharing the files at the same paths)
the decoding is spread over them. The index records the version of the file it was read from
(`io.files.FileStamp`: inode, size, write and change times), and a worker reads only from that
version: a file rewritten or replaced during the run is an error that names it, never a report
mixing two versions.

Errors are the same as the whole-file reader's, in this order: the file's structure and keys (at
load), then the pages' numbers (frames, coordinates), found when the pages are read; so with more
than one problem in a file, a numeric one may be reported after a taxonomy problem.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.layout import Page, PageColumns, PageImage, PageSource
from tore_engine.io.files import FileStamp, open_regular
from tore_engine.io.json import SchemaError, decode_json

if TYPE_CHECKING:
    from tore_engine.formats.page_parser import ParsedPages

LAZY_BYTES = 64 * 2**20  # files from this size are read by their workers, page by page


class BoxIndex(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A box as the index reads it: its label, the rest only checked for its keys."""

    label: str
    bbox: msgspec.Raw = msgspec.Raw(b"null")
    score: msgspec.Raw = msgspec.Raw(b"null")
    polygon: msgspec.Raw = msgspec.Raw(b"null")


class PageIndex(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A page as the index reads it: strict about keys, numbers left to the worker."""

    id: str | int
    width: msgspec.Raw
    height: msgspec.Raw
    boxes: list[BoxIndex] = []
    image: str | None = None
    pdf: str | None = None
    page_no: int | None = None


def _reads(spans: np.ndarray) -> list[tuple[int, int]]:
    """Runs of touching spans merged into one read each (a batch's pages are usually adjacent)."""
    runs: list[tuple[int, int]] = []
    for start, end in spans.tolist():
        if runs and start - runs[-1][1] <= 2:  # a comma, a newline
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


@dataclass(frozen=True)
class FileRanges:
    """A task's pages: their byte spans in one file, and how to turn them into checked columns."""

    path: str
    stamp: FileStamp  # the version of the file the index was read from
    spans: np.ndarray  # (n, 2) byte offsets [start, end) of each page object
    ids: list[str]
    label_map: tuple[tuple[str, str], ...] = ()
    lines: np.ndarray | None = None  # JSON Lines: errors name the line, as the whole-file reader does

    def _text(self) -> tuple[bytes, np.ndarray]:
        """The task's pages read from the file, each run of adjacent pages in one read: the bytes
        read, one run after another, and each page's span in them. The file must be the version
        the index was read from, before and after the reads: spans of another version would give
        pages of neither, or a mix."""
        runs = _reads(self.spans)
        descriptor = open_regular(Path(self.path))
        try:
            self.stamp.check(descriptor, self.path)
            blocks = [os.pread(descriptor, end - start, start) for start, end in runs]
            self.stamp.check(descriptor, self.path)
        finally:
            os.close(descriptor)
        run_starts = np.array([start for start, _ in runs], dtype=np.int64)
        places = np.cumsum([0] + [len(block) for block in blocks[:-1]], dtype=np.int64)  # each run's place in the text
        run = np.searchsorted(run_starts, self.spans[:, 0], side="right") - 1
        return b"".join(blocks), self.spans + (places[run] - run_starts[run])[:, None]

    def columns(self) -> PageColumns:
        from tore_engine.formats import page_parser
        from tore_engine.formats.columns import ColumnsBuilder

        builder = ColumnsBuilder()
        if len(self.spans):
            text, spans = self._text()
            pages = page_parser.parse_pages(text, spans) if page_parser.prepared(LAZY_BYTES) else None
            builder.extend(pages) if pages is not None else self._decode([text[start:end] for start, end in spans.tolist()], builder)
        columns = builder.build()
        if self.label_map:
            columns = columns.relabelled(dict(self.label_map))
        try:
            columns.validate()
        except InputError as error:
            raise error.located(file=self.path) from None
        return columns

    def _decode(self, texts: list[bytes], builder) -> None:
        """The pages through msgspec, which names the page, line and box of any error."""
        from tore_engine.formats.native_pages import NativePage, add_pages

        try:
            pages = decode_json(b"[" + b",".join(texts) + b"]", self.path, list[NativePage])
        except SchemaError as error:
            index, box, problem = error.in_item("boxes")
            if index is not None and self.lines is not None:
                raise InputError(f"line {int(self.lines[index])}: {problem}", file=self.path, box=box) from None
            raise InputError(problem, file=self.path, page=self.ids[index] if index is not None else None, box=box) from None
        add_pages(builder, pages, source=str(self.path))


class FilePages(PageSource):
    """A large file's pages as an index (spans, ids, labels, images); read on demand."""

    def __init__(self, path: Path, stamp: FileStamp, spans: np.ndarray, ids: list[str], counts: np.ndarray,
                 first_uses: dict[str, tuple[str, int]], images: dict[int, PageImage], label_map: tuple[tuple[str, str], ...] = (),
                 lines: np.ndarray | None = None) -> None:
        self.path = path
        self.stamp = stamp  # the version of the file the index was read from
        self.spans = spans
        self.ids = ids
        self.counts = counts  # boxes a page
        self.first_uses = first_uses  # label -> (page id, box) where it first occurs, before mapping
        self.images = images
        self.label_map = label_map
        self.lines = lines  # JSON Lines: each page's line number

    def _page(self, position: int) -> Page:
        page = self.part(np.array([position])).columns()[0]
        page.image = self.images.get(position)
        return page

    def _mapped(self, label: str) -> str:
        return dict(self.label_map).get(label, label)

    def labels_in_use(self) -> list[str]:
        return sorted({self._mapped(label) for label in self.first_uses})

    def first_uses_of(self, labels: set[str]) -> dict[str, tuple[str, int]]:
        """Where each of `labels` (after the label map) first occurs: (page id, box), in page order."""
        position = {page_id: k for k, page_id in enumerate(self.ids)} if labels else {}
        found: dict[str, tuple[str, int]] = {}
        for label, where in sorted(self.first_uses.items(), key=lambda item: (position[item[1][0]], item[1][1])):
            found.setdefault(self._mapped(label), where) if self._mapped(label) in labels else None
        return found

    def relabelled(self, label_map: dict[str, str]) -> "FilePages":
        composed = {label: label_map.get(self._mapped(label), self._mapped(label)) for label in self.first_uses}
        return FilePages(self.path, self.stamp, self.spans, self.ids, self.counts, self.first_uses, self.images, tuple(sorted(composed.items())), self.lines)

    def validate(self) -> None:
        """Ids and labels, from the index; the numbers are checked when the pages are read."""
        from tore_engine.core.layout import _check_label, unicode_problem

        for page_id in self.ids:
            if unicode_problem(page_id) is not None:
                raise InputError(f"a page id must be a string of valid Unicode, got {page_id!r}")
        for label, (page_id, box) in self.first_uses.items():
            _check_label(label, page_id, box)

    def box_count(self) -> int:
        return int(self.counts.sum())

    def part(self, positions: np.ndarray) -> FileRanges:
        positions = np.asarray(positions, dtype=np.int64)
        lines = None if self.lines is None else self.lines[positions]
        return FileRanges(str(self.path), self.stamp, self.spans[positions], [self.ids[k] for k in positions.tolist()], self.label_map, lines)


class IndexBuilder:
    """Collects the index of a large file's pages, batch by batch."""

    def __init__(self, start: int = 0) -> None:
        self.start = start  # the file offset of the text the spans are given in (after a byte-order mark)
        self.spans: list[np.ndarray] = []  # a batch's rows each
        self.ids: list[str] = []
        self.counts: list[np.ndarray] = []
        self.first_uses: dict[str, tuple[str, int]] = {}
        self._known: set[str] = set()
        self.images: dict[int, PageImage] = {}

    def add(self, pages: Sequence[PageIndex], spans: Sequence[tuple[int, int]] | np.ndarray, image_of) -> None:
        """Pages decoded as `PageIndex`, their spans, and `image_of(page, page_id)` for each page image."""
        self.spans.append(np.asarray(spans, dtype=np.int64).reshape(-1, 2) + self.start)
        self.counts.append(np.array([len(page.boxes) for page in pages], dtype=np.int64))
        for page in pages:
            page_id = str(page.id)
            if (image := image_of(page, page_id)) is not None:
                self.images[len(self.ids)] = image
            self.ids.append(page_id)
            if not self._known.issuperset(labels := {entry.label for entry in page.boxes}):  # a label not seen before: rare
                for box, entry in enumerate(page.boxes):
                    self.first_uses.setdefault(entry.label, (page_id, box))
                self._known |= labels

    def extend(self, pages: "ParsedPages", images: dict[int, PageImage]) -> None:
        """Pages from the compiled parser (their spans in the file), with their images by position among them."""
        self.images.update({len(self.ids) + position: image for position, image in images.items()})
        page_ids = pages.ids
        new = [code for code, label in enumerate(pages.labels) if label not in self._known]
        if new:  # where each new label first occurs: its first box, as (page id, box on the page)
            starts = np.concatenate([[0], np.cumsum(pages.counts)])
            codes, first_boxes = np.unique(pages.codes, return_index=True)
            first_box = dict(zip(codes.tolist(), first_boxes.tolist()))
            for code in new:
                page = int(np.searchsorted(starts, first_box[code], side="right")) - 1
                self.first_uses.setdefault(pages.labels[code], (page_ids[page], first_box[code] - int(starts[page])))
            self._known.update(pages.labels)
        self.ids.extend(page_ids)
        self.spans.append(pages.spans + self.start)
        self.counts.append(pages.counts)

    def build(self, path: Path, stamp: FileStamp, lines: np.ndarray | None = None) -> FilePages:
        """The index of the file at `path`, read from the version `stamp` describes."""
        spans = np.concatenate(self.spans) if self.spans else np.zeros((0, 2), dtype=np.int64)
        counts = np.concatenate(self.counts) if self.counts else np.zeros(0, dtype=np.int64)
        return FilePages(path, stamp, spans, self.ids, counts, self.first_uses, self.images, lines=lines)
