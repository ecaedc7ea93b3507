"""Comparing two evaluations against the same reference: matrix differences and per-class deltas.

A difference is only meaningful cell by cell when both matrices have the same rows and columns in
the same order (single taxonomy, same classes); otherwise callers compare the reduced 2x2 views,
which are taxonomy-invariant (tore.md section 6.2).
"""

from __future__ import annotations

from tore_engine.matrices import MatrixSet

SCORES = ("recall", "precision", "f1")


def comparable(a: MatrixSet, b: MatrixSet) -> bool:
    """Whether the two matrices line up cell by cell."""
    return a.rows == b.rows and a.columns == b.columns


def matrix_difference(a: MatrixSet, b: MatrixSet) -> MatrixSet:
    """B minus A, matrix by matrix (confusion, recall, precision)."""
    if not comparable(a, b):
        raise ValueError("the two matrices have different rows or columns; compare the reduced views instead")
    return MatrixSet(a.rows, a.columns, b.confusion - a.confusion, b.recall - a.recall, b.precision - a.precision)


def per_class_deltas(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """B minus A for every class scored by both, in A's class order."""
    return {name: {score: b[name][score] - a[name][score] for score in SCORES} for name in a if name in b}


def mean_scores(per_class: dict[str, dict[str, float]]) -> dict[str, float]:
    """The unweighted mean of each score over exactly the classes given (zeros included)."""
    if not per_class:
        return {score: 0.0 for score in SCORES}
    return {score: sum(values[score] for values in per_class.values()) / len(per_class) for score in SCORES}


def page_deltas(a: list[dict], b: list[dict]) -> list[dict]:
    """Per page (A's order), the reduced Foreground F1 of A and B and B minus A, from each
    evaluation's `page_foreground_scores()`; pages missing from B are left out."""
    b_by_page = {row["page"]: row for row in b}
    return [
        {"page": row["page"], "F1 A": row["f1"], "F1 B": b_by_page[row["page"]]["f1"], "B − A": b_by_page[row["page"]]["f1"] - row["f1"]}
        for row in a
        if row["page"] in b_by_page
    ]
