"""Native page objects (docs/formats.md#layout-json) decoded by a compiled parser into flat columns.

msgspec decodes a page into a `NativePage` and a Python object a box, which the columns builder
then takes apart again: about 30 µs a page of the benchmark's 40 boxes, most of a large job's time.
This parser reads the common case straight into the columns, at about 1.7 ns a byte: pages whose
keys are `id`, `width`, `height`, `boxes`, `image`, `pdf`, `page_no`, boxes with `label`, `bbox`,
`score` and `polygon` (beside a `bbox`: at least 3 points), strings without escapes. Numbers that the exact fast path converts (at most 2^53 in their
digits, a decimal exponent within ±22: one IEEE multiplication or division of two exact operands,
so correctly rounded) are converted in the kernel; other numbers are left to Python's `float`,
which rounds correctly too, so every value is msgspec's to the bit.

It reads pages at given spans (a worker's pages, JSON Lines) or an array's items one after another,
finding the spans itself (native JSON read in chunks, without a structure scan), stopping between
two pages when the text ends. Anything else (an escape or a control character in a string, an id
that is a number, an unknown or repeated key, any syntax or type error, more than `MAX_LABELS`
labels) makes the batch fall back to msgspec, which decodes it or names the error. So this parser
only has to be right about pages it accepts; tests check that on those it gives msgspec's columns
bit for bit, and that it accepts what writers produce.

Its helpers are compiled without reference counting (`Kernels(borrowing=True)`): they only read
and write arrays the entry point made, and a helper call per token would otherwise cost two atomic
operations per array argument (4x the time).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tore_engine.core import jit
from tore_engine.core.jit import Kernels

DONE, MORE, FALLBACK = 0, 1, 2  # the pages (and the array) were read; the text ends before the array does; not the common case
SPANS, ARRAY_START, AFTER_PAGE = 0, 1, 2  # where the pages are: at given spans; an array's items from its start, or after an item
SCORED = 1  # flag: some box has a score
NO_IMAGE, NO_PAGE_NUMBER = -1, -(2**63)  # in a page's image columns: no image or pdf; no page_no
MAX_LABELS = 1024  # distinct labels in one call; beyond, msgspec decodes the batch
_SLOTS = 2048  # the label table's open-addressing slots (twice MAX_LABELS)
MIN_BOX_BYTES = 29  # {"label":"","bbox":[0,0,0,0]}: so a text of n bytes has at most n // 29 boxes
MIN_PAGE_BYTES = 30  # {"id":"","width":0,"height":0}
_MAX_EXACT = 2**53  # digits up to this convert exactly to a float
_MAX_INTEGER_DIGITS = 19  # an integer text msgspec reads as an int64 or uint64 before making it a float
MAX_DEFERRED = 2**20  # numbers off the fast path in one call (each one converted by Python); beyond, msgspec decodes
SIZES, COORDINATES, SCORES, POINTS = range(4)  # where a deferred number goes
_MAX_EXPONENT_DIGITS = 10_000  # an exponent beyond this is never on the fast path
_POWERS = np.array([10.0**k for k in range(23)])  # 1e0 .. 1e22, exact in binary64
_FNV_OFFSET, _FNV_PRIME = np.uint64(14695981039346656037), np.uint64(1099511628211)

# key names, and each key's place in them: page keys first, then box keys
_PAGE_KEYS = ("id", "width", "height", "boxes", "image", "pdf", "page_no")
_BOX_KEYS = ("label", "bbox", "score", "polygon")
ID, WIDTH, HEIGHT, BOXES, IMAGE, PDF, PAGE_NO = range(len(_PAGE_KEYS))
LABEL, BBOX, SCORE, POLYGON = range(len(_PAGE_KEYS), len(_PAGE_KEYS) + len(_BOX_KEYS))
MIN_POLYGON_NUMBERS = 6  # 3 points; a shorter `polygon` is msgspec's to decode (and the reader's to refuse)
_KEY_BYTES = np.frombuffer("".join(_PAGE_KEYS + _BOX_KEYS).encode(), dtype=np.uint8)
_KEY_STARTS = np.cumsum([0] + [len(key) for key in _PAGE_KEYS + _BOX_KEYS]).astype(np.int64)

kernels = Kernels(borrowing=True)  # the helpers never make an array; two files parse at once
COMPILE_SECONDS = 3  # about what the one compile takes (benchmarks/RESULTS.md)
COMPILE_MIN_BYTES = 64 * 2**20  # a cold cache is compiled for texts from this size (else msgspec decodes)
LOCK_NAME = "pages-compile.lock"
WHAT = "TORE's page parser"


def wanted(size: int) -> bool:
    """Whether the pages of a JSON text of `size` bytes are parsed by this kernel: from the size at
    which the structure scan is compiled too (smaller texts are decoded by msgspec, and never load
    numba for it)."""
    from tore_engine.io.json import KERNEL_MIN_BYTES

    return size >= KERNEL_MIN_BYTES and prepared(size)


def prepared(size: int) -> bool:
    """Whether to parse a text of `size` bytes with this kernel (`jit.prepared`): on a cold cache
    only a text large enough to pay for the compile waits for it."""
    return jit.prepared(kernels, WHAT, COMPILE_SECONDS, size, COMPILE_MIN_BYTES, LOCK_NAME)


def warm() -> str:
    """Load the parser from its cache folder, compiling it there first when the cache is cold."""
    return jit.warm(kernels, WHAT, COMPILE_SECONDS, without_numba="numba is not installed: TORE decodes pages with msgspec", lock_name=LOCK_NAME)


@dataclass(frozen=True)
class ParsedPages:
    """Pages as columns: what `ColumnsBuilder.extend` takes. `codes` index `labels`; `scores` is
    None when no box has one (NaN for a box without a score otherwise)."""

    spans: np.ndarray  # (pages, 2) each page object's [start, end) in the text
    ids: list[str]
    sizes: np.ndarray  # (pages, 2) width, height
    counts: np.ndarray  # boxes a page
    coordinates: np.ndarray  # (boxes, 4) x1, y1, x2, y2
    codes: np.ndarray
    labels: list[str]
    scores: np.ndarray | None
    images: list[tuple[str | None, str | None, int | None]]  # each page's image, pdf and page_no
    polygon_counts: np.ndarray  # points of each box's polygon (0: a plain box)
    polygon_points: np.ndarray  # x, y of every polygon point, flat

    def shifted(self, offset: int) -> "ParsedPages":
        """The same pages, their spans `offset` bytes further (from a chunk's start to the file's)."""
        return replace(self, spans=self.spans + offset)


def parse_pages(data: bytes, spans: np.ndarray) -> ParsedPages | None:
    """The page objects at `spans` (rows [start, end) in `data`), or None when the kernel is not
    loaded in this process or a page is outside the common case (then msgspec decodes them)."""
    spans = np.ascontiguousarray(spans, dtype=np.int64).reshape(-1, 2)
    if len(spans) and (spans.min() < 0 or spans[:, 1].max() > len(data) or (spans[:, 1] < spans[:, 0]).any()):
        return None  # the kernel reads only inside its text (a file cut short while being read)
    status, _offset, pages = _call(data, spans, SPANS)
    return pages if status == DONE else None


def parse_array(data: bytes, start: int, after_page: bool) -> tuple[int, int, ParsedPages | None]:
    """The page objects of an array from `start` in `data` (its opening bracket's next byte, or
    the end of one of its pages when `after_page`): (DONE, offset after the array, pages) when the
    array ends in `data`, (MORE, offset after the last whole page, pages) when the text stops
    before it does or at something the parser leaves to msgspec; (FALLBACK, 0, None) when a string
    is not UTF-8 or the kernel is not loaded."""
    if not 0 <= start <= len(data):
        return FALLBACK, 0, None
    return _call(data, np.array([[start, len(data)]], dtype=np.int64), AFTER_PAGE if after_page else ARRAY_START)


def _call(data: bytes, spans: np.ndarray, mode: int) -> tuple[int, int, ParsedPages | None]:
    if not kernels.loaded:
        return FALLBACK, 0, None
    (status, offset, page_spans, sizes, counts, id_spans, images, coordinates, codes, scores, label_spans, flags, deferred,
     polygon_counts, points) = kernels.load()(np.frombuffer(data, dtype=np.uint8), spans, mode)
    if status == FALLBACK or not _converted(data, deferred, (sizes, coordinates, scores, points)):
        return FALLBACK, 0, None
    try:
        ids = [data[start:end].decode() for start, end in id_spans.tolist()]
        labels = [data[start:end].decode() for start, end in label_spans.tolist()]
        page_images: list[tuple[str | None, str | None, int | None]] = [_image(data, row) for row in images.tolist()] if (images[:, [0, 2]] >= 0).any() or (images[:, 4] != NO_PAGE_NUMBER).any() else [(None, None, None)] * len(ids)
    except UnicodeDecodeError:  # msgspec names the string that is not UTF-8
        return FALLBACK, 0, None
    return status, int(offset), ParsedPages(page_spans.copy(), ids, sizes.copy(), counts.copy(), coordinates.copy(), codes.copy(), labels,
                                           scores.copy() if flags & SCORED else None, page_images, polygon_counts.copy(), points.copy())


def _converted(data: bytes, deferred: np.ndarray, targets: tuple[np.ndarray, ...]) -> bool:
    """Convert the numbers the kernel left to Python, into their places: `float` of the text is the
    correctly rounded value, as msgspec's. False when one is not finite (msgspec names it)."""
    if not len(deferred):
        return True
    values = np.array([float(data[start:end]) for start, end in deferred[:, 3:].tolist()])
    if not np.isfinite(values).all():
        return False
    for kind, target in enumerate(targets):
        chosen = deferred[:, 0] == kind
        if target.ndim == 1:
            target[deferred[chosen, 1]] = values[chosen]
        else:
            target[deferred[chosen, 1], deferred[chosen, 2]] = values[chosen]
    return True


