"""Loading a DocILE dataset folder and DocILE prediction files.

The official layout is `annotations/<docid>.json`, `ocr/<docid>.json`, `pdfs/<docid>.pdf` and
`<split>.json` (a list of docids). Scoring needs only the annotations and the OCR; PDFs are for
drawing. Everything here is plain data: the scorer in `tore_engine.docile.evaluate` reads it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from tore_engine.docile.pcc import OcrExport, document_pccs
from tore_engine.errors import InputError

BBox = tuple[float, float, float, float]  # [left, top, right, bottom], relative to the page


@dataclass(frozen=True, slots=True)
class Field:
    """A gold field or a predicted field, as `docile.dataset.Field` (unknown JSON keys dropped).

    Decoded straight from JSON by msgspec, which checks the types: that is the whole structural
    check of a prediction; the official rules are in `tore_engine.docile.validation`.
    """

    bbox: BBox
    page: int
    fieldtype: str | None = None
    text: str | None = None
    score: float | None = None
    line_item_id: int | None = None
    use_only_for_ap: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "bbox": list(self.bbox),
            "page": self.page,
            "fieldtype": self.fieldtype,
            "text": self.text,
            "score": self.score,
            "line_item_id": self.line_item_id,
            "use_only_for_ap": self.use_only_for_ap,
        }


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
    """The documents of one split, in the split file's order."""

    name: str  # "<folder name>:<split>", as the official messages write it
    split: str
    root: Path
    documents: list[DocileDocument]

    @property
    def docids(self) -> list[str]:
        return [document.docid for document in self.documents]


class _Metadata(msgspec.Struct):
    page_count: int
    page_sizes_at_200dpi: list[tuple[float, float]] | None = None


class _Annotation(msgspec.Struct):
    """The parts of an annotation file that scoring and drawing use."""

    metadata: _Metadata
    field_extractions: list[Field]
    line_item_extractions: list[Field]


_ANNOTATION = msgspec.json.Decoder(_Annotation)
_OCR = msgspec.json.Decoder(OcrExport)
_PREDICTIONS = msgspec.json.Decoder(dict[str, list[Field]])


def load_dataset(dataset_dir: str | Path, split: str) -> DocileDataset:
    """Read the split file, then every listed document's annotation and OCR."""
    root = Path(dataset_dir)
    split_file = root / f"{split}.json"
    if not root.is_dir():
        raise InputError("DocILE dataset folder not found", file=str(root))
    if not split_file.is_file():
        raise InputError(f"split file not found: the dataset has no index file for split {split!r}", file=str(split_file))
    docids = _read_json(split_file)
    if not isinstance(docids, list) or not all(isinstance(docid, str) for docid in docids):
        raise InputError("a split file must be a JSON list of document ids", file=str(split_file))
    return load_documents(root, docids, split)


def load_documents(dataset_dir: str | Path, docids: list[str], split: str = "") -> DocileDataset:
    """The given documents of a dataset folder (`load_dataset` takes them from a split file)."""
    root = Path(dataset_dir)
    if not root.is_dir():
        raise InputError("DocILE dataset folder not found", file=str(root))
    documents = [_load_document(root, docid) for docid in docids]
    return DocileDataset(name=f"{root.resolve().name}:{split}", split=split, root=root, documents=documents)


def _load_document(root: Path, docid: str) -> DocileDocument:
    annotation_file = root / "annotations" / f"{docid}.json"
    ocr_file = root / "ocr" / f"{docid}.json"
    annotation = _decode(_ANNOTATION, annotation_file, docid, "a DocILE annotation")
    ocr = _decode(_OCR, ocr_file, docid, "a DocTR OCR export")
    pccs = document_pccs(ocr, annotation.metadata.page_count, docid=docid, file=str(ocr_file))
    pdf = root / "pdfs" / f"{docid}.pdf"
    return DocileDocument(
        docid=docid,
        page_count=annotation.metadata.page_count,
        page_sizes=[(int(w), int(h)) for w, h in annotation.metadata.page_sizes_at_200dpi or []] or None,
        kile_golds=annotation.field_extractions,
        lir_golds=annotation.line_item_extractions,
        pccs=pccs,
        pdf=pdf if pdf.is_file() else None,
    )


def load_predictions(path: str | Path) -> dict[str, list[Field]]:
    """Read a prediction file `{docid: [prediction, ...]}`, checking only the value types.

    NaN scores are rejected: predictions could not be ranked by them.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("prediction file not found", file=str(path))
    data = path.read_bytes()
    try:
        predictions = _PREDICTIONS.decode(data)
    except msgspec.DecodeError:  # not strict JSON: perhaps NaN or Infinity, which Python writes
        predictions = _convert(_read_json(path), path)
    except msgspec.ValidationError:
        predictions = _convert(json.loads(data), path)
    for docid, fields in predictions.items():
        for index, field in enumerate(fields):
            if field.score is not None and field.score != field.score:
                raise InputError(f"document {docid}, prediction {index}: the score is NaN; predictions cannot be ranked by it", file=str(path))
    return predictions


def _convert(raw: Any, path: Path) -> dict[str, list[Field]]:
    """The slow path of `load_predictions`, which names the document of a bad prediction."""
    if not isinstance(raw, dict):
        raise InputError("a DocILE prediction file must be a JSON object {docid: [prediction, ...]}", file=str(path))
    predictions = {}
    for docid, items in raw.items():
        try:
            predictions[docid] = msgspec.convert(items, list[Field])
        except msgspec.ValidationError as error:
            where = str(error).replace("$", "predictions")
            raise InputError(f"document {docid}: {where}", file=str(path)) from None
    return predictions


def _decode(decoder: msgspec.json.Decoder, path: Path, docid: str, expected: str) -> Any:
    try:
        return decoder.decode(path.read_bytes())
    except FileNotFoundError:
        raise InputError(f"document {docid} is listed in the split but has no such file", file=str(path)) from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as error:
        raise InputError(f"document {docid}: not {expected}: {error}", file=str(path)) from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read JSON: {error}", file=str(path)) from None
