"""Scoring a DocILE split (`tore score docile`): validate, match every document, then compute
metrics on demand.

`score_docile(folder, split, kile_file, lir_file)` reads the files; `evaluate(dataset, kile, lir)`
scores predictions in memory. Both return a `DocileResult` holding, per task, the field matching of
every document (the state, mergeable across disjoint document sets) and computing the official
metrics from it: overall, same-text, per fieldtype and per document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tore_engine.core.errors import InputError
from tore_engine.core.text_safety import terminal_text
from tore_engine.scorers.common import MISSING, headline_item
from tore_engine.scorers.docile.dataset import (
    DocileDataset,
    DocileDocument,
    Field,
    load_dataset,
    load_predictions,
)
from tore_engine.scorers.docile.matching import DocumentMatching, match_kile, match_lir
from tore_engine.scorers.docile.metrics import Metrics, PredictionTable
from tore_engine.scorers.docile.pcc import PCCSet
from tore_engine.scorers.docile.validation import (
    tasks_to_evaluate,
    validate_predictions,
)

TASKS = ("kile", "lir")
PRIMARY_METRIC = {"kile": "AP", "lir": "f1"}
METRIC_COLUMNS = ("AP", "f1", "precision", "recall", "TP", "FP", "FN")
HEADLINE_CONVENTIONS = {
    "kile": "official docile-benchmark 0.3.5: same fieldtype and page, the gold's PCCs covered exactly, greedy matching",
    "lir": "official docile-benchmark 0.3.5: fields in maximally matched line items, use_only_for_ap left out",
}


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
    warnings: list[str] = field(default_factory=list)

    def tasks(self) -> dict[str, TaskResult | None]:
        return {"kile": self.kile, "lir": self.lir}

    def to_json(self) -> dict[str, dict | None]:
        """`{"kile": M | null, "lir": M | null}`, the `tore score docile --json` output."""
        return {task: result.metrics().to_json() if result else None for task, result in self.tasks().items()}

    def headline(self) -> list[dict[str, Any]]:
        """Each task's primary metric (KILE AP, LIR F1); None for a task without predictions."""
        return [
            headline_item(f"{task}_{PRIMARY_METRIC[task].lower()}", f"{task.upper()} {PRIMARY_METRIC[task]}",
                          result.primary if result else None, HEADLINE_CONVENTIONS[task])
            for task, result in self.tasks().items()
        ]

    def panel(self) -> dict[str, Any]:
        """Everything the app's score panel draws."""
        return {
            "dataset": self.dataset_name,
            "iou_threshold": self.iou_threshold,
            **{task: result.to_json() if result else None for task, result in self.tasks().items()},
        }

    def summary(self) -> str:
        """A table per evaluated task: the micro average, then every fieldtype (names from the input
        escaped for the terminal: `terminal_text`)."""
        lines = [f"DocILE scores for {terminal_text(self.dataset_name)} (PCC IoU threshold {self.iou_threshold})"]
        for task, result in self.tasks().items():
            lines += ["", *(_task_summary(task, result) if result else [f"{task.upper()}: no predictions ({MISSING})"])]
        return "\n".join(lines)


def _task_summary(task: str, result: TaskResult) -> list[str]:
    primary = PRIMARY_METRIC[task]
    rows = [("micro average", result.metrics())] + [
        (terminal_text(fieldtype), result.metrics(fieldtype=fieldtype)) for fieldtype in result.table.fieldtypes()
    ]
    width = max(len(name) for name, _ in rows)
    lines = [
        f"{task.upper()}: primary metric {primary} = {result.primary:.4f}",
        f"  {'fieldtype':<{width}}  " + "  ".join(f"{column:>9}" for column in METRIC_COLUMNS),
    ]
    for name, metrics in rows:
        values = metrics.to_json()
        cells = [f"{values[c]:>9.4f}" if isinstance(values[c], float) else f"{values[c]:>9d}" for c in METRIC_COLUMNS]
        lines.append(f"  {name:<{width}}  " + "  ".join(cells))
    return lines


def evaluate(
    dataset: DocileDataset,
    kile: Mapping[str, Sequence[Field]] | None,
    lir: Mapping[str, Sequence[Field]] | None,
    iou_threshold: float = 1.0,
    files: Mapping[str, str] | None = None,
) -> DocileResult:
    """Validate the predictions officially, then match every document of the split."""
    if not math.isfinite(iou_threshold):
        raise InputError(f"the PCC IoU threshold must be a finite number, got {iou_threshold!r}")
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
    return DocileResult(dataset.name, iou_threshold, results.get("kile"), results.get("lir"), list(dataset.warnings))


def score_docile(
    dataset_dir: str | Path,
    split: str,
    kile_file: str | Path | None = None,
    lir_file: str | Path | None = None,
    iou_threshold: float = 1.0,
) -> DocileResult:
    """Load a dataset folder and prediction files, and evaluate them."""
    dataset = load_dataset(dataset_dir, split)
    files = {task: path for task, path in zip(TASKS, (kile_file, lir_file)) if path is not None}
    warnings: list[str] = []
    predictions = {task: load_predictions(path, warnings) for task, path in files.items()}
    result = evaluate(dataset, predictions.get("kile"), predictions.get("lir"), iou_threshold,
                      {task: str(path) for task, path in files.items()})
    result.warnings += warnings
    return result