def _image(data: bytes, row: list[int]) -> tuple[str | None, str | None, int | None]:
    image_start, image_end, pdf_start, pdf_end, page_no = row
    return (data[image_start:image_end].decode() if image_start >= 0 else None,
            data[pdf_start:pdf_end].decode() if pdf_start >= 0 else None,
            None if page_no == NO_PAGE_NUMBER else page_no)


@kernels.helper
def _byte(data, i, end):
    """The byte at `i`, or -1 past `end`."""
    return np.int64(data[i]) if i < end else np.int64(-1)


@kernels.helper
def _space(data, i, end):
    """The offset of the first byte from `i` that is not JSON whitespace."""
    while i < end:
        c = data[i]
        if c != 32 and c != 10 and c != 13 and c != 9:
            break
        i += 1
    return i


@kernels.helper
def _string_end(data, i, end):
    """The offset of the closing quote of the string opening at `i`; -1 when it has an escape or
    a control character, or never closes (msgspec decodes those)."""
    i += 1
    while i < end:
        c = data[i]
        if c == 34:
            return i
        if c == 92 or c < 32:
            return -1
        i += 1
    return -1


@kernels.helper
def _key(data, start, end, first, last):
    """Which of the keys numbered first..last-1 the bytes [start, end) are, or -1."""
    for key in range(first, last):
        length = _KEY_STARTS[key + 1] - _KEY_STARTS[key]
        if end - start == length:
            same = True
            for k in range(length):
                if data[start + k] != _KEY_BYTES[_KEY_STARTS[key] + k]:
                    same = False
                    break
            if same:
                return key
    return -1


