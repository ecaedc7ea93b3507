"""Loading a DocILE dataset folder and DocILE prediction files.

The official layout is `annotations/<docid>.json`, `ocr/<docid>.json`, `pdfs/<docid>.pdf` and
`<split>.json` (a list of docids). Scoring needs only the annotations and the OCR; PDFs are for
drawing. Everything here is plain data: the scorer in `tore_engine.docile.evaluate` reads it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tore_engine.docile.pcc import document_pccs
from tore_engine.errors import InputError

TASKS = ("kile", "lir")
BBox = tuple[float, float, float, float]  # [left, top, right, bottom], relative to the page


@dataclass(frozen=True)
class Field:
    """A gold field or a predicted field, as `docile.dataset.Field` (unknown JSON keys dropped)."""

    bbox: BBox
    page: int
    fieldtype: str | None
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


def load_dataset(dataset_dir: str | Path, split: str) -> DocileDataset:
    """Read the split file, then every listed document's annotation and OCR."""
    root = Path(dataset_dir)
    split_file = root / f"{split}.json"
    if not root.is_dir():
        raise InputError("DocILE dataset folder not found", file=str(root))
    if not split_file.is_file():
        raise InputError(
            f"split file not found: the dataset has no index file for split {split!r}",
            file=str(split_file),
        )
    docids = _read_json(split_file)
    if not isinstance(docids, list) or not all(isinstance(docid, str) for docid in docids):
        raise InputError("a split file must be a JSON list of document ids", file=str(split_file))
    documents = [_load_document(root, docid) for docid in docids]
    name = f"{root.resolve().name}:{split}"
    return DocileDataset(name=name, split=split, root=root, documents=documents)


def _load_document(root: Path, docid: str) -> DocileDocument:
    annotation_file = root / "annotations" / f"{docid}.json"
    ocr_file = root / "ocr" / f"{docid}.json"
    for needed in (annotation_file, ocr_file):
        if not needed.is_file():
            raise InputError(f"document {docid} is listed in the split but has no such file", file=str(needed))
    annotation = _read_json(annotation_file)
    try:
        metadata = annotation["metadata"]
        page_count = int(metadata["page_count"])
        sizes = metadata.get("page_sizes_at_200dpi")
        kile = [_gold_field(raw) for raw in annotation["field_extractions"]]
        lir = [_gold_field(raw) for raw in annotation["line_item_extractions"]]
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(
            f"document {docid}: not a DocILE annotation ({type(error).__name__}: {error}); it needs "
            "metadata.page_count, field_extractions and line_item_extractions",
            file=str(annotation_file),
        ) from None
    pccs = document_pccs(_read_json(ocr_file), page_count, docid=docid, file=str(ocr_file))
    pdf = root / "pdfs" / f"{docid}.pdf"
    return DocileDocument(
        docid=docid,
        page_count=page_count,
        page_sizes=[(int(w), int(h)) for w, h in sizes] if sizes else None,
        kile_golds=kile,
        lir_golds=lir,
        pccs=pccs,
        pdf=pdf if pdf.is_file() else None,
    )


def _gold_field(raw: dict) -> Field:
    return Field(
        bbox=tuple(float(v) for v in raw["bbox"]),  # type: ignore[arg-type]
        page=int(raw["page"]),
        fieldtype=raw.get("fieldtype"),
        text=raw.get("text"),
        line_item_id=raw.get("line_item_id"),
    )


def load_predictions(path: str | Path) -> dict[str, list[Field]]:
    """Read a prediction file `{docid: [prediction, ...]}`.

    Only the structure is checked here (what the official loader would crash on); the official
    validation rules, with their messages and order, are in `tore_engine.docile.validation`.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("prediction file not found", file=str(path))
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise InputError("a DocILE prediction file must be a JSON object {docid: [prediction, ...]}", file=str(path))
    predictions: dict[str, list[Field]] = {}
    for docid, items in raw.items():
        if not isinstance(items, list):
            raise InputError(f"document {docid}: the predictions must be a JSON list", file=str(path))
        predictions[docid] = [
            _predicted_field(item, f"document {docid}, prediction {index}", str(path))
            for index, item in enumerate(items)
        ]
    return predictions


def _predicted_field(item: Any, where: str, file: str) -> Field:
    def fail(problem: str) -> InputError:
        return InputError(f"{where}: {problem}", file=file)

    if not isinstance(item, dict):
        raise fail("a prediction must be a JSON object")
    bbox = item.get("bbox")
    if not (isinstance(bbox, list) and len(bbox) == 4 and all(_is_number(v) for v in bbox)):
        raise fail("'bbox' must be a list of 4 numbers [left, top, right, bottom]")
    if any(math.isnan(v) for v in bbox):
        raise fail("'bbox' contains NaN")
    page = item.get("page")
    if not _is_int(page):
        raise fail("'page' must be an integer (0-based page index)")
    score = item.get("score")
    if score is not None and not _is_number(score):
        raise fail("'score' must be a number")
    if score is not None and math.isnan(score):
        raise fail("'score' is NaN; predictions cannot be ranked by a NaN score")
    line_item_id = item.get("line_item_id")
    if line_item_id is not None and not _is_int(line_item_id):
        raise fail("'line_item_id' must be an integer")
    fieldtype = item.get("fieldtype")
    if fieldtype is not None and not isinstance(fieldtype, str):
        raise fail("'fieldtype' must be a string")
    text = item.get("text")
    if text is not None and not isinstance(text, str):
        raise fail("'text' must be a string")
    use_only_for_ap = item.get("use_only_for_ap", False)
    if not isinstance(use_only_for_ap, bool):
        raise fail("'use_only_for_ap' must be true or false")
    return Field(
        bbox=tuple(float(v) for v in bbox),  # type: ignore[arg-type]
        page=page,
        fieldtype=fieldtype,
        text=text,
        score=None if score is None else float(score),
        line_item_id=line_item_id,
        use_only_for_ap=use_only_for_ap,
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read JSON: {error}", file=str(path)) from None
