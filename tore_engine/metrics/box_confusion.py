"""The box-level confusion matrix at IoU 0.5 (docs/cli.md#box-level-confusion-matrix), made from TIDE's
decisions on the same boxes (`box_outcomes`), so that it points at the same boxes as boxes.csv.

Rows are the reference classes and a last row for predictions matching no reference box at IoU 0.5;
columns are the predicted classes and a last column for reference boxes no prediction matched or
confused at IoU 0.5, as FiftyOne's and supervision's detection confusion matrices lay them out. Each
prediction is counted once: a true positive in (its class, its class), a Cls error (IoU >= 0.5 with a
reference box of another class) in (that box's class, its class), any other error (Loc, Both, Dupe,
Bkg) in the last row. A reference box is counted in the last column when it is neither a true
positive's partner nor a Cls error's. The matrix is a sum over pages, so it merges exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tore_engine.core.offsets import run_of_items
from tore_engine.metrics.box_kernel import CLS, IGNORED, TP
from tore_engine.metrics.box_outcomes import BoxOutcomes

NO_REFERENCE = "(no reference box)"
NO_PREDICTION = "(no prediction)"


@dataclass(frozen=True)
class BoxCells:
    """Where each counted box of a run of pages lands: its cell (row, column) and its page."""

    rows: np.ndarray
    columns: np.ndarray
    pages: np.ndarray


def box_cells(outcomes: BoxOutcomes, classes: int) -> BoxCells:
    """Each prediction's cell and each reference box's that no true positive or Cls error claims
    (row or column `classes`: the last one, no box on that side)."""
    kinds, partners = outcomes.prediction_kinds, outcomes.prediction_partners
    prediction_pages = run_of_items(outcomes.prediction_offsets)
    claimed = (kinds == TP) | (kinds == CLS)
    partner_at = outcomes.reference_offsets[prediction_pages] + partners  # the partner's position among all reference boxes
    prediction_rows = np.full(len(kinds), classes, dtype=np.int64)
    prediction_rows[claimed] = outcomes.reference_classes[partner_at[claimed]]
    counted = kinds != IGNORED  # TIDE's ignored boxes are left out, as in its counts
    free = np.ones(len(outcomes.reference_classes), dtype=bool)
    free[partner_at[claimed]] = False
    reference_pages = run_of_items(outcomes.reference_offsets)
    return BoxCells(np.concatenate([prediction_rows[counted], outcomes.reference_classes[free]]),
                    np.concatenate([outcomes.prediction_classes[counted], np.full(int(free.sum()), classes, dtype=np.int64)]),
                    np.concatenate([prediction_pages[counted], reference_pages[free]]))


def box_confusion(cells: BoxCells, classes: int) -> np.ndarray:
    """(classes + 1) x (classes + 1) box counts (`box_cells`): reference class (last: none) x predicted class (last: none)."""
    return np.bincount(cells.rows * (classes + 1) + cells.columns, minlength=(classes + 1) ** 2).reshape(classes + 1, classes + 1)


def box_cell_pages(cells: BoxCells, pages: int, row: int, column: int) -> tuple[np.ndarray, np.ndarray]:
    """The pages (of `pages`) with boxes in cell (row, column), the most first (ties in page order), and their counts."""
    counts = np.bincount(cells.pages[(cells.rows == row) & (cells.columns == column)], minlength=pages)
    present = np.flatnonzero(counts)
    order = present[np.lexsort((present, -counts[present]))]
    return order, counts[order]


def axis_names(classes: Sequence[str]) -> tuple[list[str], list[str]]:
    """The matrix's row and column names."""
    return [*classes, NO_REFERENCE], [*classes, NO_PREDICTION]