@kernels.helper
def _digits(data, i, end, mantissa):
    """Decimal digits from `i` folded into `mantissa`: (next offset, mantissa, digits read);
    mantissa -1 once it passes 2^53."""
    count = 0
    while i < end and data[i] >= 48 and data[i] <= 57:
        if mantissa >= 0:
            mantissa = mantissa * 10 + np.int64(data[i] - 48)
            if mantissa > _MAX_EXACT:
                mantissa = -1
        i += 1
        count += 1
    return i, mantissa, count


@kernels.helper
def _number(data, i, end):
    """A JSON number at `i` as msgspec gives it for a float field: (next offset, value, exact).
    Not `exact`: a JSON number off the fast path, whose text Python converts (correctly rounded,
    as msgspec does). Next offset -1: not a JSON number, or an integer text whose value msgspec
    takes as an integer first ("-0", more than 19 digits)."""
    negative = _byte(data, i, end) == 45
    if negative:
        i += 1
    first = _byte(data, i, end)
    if first < 48 or first > 57:
        return -1, 0.0, True
    if first == 48:
        i, mantissa, whole = i + 1, np.int64(0), 1
        if _byte(data, i, end) >= 48 and _byte(data, i, end) <= 57:
            return -1, 0.0, True  # a leading zero
    else:
        i, mantissa, whole = _digits(data, i, end, np.int64(0))
    integer = True
    exponent = 0
    if _byte(data, i, end) == 46:  # .
        i, mantissa, count = _digits(data, i + 1, end, mantissa)
        if count == 0:
            return -1, 0.0, True
        exponent -= count
        integer = False
    c = _byte(data, i, end)
    if c == 101 or c == 69:  # e, E
        integer = False
        i += 1
        sign = _byte(data, i, end)
        if sign == 43 or sign == 45:
            i += 1
        start = i
        written = 0
        while i < end and data[i] >= 48 and data[i] <= 57:
            written = min(written * 10 + np.int64(data[i] - 48), _MAX_EXPONENT_DIGITS)
            i += 1
        if i == start:
            return -1, 0.0, True
        exponent += -written if sign == 45 else written
    if integer and (whole > _MAX_INTEGER_DIGITS or (negative and mantissa == 0)):
        return -1, 0.0, True
    if mantissa == 0:
        return i, -0.0 if negative else 0.0, True
    if mantissa < 0 or exponent > 22 or exponent < -22:
        return i, 0.0, False
    value = np.float64(mantissa) * _POWERS[exponent] if exponent >= 0 else np.float64(mantissa) / _POWERS[-exponent]
    return i, -value if negative else value, True


