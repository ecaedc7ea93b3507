"""DoclingDocument JSON (docs/formats.md#your-data): a file docling's `save_as_json` wrote, or a folder
of them, read with docling-core (the maintained library that defines the format).

- Page id `<document name>/<page_no>`; frame: the page's `size` in PDF points (1 point = 1 pixel).
- One box per `prov` entry of every item that `iterate_items(traverse_pictures=True,
  included_content_layers=<all layers>)` yields: the tree under `body`, items of every content
  layer (page headers and footers are `furniture`), and the text docling nests inside pictures, as
  docling-eval's layout evaluators count it. Labels are the items' `label`
  values (`text`, `section_header`, ...); boxes are turned to a top-left origin with the page height
  (`BoundingBox.to_top_left_origin`). Items without `prov` paint nothing. docling-core clamps a
  box that leaves its page while loading; when it warns (more than 1% outside), so does the report.
- Page images: the document's `origin.filename` (the PDF or image it was converted from) in the
  `--page-images` folder or beside the JSON, when it is there; else the page image the document
  embeds as a data URI (`pages[n].image.uri`), read by `embedded_page_image` when drawn.

The file's bytes pass through `tore_engine.io` first (size bound, depth and duplicate keys);
pydantic's validation errors become one paragraph naming the file and the JSON path.
"""

from __future__ import annotations

import base64
import binascii
import re
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.extras import optional_module
from tore_engine.core.layout import LayoutSet, PageImage
from tore_engine.core.taxonomy import DOCLING
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.image_refs import ImageFolder
from tore_engine.formats.progress import advance
from tore_engine.io.files import input_files, is_regular_file, read_json_bytes
from tore_engine.io.json import decode_json, path_text, scan_json
from tore_engine.io.paths import confine

_document = optional_module("docling_core.types.doc.document", "docling", "docling-core")
_base = optional_module("docling_core.types.doc.base", "docling", "docling-core")
_labels = optional_module("docling_core.types.doc.labels", "docling", "docling-core")
_pydantic = optional_module("pydantic", "docling")
if TYPE_CHECKING:
    from docling_core.types.doc.document import ContentLayer, DocItem, DoclingDocument
    from pydantic import ValidationError
else:
    DoclingDocument, ContentLayer, DocItem = _document.DoclingDocument, _document.ContentLayer, _document.DocItem

ALL_LAYERS = frozenset(ContentLayer)
EMBEDDED_PAGES = "pages"  # PageImage.parquet_cell column of an image embedded in a DoclingDocument
DATA_URI_PREFIX = "data:"
PDF_MIMETYPE = "application/pdf"
REF_KEY = "$ref"
MAX_SHOWN_VALUE = 60  # characters of an offending value quoted in an error
ENUM_REPR = re.compile(r"<\w+\.\w+: ('[^']*')>")  # pydantic writes <DocItemLabel.TEXT: 'text'> for 'text'
PAGE_IN_WARNING = re.compile(r"\bon page (\d+)\b")  # docling-core: "... coordinate r on page 3 is outside ..."
# Exceptions docling-core's validators and ref resolution raise on inconsistent documents, besides
# pydantic's own: a `$ref` to no item, a tree that nests past the interpreter's recursion limit.
DOCUMENT_ERRORS = (ValueError, IndexError, KeyError, TypeError, AttributeError, RecursionError)

PageImages = Callable[[int], PageImage | None]  # page_no -> the page's image


# --- parsing --------------------------------------------------------------------------------------


def _json_path(document: object, location: tuple) -> tuple[tuple[str | int, ...], tuple]:
    """Pydantic's error location as a path in the JSON (the steps that are keys or indices there),
    and the union members it went through (the other steps, each with where it stood)."""
    steps: list[str | int] = []
    members: list[tuple[int, object]] = []
    node = document
    for step in location:
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            members.append((len(steps), step))
            continue
        steps.append(step)
    return tuple(steps), tuple(members)


