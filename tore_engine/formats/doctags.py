"""DocTags (docs/formats.md#your-data): a folder of files, one a page, as SmolDocling and Granite-Docling
write them: `<label><loc_x0><loc_y0><loc_x1><loc_y1>text</label>`, locations on a 0..500 grid.

- Page id: the file name without `.dt`, `.doctags.txt` or `.doctags`; frame: the 500 x 500 grid,
  scaled into the reference page's frame by section 1's rule.
- Every element whose opening tag is followed by four locations is one box labelled with its tag
  name, nested ones too (a table's caption, a list's items, a located table cell).
- Markers that carry no location need no closing tag (a picture's class `<logo>`, a code block's
  `<_Python_>`): the closing tag of the element around them ends them. Table cells (the OTSL
  tokens of docling-core's `TableToken`) never have one, located or not: they are leaves. Every
  other located element must be closed, so a truncated output is an error, not a shorter page.

The parser is written here, not taken from docling-core, because `DoclingDocument.load_from_doctags`
(docling-core 2.104) gives docling labels where docs/formats.md wants the tag name (`otsl` becomes
`table`, every `section_header_level_N` one `section_header`) and says nothing of malformed input:
an element with three locations silently loses its box, `<loc_600>` becomes 1.2 of the page, and
thousands of unclosed `<text>` elements become one. (On the five well-formed SmolDocling pages of
the shared data it finds the same 68 located elements.) This one is one linear scan: a tag is
recognised by an anchored pattern of bounded length at each `<`, nesting is bounded by
`MAX_DEPTH`, and malformed input is an error naming the file, the line and column, and the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet
from tore_engine.core.taxonomy import DOCTAGS
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.detect import DOCTAGS_SUFFIXES
from tore_engine.formats.progress import advance
from tore_engine.io.files import input_files, read_text
from tore_engine.io.paths import confine

GRID = 500  # locations run from 0 to GRID on both axes
LOCATIONS_PER_BOX = 4
LOCATION_PREFIX = "loc_"
MAX_DEPTH = 32  # the deepest real DocTags nests 3 levels (doctag, otsl, caption)
MAX_TAG_NAME = 64
MAX_DOCTAGS_BYTES = 64 * 2**20  # one page
PAGE_BREAK = "page_break"
ROOT = "doctag"
TABLE_CELL_TAGS = frozenset({"ecel", "fcel", "lcel", "ucel", "xcel", "nl", "ched", "rhed", "srow"})
# Anchored at the `<` and bounded: a match costs at most MAX_TAG_NAME + 3 characters.
TAG = re.compile(r"<(/?)([A-Za-z0-9_]{1,%d})>" % MAX_TAG_NAME)
TAG_NAME = re.compile(r"[A-Za-z0-9_]{1,%d}" % MAX_TAG_NAME)


def _place(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - text.rfind(chr(10), 0, offset)}"


@dataclass
class _Element:
    name: str
    offset: int
    locations: list[int] = field(default_factory=list)

    @property
    def may_stay_open(self) -> bool:
        """Whether the closing tag of an element around it may end it: a marker without location."""
        return not self.locations


class _Parser:
    """One page's located elements, in the order their opening tags appear."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        self.stack: list[_Element] = []
        self.collecting: _Element | None = None  # the element whose locations may still follow
        self.labels: list[str] = []
        self.coordinates: list[float] = []

    def error(self, offset: int, problem: str) -> InputError:
        return InputError(f"{_place(self.text, offset)}: {problem}", file=self.source)

    def parse(self) -> "_Parser":
        text, position = self.text, 0
        while (start := text.find("<", position)) >= 0:
            match = TAG.match(text, start)
            if match is None:  # a `<` in the text ("p < 0.05")
                self._text(position, start + 1)
                position = start + 1
                continue
            self._text(position, start)
            closing, name = match.group(1), match.group(2)
            if closing:
                self._close(name, start)
            elif name.startswith(LOCATION_PREFIX):
                self._location(name, start)
            else:
                self._open(name, start)
            position = match.end()
        self._text(position, len(text))
        self._end_locations(len(text))
        if self.stack:
            element = next((e for e in reversed(self.stack) if not e.may_stay_open), self.stack[0])
            raise self.error(len(text), f"<{element.name}> ({_place(text, element.offset)}) is never closed: the file "
                             "ends inside it (a truncated model output?)")
        return self

    def _text(self, start: int, end: int) -> None:
        if self.collecting is not None and self.text[start:end].strip():
            self._end_locations(start)

    def _end_locations(self, offset: int) -> None:
        element, self.collecting = self.collecting, None
        if element is None or not element.locations:
            return
        if len(element.locations) < LOCATIONS_PER_BOX:
            raise self.error(offset, f"<{element.name}> ({_place(self.text, element.offset)}) has {len(element.locations)} "
                             f"locations, fewer than the {LOCATIONS_PER_BOX} of a box (x0, y0, x1, y1)")
        self.labels.append(element.name)
        self.coordinates += element.locations

    def _location(self, name: str, offset: int) -> None:
        digits = name[len(LOCATION_PREFIX) :]
        if not digits.isdigit() or not digits.isascii():
            raise self.error(offset, f"<{name}> is not a location (<loc_N>, N from 0 to {GRID})")
        value = int(digits)
        if value > GRID:
            raise self.error(offset, f"<{name}> is outside the 0..{GRID} grid")
        element = self.collecting
        if element is None:
            raise self.error(offset, f"<{name}> does not follow an opening tag: a location belongs right after one")
        if len(element.locations) == LOCATIONS_PER_BOX:
            raise self.error(offset, f"<{element.name}> ({_place(self.text, element.offset)}) has more than "
                             f"{LOCATIONS_PER_BOX} locations")
        element.locations.append(value)

    def _open(self, name: str, offset: int) -> None:
        self._end_locations(offset)
        if name == PAGE_BREAK:
            raise self.error(offset, f"<{PAGE_BREAK}>: a DocTags file holds one page; split the file at its page breaks")
        element = _Element(name, offset)
        self.collecting = element
        if name in TABLE_CELL_TAGS:  # a cell is a leaf: it holds no element and has no closing tag
            return
        if len(self.stack) == MAX_DEPTH:
            raise self.error(offset, f"elements nest more than {MAX_DEPTH} levels deep")
        self.stack.append(element)

    def _close(self, name: str, offset: int) -> None:
        self._end_locations(offset)
        names = [element.name for element in self.stack]
        if name not in names:
            raise self.error(offset, f"</{name}> closes no open element")
        depth = len(names) - 1 - names[::-1].index(name)
        for inner in self.stack[depth + 1 :]:
            if not inner.may_stay_open:
                raise self.error(offset, f"<{inner.name}> ({_place(self.text, inner.offset)}) is not closed before </{name}>")
        del self.stack[depth:]