@kernels.helper
def _value(data, i, end, target, row, column, deferred, state):
    """The number at `i` for column `column` of row `row` of `target` (SIZES, COORDINATES or
    SCORES): (next offset, its value, NaN until Python converts a deferred one)."""
    start = i
    i, value, exact = _number(data, i, end)
    if i < 0 or exact:
        return i, value
    count = state[3]
    if count >= deferred.shape[0]:
        return -1, 0.0
    deferred[count, 0], deferred[count, 1], deferred[count, 2], deferred[count, 3], deferred[count, 4] = target, row, column, start, i
    state[3] = count + 1
    return i, np.nan


@kernels.helper
def _null(data, i, end):
    """The offset after `null` at `i`, or -1."""
    if end - i >= 4 and data[i] == 110 and data[i + 1] == 117 and data[i + 2] == 108 and data[i + 3] == 108:
        return i + 4
    return -1


@kernels.helper
def _integer(data, i, end):
    """The offset after a JSON integer of at most 18 digits at `i` (a page_no), or -1."""
    if _byte(data, i, end) == 45:
        i += 1
    start = i
    while i < end and data[i] >= 48 and data[i] <= 57:
        i += 1
    if i == start or i - start > 18 or (data[start] == 48 and i - start > 1):
        return -1
    c = _byte(data, i, end)
    if c == 46 or c == 101 or c == 69:
        return -1
    return i


@kernels.helper
def _label_code(data, start, end, label_spans, slots, state):
    """The code of the label at [start, end): its first occurrence's number in this call."""
    hashed = _FNV_OFFSET
    for k in range(start, end):
        hashed = (hashed ^ np.uint64(data[k])) * _FNV_PRIME
    slot = np.int64(hashed & np.uint64(_SLOTS - 1))
    while slots[slot] >= 0:
        code = slots[slot]
        known_start, known_end = label_spans[code, 0], label_spans[code, 1]
        if known_end - known_start == end - start:
            same = True
            for k in range(end - start):
                if data[known_start + k] != data[start + k]:
                    same = False
                    break
            if same:
                return code
        slot = (slot + 1) & (_SLOTS - 1)
    code = state[1]
    if code >= MAX_LABELS:
        return -1
    label_spans[code, 0], label_spans[code, 1] = start, end
    slots[slot] = code
    state[1] = code + 1
    return code


