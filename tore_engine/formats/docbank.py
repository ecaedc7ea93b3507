"""DocBank's token text (Li et al., COLING 2020; github.com/doc-analysis/DocBank): one `.txt` file a
page, one token a line, ten tab-separated fields `token x0 y0 x1 y1 R G B font label`, coordinates
normalised to 0..1000 of the PDF page.

DocBank labels tokens, not regions; its regions (the object-detection form its loader converts to,
DocBankLoader's `CVStructure`) are the label spans: the tokens of one label joined while two are
neighbours, i.e. the gap between their boxes is at most `X_TOLERANCE` across and `Y_TOLERANCE`
down (in the 0..1000 units), each connected group one region, its box the tokens' bounding box.
This reader gives those regions, in the order of each region's first token in the file.

The page frame is the page image's size: `<page id>_ori.jpg` (DocBank's black-text rendering),
else `<page id>.jpg`, beside the file or in `--page-images`; the 0..1000 boxes are scaled into it.
Without an image the frame is DocBank's 0..1000 grid (a warning says so), which section 1's scaling
rule maps into the other side's frame. Page ids are the file names without `.txt`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, PageImage
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.io.files import image_size, input_files, is_regular_file, peek_bytes, read_text

GRID = 1000.0  # DocBank's coordinates run over 0..GRID of the page
X_TOLERANCE, Y_TOLERANCE = 15.0, 16.0  # DocBankLoader's neighbour gaps (TokenInfo.is_neighbor), grid units
FIELDS = 10
MAX_PAGE_TOKENS = 20_000  # DocBank's pages have at most about 5,000; grouping compares every pair
IMAGE_NAMES = ("{}_ori.jpg", "{}.jpg")
CHUNK = 1024  # tokens compared with all others at once while grouping
MAX_PAGE_PAIRS = 5_000_000  # neighbouring token pairs a page: DocBank's have at most a few tens of thousands
_NUMBER = rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
LINE = re.compile(rb"^[^\t\r\n]*(?:\t" + _NUMBER + rb"){7}\t[^\t\r\n]*\t[^\t\r\n]+\r?$")  # a token line


def looks_like(prefix: bytes) -> bool:
    """Whether a file's first bytes are DocBank token lines."""
    first = prefix.split(b"\n", 1)[0]
    return bool(LINE.match(first))


def folder_looks_like(files: list[Path]) -> bool:
    """Whether a folder's `.txt` files are DocBank token files."""
    texts = sorted(f for f in files if f.suffix == ".txt")
    return bool(texts) and looks_like(peek_bytes(texts[0], 4096))


def _tokens(path: Path, page_id: str) -> tuple[np.ndarray, list[str], list[tuple[int, str]]]:
    """The file's token boxes (n, 4) in grid units, their labels, and the tokens with a coordinate
    beyond the grid (token, what to say); each line checked."""
    boxes: list[list[float]] = []
    labels: list[str] = []
    beyond: list[tuple[int, str]] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        where = f"{path.name} line {number}"
        if len(fields) != FIELDS:
            raise InputError(f"line {number}: {len(fields)} tab-separated fields, expected {FIELDS} "
                             "(token x0 y0 x1 y1 R G B font label)", file=str(path), page=page_id)
        try:
            box = [float(value) for value in fields[1:5]]
            colour = [int(value) for value in fields[5:8]]
        except ValueError:
            raise InputError(f"line {number}: x0 y0 x1 y1 must be numbers and R G B integers, got {fields[1:8]}",
                             file=str(path), page=page_id) from None
        label = fields[9].strip()
        if not label:
            raise InputError(f"line {number}: the label (the tenth field) is empty", file=str(path), page=page_id)
        if not all(np.isfinite(box)) or box[0] > box[2] or box[1] > box[3]:
            raise InputError(f"line {number}: the token box {box} is not x0 <= x1, y0 <= y1 (finite numbers)", file=str(path), page=page_id)
        if any(not 0 <= value <= 255 for value in colour):
            raise InputError(f"line {number}: R G B {colour} are not colours (0..255)", file=str(path), page=page_id)
        if any(not 0 <= value <= GRID for value in box):
            beyond.append((len(labels), f"{where} ({label!r} token {fields[0][:40]!r}): a coordinate of {box} lies "
                                        "outside DocBank's 0..1000; kept as it is"))
        boxes.append(box)
        labels.append(label)
        if len(labels) > MAX_PAGE_TOKENS:
            raise InputError(f"more than {MAX_PAGE_TOKENS:,} tokens on one page", file=str(path), page=page_id)
    return np.array(boxes, np.float64).reshape(-1, 4), labels, beyond


