"""Loading a DocILE dataset folder and DocILE prediction files.

The official layout is `annotations/<docid>.json`, `ocr/<docid>.json`, `pdfs/<docid>.pdf` and
`<split>.json` (a list of docids). Scoring needs only the annotations and the OCR; PDFs are for
drawing. Everything here is plain data: the scorer in `tore_engine.scorers.docile.score` reads it.

Files are read as docile-benchmark reads them, through the project's bounded reader
(`tore_engine.inputs`): Python's JSON dialect (`NaN`, `Infinity`) is accepted, and an unknown key
of a field is dropped with a warning ("do not fail on extra keys, only warn", the official
`Field.from_dict`). Every path built from a docid stays inside the dataset folder.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.io.files import is_regular_file, read_bytes
from tore_engine.io.json import decode_json, scan_json, schema_error
from tore_engine.io.paths import inside
from tore_engine.scorers.docile.pcc import OcrExport, document_pccs

MAX_PAGES = 2**20  # pages of one document: page keys (page x distinct y values) stay far inside int64
MAX_PAGE_SIZE = 10**6  # pixels at 200 DPI (a five-metre page): sizes become ints for display
INT64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
# A prediction on a page the document lacks is officially a false positive, so any page in range
# is accepted; the bound only keeps page arithmetic inside int64.
PageNumber = Annotated[int, msgspec.Meta(ge=-MAX_PAGES, le=MAX_PAGES)]
BBox = tuple[float, float, float, float]  # [left, top, right, bottom], relative to the page


class Field(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A gold field or a predicted field, as `docile.dataset.Field`.

    Decoded straight from JSON by msgspec, which checks the types: that is the whole structural
    check of a prediction; the official rules are in `tore_engine.scorers.docile.validation`.
    """

    bbox: BBox
    page: PageNumber
    fieldtype: str | None = None
    text: str | None = None
    score: float | None = None
    line_item_id: INT64 | None = None
    use_only_for_ap: bool = False

    def to_json(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self) | {"bbox": list(self.bbox)}


FIELD_KEYS = frozenset(Field.__struct_fields__)


@dataclass
class DocileDocument:
    """One document: its gold fields per task, page sizes, and the OCR's PCCs in OCR order."""

    docid: str
    page_count: int
    page_sizes: list[tuple[int, int]] | None  # (width, height) at 200 DPI, for display only
    kile_golds: list[Field]
    lir_golds: list[Field]
    pccs: np.ndarray  # (n, 3) float64 rows (x, y, page) in OCR order, duplicates kept
    pdf: Path | None = None

    def golds(self, task: str) -> list[Field]:
        return self.kile_golds if task == "kile" else self.lir_golds


@dataclass
class DocileDataset:
    """The documents of one split, in the split file's order (each docid once)."""

    name: str  # "<folder name>:<split>", as the official messages write it
    split: str
    root: Path
    documents: list[DocileDocument]
    warnings: list[str] = field(default_factory=list)

    @property
    def docids(self) -> list[str]:
        return [document.docid for document in self.documents]


_Size = Annotated[float, msgspec.Meta(ge=0, le=MAX_PAGE_SIZE)]


class _Metadata(msgspec.Struct):
    page_count: Annotated[int, msgspec.Meta(ge=0, le=MAX_PAGES)]
    page_sizes_at_200dpi: list[tuple[_Size, _Size]] | None = None


class _Annotation(msgspec.Struct):
    """The parts of an annotation file that scoring and drawing use (other keys are skipped)."""

    metadata: _Metadata
    field_extractions: list[Field]
    line_item_extractions: list[Field]


FieldLists = Callable[[Any], Iterable[Any]]  # where a parsed file keeps its lists of fields


def _no_fields(raw: Any) -> Iterable[Any]:
    return ()


def _annotation_fields(raw: Any) -> Iterable[Any]:
    return [raw.get(key) for key in ("field_extractions", "line_item_extractions")] if isinstance(raw, dict) else []


def _prediction_fields(raw: Any) -> Iterable[Any]:
    return raw.values() if isinstance(raw, dict) else []


def load_dataset(dataset_dir: str | Path, split: str) -> DocileDataset:
    """Read the split file, then every listed document's annotation and OCR."""
    root = _dataset_root(dataset_dir)
    split_file = inside(f"{split}.json", root, what="split file")
    if not is_regular_file(split_file):
        raise InputError(f"split file not found: the dataset has no index file for split {split!r}", file=str(split_file))
    docids = _decode(split_file, list[str], [])
    return load_documents(root, docids, split)


def load_documents(dataset_dir: str | Path, docids: list[str], split: str = "") -> DocileDataset:
    """The given documents of a dataset folder (`load_dataset` takes them from a split file).

    A docid listed twice is scored once, with a warning: docile-benchmark keys its matchings by
    docid, so a repeated document counts once there too.
    """
    root = _dataset_root(dataset_dir)
    warnings = [f"the split lists document {docid} {count} times; it is scored once" for docid, count in Counter(docids).items() if count > 1]
    documents = [_load_document(root, docid, warnings) for docid in dict.fromkeys(docids)]
    return DocileDataset(f"{root.resolve().name}:{split}", split, root, documents, warnings)