def _shown(value: object) -> str:
    if isinstance(value, (dict, list)):
        return ""
    text = repr(value)
    return f", got {text[:MAX_SHOWN_VALUE]}{'...' if len(text) > MAX_SHOWN_VALUE else ''}"


def _validation_problem(error: "ValidationError", data: bytes) -> str:
    """One of pydantic's errors, with its JSON path. Where an item matches none of a union's
    members (a text is a title, a heading, a list item, ... or a plain text), the member with the
    fewest errors is the one the item meant to be, and its error the one to fix."""
    problems = error.errors(include_url=False)
    if problems[0]["type"] == "json_invalid":
        return f"is not valid JSON: {problems[0]['msg'].removeprefix('Invalid JSON: ')}"
    document = msgspec.json.decode(data)
    located = [(*_json_path(document, tuple(problem["loc"])), problem) for problem in problems]
    errors_of = Counter(members for _, members, _ in located)
    # fewest errors first; among equals the last member, the most general (TextItem after TitleItem, ...)
    steps, _, problem = min(reversed(located), key=lambda entry: errors_of[entry[1]])
    where = path_text(steps) or "the top level"
    message = ENUM_REPR.sub(r"\1", problem["msg"])
    return f"is not a valid DoclingDocument: {message}{_shown(problem.get('input'))} (at {where})"


def _resolves(document: object, ref: str) -> bool:
    node = document
    for step in ref.removeprefix("#/").split("/"):
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return False
    return True


def _dangling_ref(data: bytes) -> str | None:
    """The first `$ref` that points to no item, and where it is (docling-core only says 'list
    index out of range'); the JSON is already bounded in depth, so the walk is too."""
    document = msgspec.json.decode(data)
    pending: list[tuple[tuple[str | int, ...], object]] = [((), document)]
    while pending:
        steps, node = pending.pop()
        if isinstance(node, dict) and isinstance(node.get(REF_KEY), str) and not _resolves(document, node[REF_KEY]):
            return f"{node[REF_KEY]!r} (at {path_text(steps)})"
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        pending += [((*steps, key), child) for key, child in reversed(list(children))]
    return None


def parse_document(data: bytes, source: str) -> tuple["DoclingDocument", list[str]]:
    """A DoclingDocument from JSON bytes, checked by the input layer and then by docling-core, and
    the user warnings docling-core gave while loading it (it clamps boxes that leave their page)."""
    scan_json(data, source)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            document = DoclingDocument.model_validate_json(data)
        return document, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    except _pydantic.ValidationError as error:
        raise InputError(_validation_problem(error, data), file=source) from None
    except RecursionError:
        raise InputError("is not a valid DoclingDocument: its item tree nests too deeply", file=source) from None
    except DOCUMENT_ERRORS as error:
        dangling = _dangling_ref(data) if isinstance(error, (IndexError, KeyError)) else None
        problem = f"a '$ref' points to no item: {dangling}" if dangling else f"({type(error).__name__}: {error})"
        raise InputError(f"is not a valid DoclingDocument: {problem}", file=source) from None


def loading_warnings(messages: list[str], document: "DoclingDocument", name: str) -> list[InputWarning]:
    """docling-core's loading warnings as report warnings, on the page each names (else the first)."""
    first = min(document.pages, default=1)
    pages = [match and int(match.group(1)) for match in map(PAGE_IN_WARNING.search, messages)]
    return [InputWarning(f"{name}/{page or first}", None, "", f"docling-core: {message}") for page, message in zip(pages, messages)]


# --- items to boxes -------------------------------------------------------------------------------


