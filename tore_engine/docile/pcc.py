"""Pseudo-character centres (PCCs): the points a DocILE box must cover (docile.md section 2).

Each OCR word of `n` characters spreads `n` points evenly over its snapped box, at half the box
height. A predicted field matches a gold field when both cover the same set of points, so boxes
may differ by any amount of background. Computed in float64 in the official operation order,
because coverage is decided by exact float comparisons.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tore_engine.errors import InputError


def document_pccs(ocr: Any, page_count: int, *, docid: str, file: str) -> np.ndarray:
    """All PCCs of pages `0..page_count-1` as rows (x, y, page), in OCR order, duplicates kept."""
    boxes, lengths, pages = _snapped_words(ocr, page_count, docid=docid, file=file)
    has_text = lengths > 0
    boxes, lengths, pages = boxes[has_text], lengths[has_text], pages[has_text]
    left, top, right, bottom = boxes.T
    char_width = (right - left) / lengths
    y_middle = (top + bottom) / 2
    word_of_pcc = np.repeat(np.arange(len(lengths)), lengths)
    first_pcc_of_word = np.cumsum(lengths) - lengths
    char_index = np.arange(len(word_of_pcc)) - first_pcc_of_word[word_of_pcc]
    x = left[word_of_pcc] + (char_index + 1 / 2) * char_width[word_of_pcc]
    return np.column_stack([x, y_middle[word_of_pcc], pages[word_of_pcc].astype(np.float64)])


def _snapped_words(
    ocr: Any, page_count: int, *, docid: str, file: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Snapped boxes, text lengths (code points) and pages of the OCR words."""
    boxes: list[tuple[float, float, float, float]] = []
    lengths: list[int] = []
    pages: list[int] = []
    try:
        ocr_pages = ocr["pages"]
        if len(ocr_pages) < page_count:
            raise InputError(
                f"document {docid}: the OCR has {len(ocr_pages)} pages but the annotation says "
                f"page_count = {page_count}",
                file=file,
            )
        for page in range(page_count):
            for block in ocr_pages[page]["blocks"]:
                for line in block["lines"]:
                    for word in line["words"]:
                        if "snapped_geometry" not in word:
                            raise InputError(
                                f"document {docid}: OCR word {word.get('value')!r} on page {page} has "
                                "no 'snapped_geometry'; DocILE scoring needs the snapped word boxes of "
                                "the released dataset (this tool does not re-snap from the PDF)",
                                file=file,
                            )
                        (left, top), (right, bottom) = word["snapped_geometry"]
                        boxes.append((left, top, right, bottom))
                        lengths.append(len(word.get("value") or ""))
                        pages.append(page)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise InputError(
            f"document {docid}: not a DocTR OCR export ({type(error).__name__}: {error}); expected "
            "pages[].blocks[].lines[].words[] with value and snapped_geometry [[l, t], [r, b]]",
            file=file,
        ) from None
    return (
        np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
        np.asarray(lengths, dtype=np.int64),
        np.asarray(pages, dtype=np.int64),
    )


class PCCSet:
    """A document's PCCs as a set (duplicated OCR words count once), for coverage tests."""

    def __init__(self, pccs: np.ndarray) -> None:
        unique = np.unique(pccs, axis=0) if len(pccs) else pccs.reshape(0, 3)
        self.x, self.y, self.page = unique[:, 0], unique[:, 1], unique[:, 2]

    def __len__(self) -> int:
        return len(self.x)

    def coverage(self, bboxes: np.ndarray, pages: np.ndarray) -> np.ndarray:
        """(boxes, PCCs) bool: PCC on the box's page with left <= x <= right, top <= y <= bottom."""
        left, top, right, bottom = (bboxes[:, k, None] for k in range(4))
        return (
            (self.page[None, :] == pages[:, None])
            & (left <= self.x)
            & (self.x <= right)
            & (top <= self.y)
            & (self.y <= bottom)
        )