def _neighbour_pairs(boxes: np.ndarray, codes: np.ndarray, source: str, page_id: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i < j) of same-label tokens that are neighbours, compared `CHUNK` rows at a time."""
    firsts, seconds, count = [], [], 0
    for start in range(0, len(boxes), CHUNK):
        block = boxes[start:start + CHUNK]
        near = ((boxes[None, :, 1] - block[:, None, 3] <= Y_TOLERANCE) & (block[:, None, 1] - boxes[None, :, 3] <= Y_TOLERANCE)
                & (boxes[None, :, 0] - block[:, None, 2] <= X_TOLERANCE) & (block[:, None, 0] - boxes[None, :, 2] <= X_TOLERANCE)
                & (codes[None, :] == codes[start:start + CHUNK, None]))
        rows, columns = np.nonzero(np.triu(near, start + 1))
        count += len(rows)
        if count > MAX_PAGE_PAIRS:
            raise InputError(f"the tokens are so crowded that more than {MAX_PAGE_PAIRS:,} pairs of them are neighbours",
                             file=source, page=page_id)
        firsts.append(rows + start)
        seconds.append(columns)
    return np.concatenate(firsts or [np.zeros(0, np.int64)]), np.concatenate(seconds or [np.zeros(0, np.int64)])


def _components(tokens: int, firsts: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Each token's group, named by its smallest token: labels spread to neighbours (the smaller
    wins) and follow each other's (pointer jumping) until nothing changes."""
    group = np.arange(tokens)
    while True:
        spread = group.copy()
        np.minimum.at(spread, firsts, group[seconds])
        np.minimum.at(spread, seconds, group[firsts])
        while not np.array_equal(jumped := spread[spread], spread):
            spread = jumped
        if np.array_equal(spread, group):
            return group
        group = spread


def label_spans(boxes: np.ndarray, labels: list[str], source: str = "", page_id: str = "") -> tuple[list[str], np.ndarray, np.ndarray]:
    """DocBank's regions of a page's tokens: each connected group of same-label neighbours, as its
    label and bounding box (grid units), in the order of each group's first token; and the region
    of each token."""
    codes = np.unique(np.array(labels, dtype=object), return_inverse=True)[1].reshape(-1) if labels else np.zeros(0, np.int64)
    roots = _components(len(labels), *_neighbour_pairs(boxes, codes, source, page_id))
    firsts, group = np.unique(roots, return_inverse=True)
    spans = np.empty((len(firsts), 4))
    spans[:, :2] = np.inf
    spans[:, 2:] = -np.inf
    np.minimum.at(spans[:, :2], group, boxes[:, :2])
    np.maximum.at(spans[:, 2:], group, boxes[:, 2:])
    return [labels[first] for first in firsts.tolist()], spans, group


def _image(path: Path, page_id: str, page_images: Path | None) -> Path | None:
    folder = page_images if page_images is not None else path.parent
    for pattern in IMAGE_NAMES:
        if is_regular_file(candidate := folder / pattern.format(page_id)):
            return candidate
    return None


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A DocBank token file, or a folder of them (one page a file, in name order)."""
    path = Path(path)
    files = input_files(path, (".txt",), "DocBank token files (.txt)")
    builder = ColumnsBuilder()
    warnings: list[InputWarning] = []
    for file in sorted(files):
        page_id = file.stem
        tokens, token_labels, beyond = _tokens(file, page_id)
        labels, spans, region = label_spans(tokens, token_labels, str(file), page_id)
        warnings += [InputWarning(page_id, int(region[token]), None, f"{message} (region {int(region[token])})") for token, message in beyond]
        image = _image(file, page_id, page_images)
        if image is None:
            width = height = GRID
            warnings.append(InputWarning(page_id, None, None, f"{file.name}: no page image ({' or '.join(p.format(page_id) for p in IMAGE_NAMES)}); "
                                         "the page's frame is DocBank's 0..1000 grid"))
        else:
            width, height = (float(side) for side in image_size(image))
        scaled = spans * np.array([width, height, width, height]) / GRID
        builder.add(page_id, width, height, labels, scaled.reshape(-1).tolist(), None, PageImage(image) if image else None)
    return LayoutSet(path.stem if path.is_file() else path.name, builder.build(), None, str(path), warnings)