@kernels.helper
def _member(data, i, end, first, last, seen):
    """The object member whose key starts at `i` (after `{` or `,` and blanks): (key, offset of its
    value, keys seen so far); key -1 when the key is not one of first..last-1, repeats one, or the
    member is not `"key": ...`."""
    i = _space(data, i, end)
    if _byte(data, i, end) != 34:
        return -1, i, seen
    close = _string_end(data, i, end)
    if close < 0:
        return -1, i, seen
    key = _key(data, i + 1, close, first, last)
    if key < 0 or seen & (1 << key):
        return -1, i, seen
    i = _space(data, close + 1, end)
    if _byte(data, i, end) != 58:
        return -1, i, seen
    return key, _space(data, i + 1, end), seen | (1 << key)


@kernels.helper
def _string(data, i, end):
    """A plain string's text at `i`: (start, end) of its text, start -1 when it is not one."""
    if _byte(data, i, end) != 34:
        return -1, -1
    close = _string_end(data, i, end)
    return (i + 1, close) if close >= 0 else (-1, -1)


@kernels.helper
def _bbox(data, i, end, coordinates, box, deferred, state):
    """Four numbers in brackets at `i` into coordinates[box]: the offset after them, or -1."""
    if _byte(data, i, end) != 91:
        return -1
    for k in range(4):
        i = _space(data, i + 1, end)
        i, value = _value(data, i, end, np.int64(COORDINATES), box, np.int64(k), deferred, state)
        if i < 0:
            return -1
        coordinates[box, k] = value
        i = _space(data, i, end)
        if _byte(data, i, end) != (93 if k == 3 else 44):
            return -1
    return i + 1


@kernels.helper
def _polygon(data, i, end, points, deferred, state):
    """At least `MIN_POLYGON_NUMBERS` numbers, an even count, in brackets at `i`, into `points`
    from state[4]: (the offset after them, or -1; the count of points)."""
    if _byte(data, i, end) != 91:
        return -1, 0
    first = state[4]
    n = first
    while True:
        i = _space(data, i + 1, end)
        if n >= points.shape[0]:
            return -1, 0
        i, points[n] = _value(data, i, end, np.int64(POINTS), n, np.int64(0), deferred, state)
        if i < 0:
            return -1, 0
        n += 1
        i = _space(data, i, end)
        c = _byte(data, i, end)
        if c == 93:
            break
        if c != 44:
            return -1, 0
    if n - first < MIN_POLYGON_NUMBERS or (n - first) % 2:
        return -1, 0
    state[4] = n
    return i + 1, (n - first) // 2


@kernels.helper
def _box(data, i, end, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots, state):
    """The box object at `i` into row state[0] of the columns: the offset after it, or -1."""
    box = state[0]
    if box >= codes.shape[0] or _byte(data, i, end) != 123:
        return -1
    scores[box] = np.nan
    polygon_counts[box] = 0
    seen = np.int64(0)  # not a literal: one compiled `_member`
    while True:
        key, i, seen = _member(data, i + 1, end, np.int64(LABEL), np.int64(POLYGON + 1), seen)
        if key < 0:
            return -1
        if key == LABEL:
            start, close = _string(data, i, end)
            if start < 0:
                return -1
            codes[box] = _label_code(data, start, close, label_spans, slots, state)
            if codes[box] < 0:
                return -1
            i = close + 1
        elif key == BBOX:
            i = _bbox(data, i, end, coordinates, box, deferred, state)
        elif key == POLYGON and _null(data, i, end) < 0:
            i, polygon_counts[box] = _polygon(data, i, end, points, deferred, state)
        elif _null(data, i, end) >= 0:
            i = _null(data, i, end)
        else:
            i, scores[box] = _value(data, i, end, np.int64(SCORES), box, np.int64(0), deferred, state)
            state[2] |= SCORED
        if i < 0:
            return -1
        i = _space(data, i, end)
        c = _byte(data, i, end)
        if c == 125:
            break
        if c != 44:
            return -1
    if not (seen & (1 << LABEL)) or not (seen & (1 << BBOX)):
        return -1
    state[0] = box + 1
    return i + 1