def _dataset_root(dataset_dir: str | Path) -> Path:
    root = Path(dataset_dir)
    if not root.is_dir():
        raise InputError("DocILE dataset folder not found", file=str(root))
    return root


def _document_file(root: Path, folder: str, docid: str, suffix: str) -> Path:
    """`<root>/<folder>/<docid><suffix>`, which must stay inside the dataset folder."""
    return inside(Path(folder) / f"{docid}{suffix}", root, what=f"the {folder} file of document {docid!r}")


def _load_document(root: Path, docid: str, warnings: list[str]) -> DocileDocument:
    annotation_file = _document_file(root, "annotations", docid, ".json")
    ocr_file = _document_file(root, "ocr", docid, ".json")
    annotation = _decode_document(annotation_file, docid, _Annotation, warnings, _annotation_fields)
    ocr = _decode_document(ocr_file, docid, OcrExport, warnings)
    pccs = document_pccs(ocr, annotation.metadata.page_count, docid=docid, file=str(ocr_file))
    pdf = _document_file(root, "pdfs", docid, ".pdf")
    return DocileDocument(
        docid=docid,
        page_count=annotation.metadata.page_count,
        page_sizes=[(int(w), int(h)) for w, h in annotation.metadata.page_sizes_at_200dpi or []] or None,
        kile_golds=annotation.field_extractions,
        lir_golds=annotation.line_item_extractions,
        pccs=pccs,
        pdf=pdf if is_regular_file(pdf) else None,
    )


def _decode_document(path: Path, docid: str, schema: Any, warnings: list[str], fields: FieldLists = _no_fields) -> Any:
    if not path.exists():
        raise InputError(f"document {docid} is listed in the split but has no such file", file=str(path))
    try:
        return _decode(path, schema, warnings, fields)
    except InputError as error:
        raise InputError(f"document {docid}: {error.problem}", file=error.file) from None


def load_predictions(path: str | Path, warnings: list[str] | None = None) -> dict[str, list[Field]]:
    """Read a prediction file `{docid: [prediction, ...]}`, checking only the value types.

    Unknown keys of a prediction are dropped and named in `warnings`. NaN scores are rejected:
    predictions could not be ranked by them.
    """
    path = Path(path)
    predictions = _decode(path, dict[str, list[Field]], [] if warnings is None else warnings, _prediction_fields, by_key=True)
    for docid, fields in predictions.items():
        for index, prediction in enumerate(fields):
            if prediction.score is not None and prediction.score != prediction.score:
                raise InputError(f"document {docid}, prediction {index}: the score is NaN; predictions cannot be ranked by it", file=str(path))
    return predictions


def _decode(path: Path, schema: Any, warnings: list[str], fields: FieldLists = _no_fields, *, by_key: bool = False) -> Any:
    """A DocILE JSON file decoded against `schema`.

    The strict msgspec decode is the fast path. Only a file it refuses is parsed again in Python's
    dialect, the unknown keys of its fields (the lists `fields` finds) dropped with a warning, and
    converted; with `by_key`, `schema` is a `dict[str, T]` converted value by value, so that an
    error names the key (the docid) it is under."""
    data = read_bytes(path)
    source = str(path)
    scan_json(data, source)
    try:
        return decode_json(data, source, schema)
    except InputError as error:
        refusal = error
    try:
        raw = json.loads(data)
    except ValueError:  # not JSON in Python's dialect either: msgspec's message says where
        raise refusal from None
    dropped = sorted({key for items in fields(raw) for key in _drop_unknown_keys(items)})
    if dropped:
        warnings.append(f"{source}: unknown field key(s) {', '.join(map(repr, dropped))} ignored, as docile-benchmark ignores them")
    return _convert(raw, schema, source, by_key)


def _drop_unknown_keys(items: Any) -> set[str]:
    """Remove from each field object of `items` the keys a `Field` does not have; return them."""
    dropped: set[str] = set()
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            for key in set(item) - FIELD_KEYS:
                dropped.add(str(key))
                del item[key]
    return dropped


def _convert(raw: Any, schema: Any, source: str, by_key: bool) -> Any:
    if by_key and isinstance(raw, dict):
        value_schema = schema.__args__[1]
        return {key: _convert_at(value, value_schema, source, (key,)) for key, value in raw.items()}
    return _convert_at(raw, schema, source, ())


def _convert_at(raw: Any, schema: Any, source: str, prefix: tuple[str, ...]) -> Any:
    try:
        return msgspec.convert(raw, schema)
    except msgspec.ValidationError as error:
        raise schema_error(error, source, prefix) from None
