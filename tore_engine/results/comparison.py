"""Comparing two evaluations against the same reference: matrix differences and per-class deltas.

A difference is only meaningful cell by cell when both matrices have the same rows and columns in
the same order (single taxonomy, same classes). Across taxonomies, two views stay meaningful: the
reduced 2x2 matrices, which are taxonomy-invariant (tore.md section 6.2), and, for each reference
class, the shares of its pixels that go to Background, to its own class and elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.metrics.matrices import MatrixSet, view_matrices
from tore_engine.results.evaluation import Evaluation

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


OUTCOMES = ("Background", "own class", "elsewhere")


def _own_column(taxonomy, label: str) -> int | None:
    """The column of reference class `label`'s own predicted class: the predicted class of the same
    name, or else the one name that differs only in case and surrounding blanks ("Table" and a
    coarser model's "table", as the app's palette pairs them); None when there is none."""
    if label in taxonomy.prediction_index:
        return taxonomy.prediction_index[label]
    key = label.strip().lower()
    matches = [index for name, index in taxonomy.prediction_index.items() if name.strip().lower() == key]
    return matches[0] if len(matches) == 1 else None


def reference_class_outcomes(evaluation: Evaluation) -> dict[str, dict[str, float]]:
    """For each reference class with support: the share of its pixels predicted as Background, as
    its own class (`_own_column`), and as anything else. Rows of the recall matrix, so the three
    add up to 1; they stay meaningful when two models use different classes, where a
    cell-by-cell difference does not."""
    matrices, taxonomy = evaluation.matrices, evaluation.taxonomy
    recall, support = matrices.full.recall, matrices.full.confusion.sum(axis=1)
    outcomes = {}
    for label, row in taxonomy.reference_index.items():
        if support[row] == 0:
            continue
        background = float(recall[row, 0])
        own_column = _own_column(taxonomy, label)
        own = float(recall[row, own_column]) if own_column is not None else 0.0
        outcomes[label] = {"Background": background, "own class": own, "elsewhere": max(0.0, 1.0 - background - own)}
    return outcomes


def _outcome_columns(evaluation: Evaluation, label: str) -> tuple[int, int | None]:
    """The matrix row of reference class `label`, and the column of its own class (None when the
    prediction has no class of that label)."""
    taxonomy = evaluation.taxonomy
    return taxonomy.reference_index[label], _own_column(taxonomy, label)


def outcome_cell(evaluation: Evaluation, label: str, outcome: str) -> tuple[str, str] | None:
    """The matrix cell (row class, column class) that makes one outcome of reference class
    `label`: Background, or its own class; None for `elsewhere` (several cells) and for an own
    class the prediction lacks."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}; use one of {', '.join(OUTCOMES)}")
    row, own = _outcome_columns(evaluation, label)
    column = {"Background": 0, "own class": own}.get(outcome)
    classes = evaluation.matrices.classes
    return None if column is None else (classes[row], classes[column])


