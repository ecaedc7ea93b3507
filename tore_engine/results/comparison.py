"""Comparing two evaluations against the same reference: matrix differences and per-class deltas.

A difference is only meaningful cell by cell when both matrices have the same rows and columns in
the same order (single taxonomy, same classes), or when the two models predict one vocabulary
(the same prediction labels, or one declared vocabulary such as Docling's: two thresholds or two
checkpoints of one detector): then their matrices are aligned by their own labels, not by their
class names, whose dual-taxonomy prefixes differ (`cdla_Text`, `cdla015_Text`). Otherwise two views
stay meaningful: the reduced 2x2 matrices, which are taxonomy-invariant (docs/algorithm.md#dual-taxonomy), and,
for each reference class, the shares of its pixels that go to Background, to its own class and
elsewhere.

The tables a notebook reads are DataFrames with ASCII snake_case columns (`f1_a`, `f1_b`,
`b_minus_a`, `own_class_b_minus_a`, ...); the app puts its own labels on them when it shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.metrics.box_kernel import ERROR_KINDS
from tore_engine.metrics.matrices import MatrixSet, page_foreground_rates, view_matrices
from tore_engine.results.evaluation import Evaluation, MatrixFrames, class_index, frames

if TYPE_CHECKING:
    import pandas as pd

SCORES = ("recall", "precision", "f1")
OUTCOMES = ("Background", "own class", "elsewhere")
MODELS = ("a", "b", "b_minus_a")  # the suffixes of `Comparison.per_class`'s columns
CHANGE_COLUMNS = ["page", "pixels_a", "pixels_b", "b_minus_a"]  # `pages_for_cell` and `pages_for_outcome`
ERROR_ROWS = [*ERROR_KINDS, "FalsePos", "FalseNeg"]  # `Comparison.errors`' rows: TIDE's main error types, then its special ones


def outcome_column(outcome: str, model: str) -> str:
    """The `Comparison.per_class` column of one outcome for model `a`, `b` or `b_minus_a`:
    `own_class_b_minus_a`, say."""
    return f"{outcome.lower().replace(' ', '_')}_{model}"


def comparable(a: MatrixSet, b: MatrixSet) -> bool:
    """Whether the two matrices line up cell by cell."""
    return a.rows == b.rows and a.columns == b.columns


def matrix_difference(a: MatrixSet, b: MatrixSet) -> MatrixSet:
    """B minus A, matrix by matrix (confusion, recall, precision)."""
    if not comparable(a, b):
        raise ValueError("the two matrices have different rows or columns; compare the reduced views instead")
    return MatrixSet(a.rows, a.columns, b.confusion - a.confusion, b.recall - a.recall, b.precision - a.precision)


def _own_column(taxonomy: Taxonomy, label: str) -> int | None:
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


def _outcome_columns(evaluation: Evaluation, label: str, outcome: str) -> tuple[int, int | None]:
    """The matrix row of reference class `label`, and the column of its own class (None when the
    prediction has no class of that label); a `KeyError` naming the reference classes for a label
    the reference lacks, a `ValueError` for an outcome not in `OUTCOMES`."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}; use one of {', '.join(OUTCOMES)}")
    taxonomy = evaluation.taxonomy
    class_index(list(taxonomy.reference_index), label, "reference class")
    return taxonomy.reference_index[label], _own_column(taxonomy, label)


def outcome_cell(evaluation: Evaluation, label: str, outcome: str) -> tuple[str, str] | None:
    """The matrix cell (row class, column class) that makes one outcome of reference class
    `label`: Background, or its own class; None for `elsewhere` (several cells) and for an own
    class the prediction lacks."""
    row, own = _outcome_columns(evaluation, label, outcome)
    column = {"Background": 0, "own class": own}.get(outcome)
    classes = evaluation.matrices.classes
    return None if column is None else (classes[row], classes[column])


def outcome_page_values(evaluation: Evaluation, label: str, outcome: str) -> np.ndarray:
    """Every page's pixels of reference class `label` (its matrix row) that go to one outcome:
    Background (column 0), its own class, or elsewhere (the rest of the row), in page order."""
    row, own = _outcome_columns(evaluation, label, outcome)
    own = -1 if own is None else own  # no column has it
    size = evaluation.taxonomy.size
    in_row = evaluation.contribution_cell // size == row
    columns = evaluation.contribution_cell % size
    picked = {"Background": columns == 0, "own class": columns == own, "elsewhere": (columns != 0) & (columns != own)}[outcome]
    return evaluation.page_sums(in_row & picked)


