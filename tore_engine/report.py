"""Writing an evaluation out: `report.json` (formats.md section 4), a CSV per matrix, a per-page
CSV, and the short human summary `tore evaluate` prints."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from tore_engine.dataset import DatasetEvaluation


def build_report(evaluation: DatasetEvaluation) -> dict:
    matrices = evaluation.matrices
    trimmed = matrices.trimmed
    return {
        "mode": matrices.mode,
        "classes": matrices.classes,
        "pages": len(evaluation.page_ids),
        "pixels": evaluation.pixels,
        "matrices": matrices.full.to_json(),
        "trimmed": {"rows": trimmed.rows, "columns": trimmed.columns, **trimmed.to_json()},
        "reduced": {"classes": matrices.reduced.rows, **matrices.reduced.to_json()},
        "per_class": matrices.per_class,
        "warnings": [warning.to_json() for warning in evaluation.warnings],
    }


def _write_matrix_csv(path: Path, rows: list[str], columns: list[str], values: np.ndarray) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["reference \\ prediction", *columns])
        for name, row in zip(rows, values.tolist()):
            writer.writerow([name, *(repr(v) for v in row)])


def _write_pages_csv(path: Path, evaluation: DatasetEvaluation) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["page", "pixels", "recall", "precision", "f1"])
        writer.writerow({"page": "page", "pixels": "pixels", "recall": "foreground_recall", "precision": "foreground_precision", "f1": "foreground_f1"})
        writer.writerows(evaluation.page_foreground_scores())


def write_outputs(evaluation: DatasetEvaluation, out: Path) -> dict:
    """Write report.json, the matrix CSVs and pages.csv into `out`; returns the report."""
    out.mkdir(parents=True, exist_ok=True)
    report = build_report(evaluation)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    views = {"": evaluation.matrices.full, "trimmed_": evaluation.matrices.trimmed, "reduced_": evaluation.matrices.reduced}
    for prefix, matrices in views.items():
        for kind in ("confusion", "recall", "precision"):
            _write_matrix_csv(out / f"{prefix}{kind}.csv", matrices.rows, matrices.columns, getattr(matrices, kind))
    _write_pages_csv(out / "pages.csv", evaluation)
    return report


def summary(evaluation: DatasetEvaluation, out: Path | None = None) -> str:
    """A few lines for the terminal: what was compared, the reduced view, the weakest classes."""
    matrices = evaluation.matrices
    reduced = matrices.reduced
    foreground_recall, foreground_precision = reduced.recall[1, 1], reduced.precision[1, 1]
    lines = [
        f"TORE, {matrices.mode} taxonomy: {len(matrices.classes)} classes (Background included), "
        f"{len(evaluation.page_ids)} pages, {evaluation.pixels:,} pixels",
        f"Foreground recall {foreground_recall:.4f}, precision {foreground_precision:.4f}; "
        f"Background recall {reduced.recall[0, 0]:.4f}, precision {reduced.precision[0, 0]:.4f}",
    ]
    if matrices.per_class:
        ranked = sorted(matrices.per_class.items(), key=lambda item: item[1]["f1"])
        lines.append("Lowest F1: " + ", ".join(f"{name} {scores['f1']:.3f}" for name, scores in ranked[:5]))
    if evaluation.warnings:
        lines.append(f"{len(evaluation.warnings)} warnings (listed in report.json)")
    if out is not None:
        lines.append(f"Wrote {out / 'report.json'} and CSVs")
    return "\n".join(lines)