def outcome_page_values(evaluation: Evaluation, label: str, outcome: str) -> np.ndarray:
    """Every page's pixels of reference class `label` (its matrix row) that go to one outcome:
    Background (column 0), its own class, or elsewhere (the rest of the row), in page order."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}; use one of {', '.join(OUTCOMES)}")
    row, own = _outcome_columns(evaluation, label)
    own = -1 if own is None else own  # no column has it
    size = evaluation.taxonomy.size
    in_row = evaluation.contribution_cell // size == row
    columns = evaluation.contribution_cell % size
    picked = {"Background": columns == 0, "own class": columns == own, "elsewhere": (columns != 0) & (columns != own)}[outcome]
    hits = in_row & picked
    values = np.zeros(len(evaluation.page_ids))
    np.add.at(values, evaluation.contribution_page[hits], evaluation.contribution_value[hits])
    return values


def _page_changes(page_ids: list[str], a: np.ndarray, b: np.ndarray) -> list[dict]:
    """Pages where A or B is non-zero, the largest |B - A| first (ties in page order)."""
    change = b - a
    hits = np.flatnonzero((a != 0) | (b != 0))
    order = hits[np.lexsort((hits, -np.abs(change[hits])))]
    return [{"page": page_ids[k], "A": float(a[k]), "B": float(b[k]), "B − A": float(change[k])} for k in order]


@dataclass(frozen=True, repr=False)
class Comparison:
    """Model B against model A, both evaluated against the same reference."""

    a: Evaluation
    b: Evaluation

    def __repr__(self) -> str:
        (recall_a, precision_a), (recall_b, precision_b) = self.a.matrices.foreground, self.b.matrices.foreground
        return (f"Comparison(Foreground recall A {recall_a:.4f} -> B {recall_b:.4f}, "
                f"precision A {precision_a:.4f} -> B {precision_b:.4f}, {len(self.a.page_ids):,} pages)")

    def difference_view(self, view: str = "trimmed") -> str:
        """The view `difference(view)` subtracts on: `view` itself when both models' matrices line
        up, or, for two trimmed matrices of one class list, `trimmed` over the union of both trimmed
        class lists; otherwise `reduced`, which is taxonomy-invariant."""
        if comparable(view_matrices(self.a.matrices, view), view_matrices(self.b.matrices, view)):
            return view
        return "trimmed" if self.a.matrices.classes == self.b.matrices.classes and view == "trimmed" else "reduced"

    def difference(self, view: str = "trimmed") -> MatrixSet:
        """B minus A cell by cell, on a view both share (`difference_view`: full or trimmed, the
        union of the two trimmed class lists in single mode; the reduced view otherwise)."""
        if self.difference_view(view) == "reduced":
            return matrix_difference(self.a.matrices.reduced, self.b.matrices.reduced)
        a, b = view_matrices(self.a.matrices, view), view_matrices(self.b.matrices, view)
        if comparable(a, b):
            return matrix_difference(a, b)
        return matrix_difference(*(_restricted(m.full, a, b) for m in (self.a.matrices, self.b.matrices)))

    def cell_pages(self, view: str, row: str, column: str) -> list[dict]:
        """The pages behind cell (row class, column class) of `difference(view)`, most changed
        first (ties in page order): page, A's and B's pixels in the cell, and B minus A."""
        from tore_engine.results.drilldown import cell_page_values

        basis = self.difference_view(view)
        return _page_changes(self.a.page_ids, cell_page_values(self.a, basis, row, column), cell_page_values(self.b, basis, row, column))

    def outcome_pages(self, label: str, outcome: str) -> list[dict]:
        """The pages behind one bar of `per_class` (reference class `label`, one of `OUTCOMES`),
        most changed first: page, A's and B's pixels of the class with that outcome, B minus A."""
        return _page_changes(self.a.page_ids, outcome_page_values(self.a, label, outcome), outcome_page_values(self.b, label, outcome))

    @property
    def per_class(self):
        """Per reference class: the shares to Background, own class and elsewhere for A and B, and B
        minus A (a DataFrame); it works across taxonomies."""
        import pandas as pd

        a, b = reference_class_outcomes(self.a), reference_class_outcomes(self.b)
        rows = [
            {"class": label, **{f"{o} A": a[label][o] for o in OUTCOMES}, **{f"{o} B": b[label][o] for o in OUTCOMES},
             **{f"{o} B − A": b[label][o] - a[label][o] for o in OUTCOMES}}
            for label in a if label in b
        ]
        return pd.DataFrame(rows).set_index("class") if rows else pd.DataFrame()

    @property
    def pages(self):
        """Per page (A's order): the reduced Foreground F1 of A and B, and B minus A."""

        f1 = self.a.pages[["foreground_f1"]].rename(columns={"foreground_f1": "F1 A"}).join(
            self.b.pages[["foreground_f1"]].rename(columns={"foreground_f1": "F1 B"}), how="inner")
        f1["B − A"] = f1["F1 B"] - f1["F1 A"]
        return f1


def _restricted(full: MatrixSet, a: MatrixSet, b: MatrixSet) -> MatrixSet:
    """The full matrices' rows and columns that either trimmed view keeps, in class order."""
    rows = [k for k, name in enumerate(full.rows) if name in a.rows or name in b.rows]
    columns = [k for k, name in enumerate(full.columns) if name in a.columns or name in b.columns]
    pick = np.ix_(rows, columns)
    return MatrixSet([full.rows[k] for k in rows], [full.columns[k] for k in columns], full.confusion[pick], full.recall[pick], full.precision[pick])


def compare(a: Evaluation, b: Evaluation) -> Comparison:
    """Model B against model A; both must be evaluated against the same reference pages."""
    if a.page_ids != b.page_ids:
        raise InputError("the two evaluations do not score the same reference pages; compare models on one reference")
    return Comparison(a, b)