def _page_changes(page_ids: list[str], a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    """Pages where A or B is non-zero, the largest |B - A| first (ties in page order): page, A's
    and B's pixels, B minus A."""
    import pandas as pd

    change = b - a
    hits = np.flatnonzero((a != 0) | (b != 0))
    order = hits[np.lexsort((hits, -np.abs(change[hits])))]
    return pd.DataFrame({"page": [page_ids[k] for k in order.tolist()], "pixels_a": a[order], "pixels_b": b[order],
                         "b_minus_a": change[order]}, columns=CHANGE_COLUMNS)


def shares_vocabulary(a: Evaluation, b: Evaluation) -> bool:
    """Whether two models predict one vocabulary: the same prediction labels, or one declared
    vocabulary (`Taxonomy.prediction_vocabulary`)."""
    vocabulary = a.taxonomy.prediction_vocabulary
    return (vocabulary is not None and vocabulary == b.taxonomy.prediction_vocabulary) or \
        set(a.taxonomy.prediction_index) == set(b.taxonomy.prediction_index)


@dataclass(frozen=True)
class _Axis:
    """One axis of two matrices aligned by their own labels: the names shown (A's class names,
    then B's for the labels A lacks), and each model's full-matrix index (None: it lacks the label)."""

    names: list[str]
    a: list[int | None]
    b: list[int | None]

    @classmethod
    def of(cls, a: Evaluation, b: Evaluation, side: str) -> _Axis:
        index_a, index_b = (getattr(e.taxonomy, f"{side}_index") for e in (a, b))
        labels = list(dict.fromkeys([*sorted(index_a, key=index_a.__getitem__), *sorted(index_b, key=index_b.__getitem__)]))
        names = [a.matrices.classes[0], *(a.matrices.classes[index_a[label]] if label in index_a else b.matrices.classes[index_b[label]]
                                          for label in labels)]
        return cls(names, [0, *(index_a.get(label) for label in labels)], [0, *(index_b.get(label) for label in labels)])

    def index(self, model: str, name: str) -> int | None:
        """A model's full-matrix index of the class shown as `name` (None: it lacks it)."""
        return getattr(self, model)[self.names.index(name)]


def _picked(values: np.ndarray, rows: list[int | None], columns: list[int | None]) -> np.ndarray:
    """`values[rows][:, columns]`, zero where a row or column is None (the model lacks the label)."""
    picked = np.zeros((len(rows), len(columns)))
    have_rows = [(k, row) for k, row in enumerate(rows) if row is not None]
    have_columns = [(k, column) for k, column in enumerate(columns) if column is not None]
    picked[np.ix_([k for k, _ in have_rows], [k for k, _ in have_columns])] = values[np.ix_([row for _, row in have_rows],
                                                                                          [column for _, column in have_columns])]
    return picked


def _aligned(comparison: Comparison, trimmed: bool) -> tuple[_Axis, _Axis, MatrixSet, MatrixSet]:
    """Both models' full matrices on the axes of their own labels (reference labels down,
    prediction labels across, Background first); with `trimmed`, without the rows and columns
    that are zero in both."""
    rows, columns = _Axis.of(comparison.a, comparison.b, "reference"), _Axis.of(comparison.a, comparison.b, "prediction")
    sets = [MatrixSet(rows.names, columns.names, *(_picked(getattr(e.matrices.full, field), getattr(rows, model), getattr(columns, model))
                                                    for field in ("confusion", "recall", "precision")))
            for model, e in (("a", comparison.a), ("b", comparison.b))]
    if trimmed:
        either = (sets[0].confusion != 0) | (sets[1].confusion != 0)
        kept_rows, kept_columns = np.flatnonzero(either.any(axis=1)).tolist(), np.flatnonzero(either.any(axis=0)).tolist()
        rows = _Axis([rows.names[k] for k in kept_rows], [rows.a[k] for k in kept_rows], [rows.b[k] for k in kept_rows])
        columns = _Axis([columns.names[k] for k in kept_columns], [columns.a[k] for k in kept_columns], [columns.b[k] for k in kept_columns])
        pick = np.ix_(kept_rows, kept_columns)
        sets = [MatrixSet(rows.names, columns.names, m.confusion[pick], m.recall[pick], m.precision[pick]) for m in sets]
    return rows, columns, sets[0], sets[1]


@dataclass(frozen=True, repr=False)
class Comparison:
    """Model B against model A, both evaluated against the same reference (`compare`)."""

    a: Evaluation
    b: Evaluation
    _alignments: dict[str, tuple[_Axis, _Axis, MatrixSet, MatrixSet]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __repr__(self) -> str:
        (recall_a, precision_a), (recall_b, precision_b) = self.a.matrices.foreground, self.b.matrices.foreground
        return (f"Comparison(Foreground recall A {recall_a:.4f} -> B {recall_b:.4f}, "
                f"precision A {precision_a:.4f} -> B {precision_b:.4f}, {len(self.a.page_ids):,} pages)")

    def difference_view(self, view: str = "trimmed") -> str:
        """The view `difference(view)` subtracts on: `view` itself when both models' matrices line
        up, or when the two models predict one vocabulary (`aligned`); otherwise `reduced`, which is
        taxonomy-invariant."""
        if comparable(view_matrices(self.a.matrices, view), view_matrices(self.b.matrices, view)) or self.aligned(view):
            return view
        return "reduced"

    def aligned(self, view: str = "trimmed") -> bool:
        """Whether `difference(view)` aligns the two models' classes by their own labels: a full or
        trimmed view whose matrices do not line up as they are, of two models that predict one
        vocabulary (`shares_vocabulary`)."""
        return (view != "reduced" and shares_vocabulary(self.a, self.b)
                and not comparable(view_matrices(self.a.matrices, view), view_matrices(self.b.matrices, view)))

    def _alignment(self, view: str) -> tuple[_Axis, _Axis, MatrixSet, MatrixSet]:
        """`_aligned` for a full (or trimmed) view, made once a comparison."""
        if view not in self._alignments:
            self._alignments[view] = _aligned(self, view == "trimmed")
        return self._alignments[view]

    def model_cell(self, model: str, view: str, row: str, column: str) -> tuple[str, str] | None:
        """The cell (row class, column class) of `difference(view)` in model `model`'s (`a` or `b`)
        own class names; None when that model lacks either label."""
        if not self.aligned(view):
            return row, column
        rows, columns, *_ = self._alignment(view)
        evaluation = {"a": self.a, "b": self.b}[model]
        indices = rows.index(model, row), columns.index(model, column)
        return None if None in indices else (evaluation.matrices.classes[indices[0]], evaluation.matrices.classes[indices[1]])  # type: ignore[index]

    def difference(self, view: str = "trimmed") -> MatrixFrames:
        """B minus A cell by cell as DataFrames (confusion, recall, precision), on the view both
        share (`difference_view`)."""
        return frames(difference_arrays(self, view))

    def pages_for_cell(self, row: str, column: str, *, view: str = "trimmed") -> pd.DataFrame:
        """The pages behind cell (reference class `row`, predicted class `column`) of
        `difference(view)`, most changed first (ties in page order): page, pixels_a, pixels_b,
        b_minus_a. A class the view lacks is a `KeyError` naming its classes."""
        from tore_engine.results.drilldown import cell_page_values

        basis, difference = self.difference_view(view), difference_arrays(self, view)
        class_index(difference.rows, row, f"reference (row) class of the {basis} difference")
        class_index(difference.columns, column, f"predicted (column) class of the {basis} difference")

        def values(model: str, evaluation: Evaluation) -> np.ndarray:
            cell = self.model_cell(model, basis, row, column)
            return np.zeros(len(evaluation.page_ids)) if cell is None else cell_page_values(evaluation, basis, *cell)

        return _page_changes(self.a.page_ids, values("a", self.a), values("b", self.b))

    def pages_for_outcome(self, label: str, outcome: str) -> pd.DataFrame:
        """The pages behind one bar of `per_class` (reference class `label`, one of `OUTCOMES`),
        most changed first: page, A's and B's pixels of the class with that outcome, B minus A."""
        return _page_changes(self.a.page_ids, outcome_page_values(self.a, label, outcome), outcome_page_values(self.b, label, outcome))

    @property
    def per_class(self) -> pd.DataFrame:
        """Per reference class with support in both (index `class`): the shares of its pixels that
        go to Background, to its own class and elsewhere in A (`background_a`, `own_class_a`,
        `elsewhere_a`), in B (`..._b`) and B minus A (`..._b_minus_a`); it works across taxonomies."""
        import pandas as pd

        a, b = reference_class_outcomes(self.a), reference_class_outcomes(self.b)
        labels = [label for label in a if label in b]
        shares = {"a": a, "b": b, "b_minus_a": {label: {o: b[label][o] - a[label][o] for o in OUTCOMES} for label in labels}}
        columns = {outcome_column(outcome, model): [shares[model][label][outcome] for label in labels] for model in MODELS for outcome in OUTCOMES}
        return pd.DataFrame(columns, index=pd.Index(labels, name="class"), columns=list(columns))

    @property
    def pages(self) -> pd.DataFrame:
        """Per page (index `page`, A's order): the reduced Foreground F1 of A and B (`f1_a`,
        `f1_b`), and `b_minus_a`."""
        import pandas as pd

        index = pd.Index(self.a.page_ids, name="page")
        f1_a, f1_b = (page_foreground_rates(evaluation.page_reduced)[2] for evaluation in (self.a, self.b))
        if self.a.page_ids == self.b.page_ids:  # one reference: no join of 100,000 ids (0.5 s with the whole pages tables)
            f1 = pd.DataFrame({"f1_a": f1_a, "f1_b": f1_b}, index=index)
        else:
            f1 = pd.DataFrame({"f1_a": f1_a}, index=index).join(pd.DataFrame({"f1_b": f1_b}, index=pd.Index(self.b.page_ids, name="page")),
                                                                   how="inner")
        f1["b_minus_a"] = f1["f1_b"] - f1["f1_a"]
        return f1

    @property
    def errors(self) -> pd.DataFrame:
        """TIDE's error types of A and B side by side (index `error`: Cls, Loc, Both, Dupe, Bkg,
        Miss, then the special FalsePos and FalseNeg, which have no count): each model's count and
        dAP (`count_a`, `count_b`, `dap_a`, `dap_b`) and B minus A (`count_b_minus_a`,
        `dap_b_minus_a`); a model without `errors` (dual taxonomy, nothing to match) has blanks."""
        import pandas as pd

        def figures(errors: dict | None) -> dict[str, tuple[float | None, float | None]]:
            if errors is None:
                return {name: (None, None) for name in ERROR_ROWS}
            return {**{name: (errors["counts"][name], errors["dap"][name]) for name in errors["dap"]},
                    **{name: (None, value) for name, value in errors["dap_special"].items()}}

        a, b = figures(self.a.errors), figures(self.b.errors)
        columns: dict[str, list[float | None]] = {}
        for k, figure in enumerate(("count", "dap")):
            columns[f"{figure}_a"] = [a[name][k] for name in ERROR_ROWS]
            columns[f"{figure}_b"] = [b[name][k] for name in ERROR_ROWS]
            columns[f"{figure}_b_minus_a"] = [None if a[name][k] is None or b[name][k] is None else b[name][k] - a[name][k]  # type: ignore[operator]
                                              for name in ERROR_ROWS]
        return pd.DataFrame(columns, index=pd.Index(ERROR_ROWS, name="error"))


def difference_arrays(comparison: Comparison, view: str = "trimmed") -> MatrixSet:
    """`Comparison.difference` as arrays (what the app draws): full or trimmed, as they are or
    aligned by the models' own labels (`Comparison.aligned`); the reduced view otherwise."""
    a_matrices, b_matrices = comparison.a.matrices, comparison.b.matrices
    if comparison.difference_view(view) == "reduced":
        return matrix_difference(a_matrices.reduced, b_matrices.reduced)
    if comparison.aligned(view):
        return matrix_difference(*comparison._alignment(view)[2:])
    return matrix_difference(view_matrices(a_matrices, view), view_matrices(b_matrices, view))


def compare(a: Evaluation, b: Evaluation) -> Comparison:
    """Model B against model A; both must be evaluated against the same reference pages."""
    if a.page_ids != b.page_ids:
        raise InputError("the two evaluations do not score the same reference pages; compare models on one reference")
    return Comparison(a, b)
