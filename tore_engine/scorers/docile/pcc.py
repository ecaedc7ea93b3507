"""Pseudo-character centres (PCCs): the points a DocILE box must cover (docs/benchmarks.md#pseudo-character-centres).

Each OCR word of `n` characters spreads `n` points evenly over its snapped box, at half the box
height. A predicted field matches a gold field when both cover the same set of points, so boxes
may differ by any amount of background. Computed in float64 in the official operation order,
because coverage is decided by exact float comparisons.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tore_engine.core.errors import InputError


class OcrWord(msgspec.Struct):
    value: str | None
    snapped_geometry: tuple[tuple[float, float], tuple[float, float]] | None = None


class OcrLine(msgspec.Struct):
    words: list[OcrWord]


class OcrBlock(msgspec.Struct):
    lines: list[OcrLine]


class OcrPage(msgspec.Struct):
    blocks: list[OcrBlock]


class OcrExport(msgspec.Struct):
    """The parts of a DocTR OCR export that PCCs need (the rest is skipped while decoding)."""

    pages: list[OcrPage]


def document_pccs(ocr: OcrExport, page_count: int, *, docid: str, file: str) -> np.ndarray:
    """All PCCs of pages `0..page_count-1` as rows (x, y, page), in OCR order, duplicates kept."""
    if len(ocr.pages) < page_count:
        raise InputError(
            f"document {docid}: the OCR has {len(ocr.pages)} pages but the annotation says page_count = {page_count}",
            file=file,
        )
    words_per_page = [
        [word for block in ocr.pages[page].blocks for line in block.lines for word in line.words]
        for page in range(page_count)
    ]
    words = [word for page_words in words_per_page for word in page_words]
    boxes = np.array([_snapped_box(word, docid, file) for word in words], dtype=np.float64).reshape(-1, 4)
    lengths = np.array([len(word.value or "") for word in words], dtype=np.int64)
    pages = np.repeat(np.arange(page_count), [len(page_words) for page_words in words_per_page])
    return _pccs_of_words(boxes, lengths, pages)


def _snapped_box(word: OcrWord, docid: str, file: str) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a word's snapped box, which PCCs are spread over."""
    if word.snapped_geometry is None:
        raise InputError(
            f"document {docid}: OCR word {word.value!r} has no 'snapped_geometry'; DocILE scoring "
            "needs the snapped word boxes of the released dataset (this tool does not re-snap from the PDF)",
            file=file,
        )
    (left, top), (right, bottom) = word.snapped_geometry
    return left, top, right, bottom


def _pccs_of_words(boxes: np.ndarray, lengths: np.ndarray, pages: np.ndarray) -> np.ndarray:
    """`n` evenly spaced centres per word of `n` characters; words without text give none."""
    has_text = lengths > 0
    boxes, lengths, pages = boxes[has_text], lengths[has_text], pages[has_text]
    left, top, right, bottom = boxes.T
    char_width = (right - left) / lengths
    y_middle = (top + bottom) / 2
    word_of_pcc, char_index = expand_ranges(np.zeros(len(lengths), dtype=np.int64), lengths)
    x = left[word_of_pcc] + (char_index + 1 / 2) * char_width[word_of_pcc]
    return np.column_stack([x, y_middle[word_of_pcc], pages[word_of_pcc].astype(np.float64)])


class PCCSet:
    """A document's PCCs as a set (duplicated OCR words count once), sorted by (page, y, x).

    To find the rows of a box with one binary search, each PCC also gets an exact integer key
    `page * stride + rank of y among the distinct y values`: ordered like (page, y), with no
    float arithmetic on the coordinates.
    """

    def __init__(self, pccs: np.ndarray) -> None:
        x, y, page = pccs.T
        order = np.lexsort((x, y, page))
        x, y, page = x[order], y[order], page[order]
        distinct = np.ones(len(order), dtype=bool)
        distinct[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1]) | (page[1:] != page[:-1])
        self.x, self.y, self.page = x[distinct], y[distinct], page[distinct]
        self.distinct_y = np.unique(self.y)
        self.stride = len(self.distinct_y) + 1
        self.key = self.page.astype(np.int64) * self.stride + np.searchsorted(self.distinct_y, self.y)

    def __len__(self) -> int:
        return len(self.x)

    def covered(self, bboxes: np.ndarray, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (box index, PCC index) with the PCC on the box's page and inside the closed box.

        Pairs come grouped by box, PCC indices ascending within a box.
        """
        page_key = pages.astype(np.int64) * self.stride
        first_row = np.searchsorted(self.key, page_key + np.searchsorted(self.distinct_y, bboxes[:, 1], side="left"))
        end_row = np.searchsorted(self.key, page_key + np.searchsorted(self.distinct_y, bboxes[:, 3], side="right"))
        box, row = expand_ranges(first_row, np.maximum(end_row - first_row, 0))
        inside = (bboxes[box, 0] <= self.x[row]) & (self.x[row] <= bboxes[box, 2])
        return box[inside], row[inside]


def expand_ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [start, start + count): (range index, value) of every element, in order."""
    owner = np.repeat(np.arange(len(starts)), counts)
    offsets = np.cumsum(counts) - counts
    values = np.arange(len(owner)) - offsets[owner] + np.asarray(starts)[owner]
    return owner, values