def _page_boxes(document: "DoclingDocument", source: str) -> dict[int, tuple[list[str], list[float]]]:
    """Each page's labels and top-left-origin coordinates, one box per `prov` entry."""
    boxes: dict[int, tuple[list[str], list[float]]] = {page_no: ([], []) for page_no in sorted(document.pages)}
    try:
        items = list(document.iterate_items(traverse_pictures=True, included_content_layers=set(ALL_LAYERS)))
    except DOCUMENT_ERRORS as error:
        raise InputError(f"its item tree cannot be walked ({type(error).__name__}: {error})", file=source) from None
    for item, _level in items:
        if not isinstance(item, DocItem):
            continue  # a group: no box of its own
        for prov in item.prov:
            page = document.pages.get(prov.page_no)
            if page is None:
                raise InputError(f"{item.self_ref} has a box on page {prov.page_no}, which 'pages' does not list", file=source)
            box = prov.bbox.to_top_left_origin(page_height=page.size.height)
            labels, coordinates = boxes[prov.page_no]
            labels.append(str(item.label.value))
            coordinates += (box.l, box.t, box.r, box.b)
    return boxes


def add_document(builder: ColumnsBuilder, document: "DoclingDocument", name: str, source: str, images: PageImages) -> None:
    """Append a document's pages, `<name>/<page_no>`, to the columns."""
    for page_no, (labels, coordinates) in _page_boxes(document, source).items():
        size = document.pages[page_no].size
        builder.add(f"{name}/{page_no}", size.width, size.height, labels, coordinates, None, images(page_no))


# --- page images ----------------------------------------------------------------------------------


def _source_file(document: "DoclingDocument", folder: Path) -> Path | None:
    """The document's source file (`origin.filename`) in `folder`, when it is there."""
    if document.origin is None or not document.origin.filename:
        return None
    try:
        path = confine(document.origin.filename, folder, what="source document")
    except InputError:
        return None
    return path if is_regular_file(path) else None


def _has_embedded_image(document: "DoclingDocument", page_no: int) -> bool:
    image = document.pages[page_no].image
    return image is not None and str(image.uri).startswith(DATA_URI_PREFIX)


def _page_images(document: "DoclingDocument", file: Path, page_images: Path | None, events: list[InputWarning]) -> PageImages:
    folder = ImageFolder.beside(file, page_images)
    origin, source = document.origin, _source_file(document, folder.base)  # a source file is found only from an origin
    is_pdf = source is not None and origin is not None and (origin.mimetype == PDF_MIMETYPE or source.suffix.lower() == ".pdf")

    def image(page_no: int) -> PageImage | None:
        if source is not None and origin is not None:
            page_id = f"{document.name}/{page_no}"
            return folder.locate(origin.filename, page_id, "", events, page_no - 1 if is_pdf else None)
        if _has_embedded_image(document, page_no):
            return PageImage(file.resolve(), parquet_cell=(EMBEDDED_PAGES, page_no, None))
        return None

    return image


class _EmbeddedImage(msgspec.Struct):
    uri: str


class _EmbeddedPage(msgspec.Struct):
    image: _EmbeddedImage | None = None


class _EmbeddedPages(msgspec.Struct):
    pages: dict[str, _EmbeddedPage] = {}


def embedded_page_image(path: Path, page_no: int) -> bytes:
    """The image bytes a DoclingDocument embeds for page `page_no` (a base64 data URI)."""
    source = str(path)
    data = read_json_bytes(path)
    scan_json(data, source)
    page = decode_json(data, source, _EmbeddedPages).pages.get(str(page_no))
    uri = page.image.uri if page is not None and page.image is not None else ""
    header, _, payload = uri.partition(",")
    if not header.startswith(DATA_URI_PREFIX) or not header.endswith(";base64"):
        raise InputError(f"page {page_no} embeds no base64 image", file=source)
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error:
        raise InputError(f"page {page_no}'s embedded image is not valid base64", file=source) from None


