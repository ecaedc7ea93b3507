"""Scoring a DocILE split: validate, match every document, then compute metrics on demand.

`evaluate(dataset, kile, lir)` returns a `DocileResult` holding, per task, the field matching of
every document (the state, mergeable across disjoint document sets) and computing the official
metrics from it: overall, same-text, per fieldtype and per document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from tore_engine.docile.dataset import DocileDataset, DocileDocument, Field, load_dataset, load_predictions
from tore_engine.docile.matching import DocumentMatching, match_kile, match_lir
from tore_engine.docile.metrics import Metrics, PredictionTable
from tore_engine.docile.pcc import PCCSet
from tore_engine.docile.validation import tasks_to_evaluate, validate_predictions

PRIMARY_METRIC = {"kile": "AP", "lir": "f1"}


@dataclass
class TaskResult:
    """One task's matchings over the split, and the metrics computed from them."""

    task: str
    documents: list[DocileDocument]
    predictions: dict[str, list[Field]]
    matchings: dict[str, DocumentMatching]

    @cached_property
    def table(self) -> PredictionTable:
        docids = [document.docid for document in self.documents]
        return PredictionTable.from_matchings(
            docids,
            [self.predictions.get(docid, []) for docid in docids],
            [document.golds(self.task) for document in self.documents],
            [self.matchings[docid] for docid in docids],
        )

    @cached_property
    def _document_index(self) -> dict[str, int]:
        return {document.docid: k for k, document in enumerate(self.documents)}

    def metrics(self, *, same_text: bool = False, fieldtype: str | None = None, docid: str | None = None) -> Metrics:
        """`get_metrics(task, same_text, fieldtype, docids=[docid])` of the official package."""
        document = None if docid is None else self._document_index[docid]
        return self.table.metrics(same_text=same_text, fieldtype=fieldtype, document=document)

    @property
    def primary(self) -> float:
        return getattr(self.metrics(), PRIMARY_METRIC[self.task])

    def merged(self, other: "TaskResult") -> "TaskResult":
        """The result over both document sets (which must be disjoint)."""
        overlap = set(self.matchings) & set(other.matchings)
        if overlap:
            raise ValueError(f"cannot merge results that share documents: {sorted(overlap)[:3]}")
        return TaskResult(
            self.task,
            self.documents + other.documents,
            {**self.predictions, **other.predictions},
            {**self.matchings, **other.matchings},
        )

    def to_json(self) -> dict[str, Any]:
        """Everything a score panel draws: headline, tables, and per document the matched pairs."""
        return {
            "primary_metric": PRIMARY_METRIC[self.task],
            "metrics": self.metrics().to_json(),
            "metrics_same_text": self.metrics(same_text=True).to_json(),
            "per_fieldtype": {ft: self.metrics(fieldtype=ft).to_json() for ft in self.table.fieldtypes()},
            "per_document": {d.docid: self.metrics(docid=d.docid).to_json() for d in self.documents},
            "documents": {d.docid: self._document_json(d) for d in self.documents},
        }

    def _document_json(self, document: DocileDocument) -> dict[str, Any]:
        matching = self.matchings[document.docid]
        golds = document.golds(self.task)
        gold_to_pred = {int(g): k for k, g in enumerate(matching.pred_to_gold.tolist()) if g >= 0}
        return {
            "page_count": document.page_count,
            "page_sizes_at_200dpi": document.page_sizes,
            "pdf": str(document.pdf) if document.pdf is not None else None,
            "predictions": [
                {**field.to_json(), "gold": int(g) if g >= 0 else None}
                for field, g in zip(self.predictions.get(document.docid, []), matching.pred_to_gold.tolist())
            ],
            "golds": [{**field.to_json(), "prediction": gold_to_pred.get(k)} for k, field in enumerate(golds)],
            "false_negative_golds": matching.false_negative_golds,
            "line_item_assignment": (
                None
                if matching.line_item_assignment is None
                else {str(p): g for p, g in matching.line_item_assignment.items()}
            ),
        }


@dataclass
class DocileResult:
    """The evaluation of a split: a `TaskResult` per evaluated task, `None` for the other."""

    dataset_name: str
    iou_threshold: float
    kile: TaskResult | None = None
    lir: TaskResult | None = None

    def headline(self) -> dict[str, dict | None]:
        """`{"kile": M | null, "lir": M | null}`, the `tore score docile --json` output."""
        return {
            "kile": self.kile.metrics().to_json() if self.kile else None,
            "lir": self.lir.metrics().to_json() if self.lir else None,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset_name,
            "iou_threshold": self.iou_threshold,
            "kile": self.kile.to_json() if self.kile else None,
            "lir": self.lir.to_json() if self.lir else None,
        }


def evaluate(
    dataset: DocileDataset,
    kile: Mapping[str, Sequence[Field]] | None,
    lir: Mapping[str, Sequence[Field]] | None,
    iou_threshold: float = 1.0,
    files: Mapping[str, str] | None = None,
) -> DocileResult:
    """Validate the predictions officially, then match every document of the split."""
    to_evaluate = tasks_to_evaluate({"kile": kile, "lir": lir})
    validate_predictions(dataset, to_evaluate, files)
    matchers = {"kile": match_kile, "lir": match_lir}
    matchings: dict[str, dict[str, DocumentMatching]] = {task: {} for task in to_evaluate}
    for document in dataset.documents:
        pcc_set = PCCSet(document.pccs)
        for task, predictions in to_evaluate.items():
            matchings[task][document.docid] = matchers[task](
                document.docid, pcc_set, predictions.get(document.docid, []), document.golds(task), iou_threshold
            )
    results = {
        task: TaskResult(task, dataset.documents, {d: list(fields) for d, fields in predictions.items()}, matchings[task])
        for task, predictions in to_evaluate.items()
    }
    return DocileResult(dataset.name, iou_threshold, kile=results.get("kile"), lir=results.get("lir"))


def score_files(
    dataset_dir: str | Path,
    split: str,
    kile_file: str | Path | None = None,
    lir_file: str | Path | None = None,
    iou_threshold: float = 1.0,
) -> DocileResult:
    """Load a dataset folder and prediction files, and evaluate them."""
    dataset = load_dataset(dataset_dir, split)
    files = {task: str(path) for task, path in (("kile", kile_file), ("lir", lir_file)) if path is not None}
    kile = load_predictions(kile_file) if kile_file is not None else None
    lir = load_predictions(lir_file) if lir_file is not None else None
    return evaluate(dataset, kile, lir, iou_threshold, files)