@kernels.helper
def _boxes(data, i, end, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots, state):
    """The array of boxes at `i`: the offset after it, or -1."""
    if _byte(data, i, end) != 91:
        return -1
    i = _space(data, i + 1, end)
    if _byte(data, i, end) == 93:
        return i + 1
    while True:
        i = _box(data, i, end, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots, state)
        if i < 0:
            return -1
        i = _space(data, i, end)
        c = _byte(data, i, end)
        if c == 93:
            return i + 1
        if c != 44:
            return -1
        i = _space(data, i + 1, end)


@kernels.helper
def _image_value(data, i, end, key, page, images):
    """An image or pdf (a string or null) or a page_no (an integer or null) into images[page]:
    the offset after it, or -1."""
    if _null(data, i, end) >= 0:
        return _null(data, i, end)
    if key == PAGE_NO:
        after = _integer(data, i, end)
        if after > 0:
            number = 0
            for k in range(i + 1 if data[i] == 45 else i, after):
                number = number * 10 + np.int64(data[k] - 48)
            images[page, 4] = -number if data[i] == 45 else number
        return after
    start, close = _string(data, i, end)
    if start < 0:
        return -1
    column = 0 if key == IMAGE else 2
    images[page, column], images[page, column + 1] = start, close
    return close + 1


@kernels.helper
def _page(data, i, end, page, sizes, id_spans, images, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots, state):
    """The page object at `i` (before `end`) into the columns: the offset after it, or -1."""
    i = _space(data, i, end)
    if _byte(data, i, end) != 123:
        return -1
    for column in range(4):
        images[page, column] = NO_IMAGE
    images[page, 4] = NO_PAGE_NUMBER
    seen = np.int64(0)  # not a literal: one compiled `_member`
    while True:
        key, i, seen = _member(data, i + 1, end, np.int64(ID), np.int64(PAGE_NO + 1), seen)
        if key < 0:
            return -1
        if key == ID:
            start, close = _string(data, i, end)
            if start < 0:
                return -1
            id_spans[page, 0], id_spans[page, 1] = start, close
            i = close + 1
        elif key == WIDTH or key == HEIGHT:
            i, sizes[page, key - WIDTH] = _value(data, i, end, np.int64(SIZES), page, np.int64(key - WIDTH), deferred, state)
        elif key == BOXES:
            i = _boxes(data, i, end, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots, state)
        else:
            i = _image_value(data, i, end, key, page, images)
        if i < 0:
            return -1
        i = _space(data, i, end)
        c = _byte(data, i, end)
        if c == 125:
            break
        if c != 44:
            return -1
    required = (1 << ID) | (1 << WIDTH) | (1 << HEIGHT)
    return i + 1 if (seen & required) == required else -1


@kernels.helper
def _array(data, i, end, after_page, page_spans, sizes, id_spans, images, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots,
           state, counts):
    """Page objects one after another from `i`, as items of an array, until the array closes:
    (DONE, offset after the bracket, pages) or (MORE, offset after the last whole page, pages)."""
    page = np.int64(0)  # not a literal: one compiled `_page` for both callers
    resume = i
    while True:
        i = _space(data, i, end)
        c = _byte(data, i, end)
        if c == 93:
            return DONE, i + 1, page
        if after_page:
            if c != 44:
                return MORE, resume, page
            i = _space(data, i + 1, end)
        if page >= sizes.shape[0]:
            return MORE, resume, page
        boxes, labels, numbers, polygon_numbers = state[0], state[1], state[3], state[4]
        after = _page(data, i, end, page, sizes, id_spans, images, coordinates, codes, scores, polygon_counts, points, deferred, label_spans, slots, state)
        if after < 0:  # forget what the page that did not parse added: its boxes, numbers, polygons' numbers and labels
            state[0], state[1], state[3], state[4] = boxes, labels, numbers, polygon_numbers
            for slot in range(_SLOTS):
                if slots[slot] >= labels:
                    slots[slot] = -1
            return MORE, resume, page
        page_spans[page, 0], page_spans[page, 1] = i, after
        counts[page] = state[0] - boxes
        page += 1
        resume = after
        i = after
        after_page = True