# --- reading --------------------------------------------------------------------------------------


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A DoclingDocument JSON file, or a folder of them (one document a file)."""
    path = Path(path)
    builder = ColumnsBuilder()
    events: list[InputWarning] = []
    named: dict[str, Path] = {}
    for file in input_files(path, (".json",), "DoclingDocument .json files"):
        data = read_json_bytes(file)
        document, messages = parse_document(data, str(file))
        advance(len(data))
        if document.name in named:
            raise InputError(f"{named[document.name].name} and {file.name} are both named {document.name!r}: their page ids "
                             "would be the same", file=str(path))
        named[document.name] = file
        events += loading_warnings(messages, document, document.name)
        add_document(builder, document, document.name, str(file), _page_images(document, file, page_images, events))
    return LayoutSet(path.stem, builder.build(), None, str(path), events, vocabulary=DOCLING)


# --- writing --------------------------------------------------------------------------------------


def _page_key(page_id: str, source: str) -> tuple[str, int]:
    name, _, number = page_id.rpartition("/")
    if not name or not number.isdigit() or int(number) < 1:
        raise InputError(f"page id {page_id!r} is not '<document name>/<page_no>' (page_no from 1), as a "
                         "DoclingDocument's pages are", file=source)
    return name, int(number)


def _item_adder(document: "DoclingDocument", label: str, source: str) -> Callable[..., object]:
    """The docling-core call that adds an item with this label (each item kind has its own)."""
    labels = _labels.DocItemLabel
    try:
        kind = labels(label)
    except ValueError:
        raise InputError(f"label {label!r} is not a docling item label ({', '.join(item.value for item in labels)})", file=source) from None
    graph = _document.GraphData(cells=[], links=[])
    adders: dict[object, Callable[..., object]] = {
        labels.PICTURE: document.add_picture,
        labels.TABLE: lambda prov: document.add_table(_document.TableData(), prov=prov),
        labels.DOCUMENT_INDEX: lambda prov: document.add_table(_document.TableData(), prov=prov, label=kind),
        labels.KEY_VALUE_REGION: lambda prov: document.add_key_values(graph, prov=prov),
        labels.FORM: lambda prov: document.add_form(graph, prov=prov),
        labels.LIST_ITEM: lambda prov: document.add_list_item("", prov=prov, parent=document.add_list_group()),
    }
    return adders.get(kind, lambda prov: document.add_text(kind, "", prov=prov))


def _documents(layout: LayoutSet) -> dict[str, "DoclingDocument"]:
    """The layout's pages as DoclingDocuments, one a document name, boxes in page order."""
    documents: dict[str, DoclingDocument] = {}
    for page in layout.pages:
        name, page_no = _page_key(page.id, layout.source)
        document = documents.setdefault(name, DoclingDocument(name=name))
        document.add_page(page_no=page_no, size=_base.Size(width=page.width, height=page.height))
        for label, (l, t, r, b) in zip(page.labels, page.bboxes.tolist()):
            bbox = _base.BoundingBox(l=l, t=t, r=r, b=b, coord_origin=_base.CoordOrigin.TOPLEFT)
            prov = _document.ProvenanceItem(page_no=page_no, bbox=bbox, charspan=(0, 0))
            add = _item_adder(document, label, layout.source)  # its InputError (an unknown label) is not caught below
            try:
                add(prov=prov)
            except (_pydantic.ValidationError, ValueError, TypeError):
                raise InputError(f"label {label!r} cannot be written as a DoclingDocument item on its own", file=layout.source,
                                 page=page.id) from None
    return documents


def write(layout: LayoutSet, folder: Path) -> None:
    """The layout as DoclingDocument JSON files in `folder`, `<document name>.json` each, built
    with docling-core; page ids must be `<document name>/<page_no>`, labels docling item labels.
    Boxes are written with a top-left origin, as the reader gives them, so nothing is rounded."""
    folder = Path(folder)
    documents = _documents(layout)
    folder.mkdir(parents=True, exist_ok=True)
    for name, document in documents.items():
        document.save_as_json(confine(f"{name}.json", folder, what="document file"))