def parse(text: str, source: str) -> tuple[list[str], list[float]]:
    """The labels and grid coordinates (x0, y0, x1, y1 one box after another) of a DocTags page."""
    parser = _Parser(text, source).parse()
    return parser.labels, parser.coordinates


def page_id(path: Path) -> str:
    name = path.name
    suffix = max((s for s in DOCTAGS_SUFFIXES if name.endswith(s)), key=len, default="")
    return name[: len(name) - len(suffix)] if suffix else path.stem


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A folder of DocTags pages (or one page's file). DocTags name no page image, so
    `page_images` is not used."""
    path = Path(path)
    builder = ColumnsBuilder()
    for file in input_files(path, DOCTAGS_SUFFIXES, f"DocTags files ({', '.join(DOCTAGS_SUFFIXES)})"):
        text = read_text(file, max_bytes=MAX_DOCTAGS_BYTES)
        labels, coordinates = parse(text, str(file))
        advance(len(text.encode("utf-8")))
        builder.add(page_id(file), GRID, GRID, labels, coordinates)
    return LayoutSet(path.stem, builder.build(), None, str(path), vocabulary=DOCTAGS)


def _page_text(labels: list[str], cells: np.ndarray, source: str, page: str) -> str:
    for label in labels:
        if not TAG_NAME.fullmatch(label) or label.startswith(LOCATION_PREFIX) or label in (PAGE_BREAK, ROOT):
            raise InputError(f"label {label!r} cannot be a DocTags tag name (letters, digits and '_'; not loc_*, "
                             f"{PAGE_BREAK} or {ROOT})", file=source, page=page)
    elements = ("".join(f"<{LOCATION_PREFIX}{value}>" for value in box) for box in cells.tolist())
    body = "".join(f"<{label}>{locations}{'' if label in TABLE_CELL_TAGS else f'</{label}>'}\n"
                   for label, locations in zip(labels, elements))
    return f"<{ROOT}>{body}</{ROOT}>\n"


def write(layout: LayoutSet, folder: Path) -> None:
    """The layout as DocTags files in `folder`, `<page id>.dt` each: boxes scaled into the grid
    (multiply, then divide, as section 1's scaling) and rounded to the nearest location. The grid
    keeps 500 steps a side, so a round trip is exact only for boxes already on it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for page in layout.pages:
        if "/" in page.id or page.id in ("", ".", ".."):
            raise InputError(f"page id {page.id!r} cannot be a DocTags file name", file=layout.source, page=page.id)
        frame = np.array([page.width, page.height, page.width, page.height])
        cells = np.clip(np.rint(page.bboxes * GRID / frame), 0, GRID).astype(np.int64)
        target = confine(f"{page.id}{DOCTAGS_SUFFIXES[0]}", folder, what="DocTags file")
        target.write_text(_page_text(page.labels, cells, layout.source, page.id), encoding="utf-8")