@kernels.entry(lambda t: (t.Array(t.uint8, 1, "C", readonly=True), t.Array(t.int64, 2, "C"), t.int64))
def _parse(data, spans, mode):
    """(status, offset, page spans, sizes, counts, id spans, images, coordinates, codes, scores,
    label spans, flags, deferred numbers, each box's polygon points, the polygons' numbers). `mode` SPANS: the pages at `spans`; ARRAY_START or AFTER_PAGE: the pages
    of an array from spans[0, 0] up to spans[0, 1], at its opening or after one of its pages."""
    total = 0
    for row in range(spans.shape[0]):
        total += spans[row, 1] - spans[row, 0]
    pages = spans.shape[0] if mode == SPANS else total // MIN_PAGE_BYTES + 1
    capacity = total // MIN_BOX_BYTES + 1
    page_spans = spans if mode == SPANS else np.empty((pages, 2), dtype=np.int64)  # (only np.empty: each numpy
    sizes = np.empty((pages, 2), dtype=np.float64)  # function and shape compiles an implementation of its own)
    counts = np.empty(pages, dtype=np.int64)
    id_spans = np.empty((pages, 2), dtype=np.int64)
    images = np.empty((pages, 5), dtype=np.int64)
    coordinates = np.empty((capacity, 4), dtype=np.float64)
    codes = np.empty(capacity, dtype=np.int64)
    scores = np.empty(capacity, dtype=np.float64)
    polygon_counts = np.empty(capacity, dtype=np.int64)
    points = np.empty(total // 2 + 1, dtype=np.float64)  # a number and its comma take 2 bytes at least
    label_spans = np.empty((MAX_LABELS, 2), dtype=np.int64)
    slots = np.empty(_SLOTS, dtype=np.int64)
    for slot in range(_SLOTS):
        slots[slot] = -1
    deferred = np.empty((min(total // 6 + 16, MAX_DEFERRED), 5), dtype=np.int64)
    state = np.empty(5, dtype=np.int64)  # boxes so far, labels so far, flags, deferred numbers so far, polygons' numbers so far
    for field in range(5):
        state[field] = 0
    status, offset = DONE, 0
    if mode == SPANS:
        for page in range(pages):
            boxes = state[0]
            after = _page(data, spans[page, 0], spans[page, 1], page, sizes, id_spans, images, coordinates, codes, scores, polygon_counts, points, deferred,
                          label_spans, slots, state)
            if after < 0 or _space(data, after, spans[page, 1]) != spans[page, 1]:
                return (FALLBACK, page, page_spans[:0], sizes[:0], counts[:0], id_spans[:0], images[:0], coordinates[:0], codes[:0], scores[:0], label_spans[:0],
                        state[2], deferred[:0], polygon_counts[:0], points[:0])
            counts[page] = state[0] - boxes
    else:
        status, offset, pages = _array(data, spans[0, 0], spans[0, 1], mode == AFTER_PAGE, page_spans, sizes, id_spans, images, coordinates, codes, scores,
                                       polygon_counts, points, deferred, label_spans, slots, state, counts)
    boxes = state[0]
    return (status, offset, page_spans[:pages], sizes[:pages], counts[:pages], id_spans[:pages], images[:pages],
            coordinates[:boxes], codes[:boxes], scores[:boxes], label_spans[: state[1]], state[2], deferred[: state[3]], polygon_counts[:boxes], points[: state[4]])
