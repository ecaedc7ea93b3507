"""boxes.csv's rows (docs/cli.md#box-outcomes-and-tides-error-types): every evaluated box of both sides beside what TIDE made of it.

The outcomes are held (`box_outcomes.BoxOutcomes`, a few bytes a box); the boxes themselves are
read again, batch by batch (`BoxColumns`, from `run.runner.box_batches`), and their partners and
IoUs decided again, so that the table is streamed and never held whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tore_engine.metrics.box_outcomes import PREDICTION_KINDS, REFERENCE_KINDS, BoxOutcomes, decided
from tore_engine.metrics.map_types import SideBoxes

BOX_COLUMNS = ("page", "side", "index", "class", "score", "x0", "y0", "x1", "y1", "outcome", "error", "partner", "iou")
SIDES = ("reference", "prediction")
BoxRow = tuple[Any, ...]  # BOX_COLUMNS' cells: text, integers, floats, None for a blank


def _within_pages(side: SideBoxes) -> np.ndarray:
    """Each box's position on its page."""
    pages = np.repeat(np.arange(side.pages), np.diff(side.offsets))
    return np.arange(len(side.classes)) - side.offsets[pages]


@dataclass(frozen=True)
class BoxColumns:
    """A batch of evaluated pages' boxes as the evaluation read them (after the minimum score,
    scaled into the reference frame, unclipped), with each box's index in its page in the file."""

    page_ids: list[str]
    reference: SideBoxes
    prediction: SideBoxes
    reference_indices: np.ndarray
    prediction_indices: np.ndarray

    @classmethod
    def of(cls, page_ids: list[str], reference: SideBoxes, prediction: SideBoxes,
           reference_kept: np.ndarray | None, prediction_kept: np.ndarray | None) -> "BoxColumns":
        """`*_kept`: the file indices of the boxes a minimum score kept (None: it kept them all)."""
        return cls(page_ids, reference, prediction,
                   _within_pages(reference) if reference_kept is None else np.asarray(reference_kept, np.int64),
                   _within_pages(prediction) if prediction_kept is None else np.asarray(prediction_kept, np.int64))


def box_rows(batches: Iterable[BoxColumns], outcomes: BoxOutcomes, classes: Sequence[str]) -> Iterator[BoxRow]:
    """boxes.csv's rows, page by page, each page's reference boxes then its prediction boxes in file
    order: class by name, score as given (None: none), the box, TIDE's outcome and error, the
    partner's index in the file and the IoU with it (None: none), decided again from the batch's
    boxes (`box_outcomes.decided`: TIDE decides page by page, so the same decisions)."""
    page = 0
    boxes = {"reference": 0, "prediction": 0}  # the first box of the batch in `outcomes`
    for batch in batches:
        again, partners = decided(batch.reference, batch.prediction)
        indices = {"reference": batch.reference_indices, "prediction": batch.prediction_indices}
        sides = {"reference": batch.reference, "prediction": batch.prediction}
        columns = {"reference": (outcomes.reference_offsets, outcomes.reference_kinds, again.reference_kinds, partners.reference_partners, partners.reference_ious),
                   "prediction": (outcomes.prediction_offsets, outcomes.prediction_kinds, again.prediction_kinds, partners.prediction_partners,
                                  partners.prediction_ious)}
        for side in SIDES:
            held, made = columns[side][1], columns[side][2]
            assert np.array_equal(held[boxes[side] : boxes[side] + len(made)], made), "the boxes read again are the boxes evaluated"
        for local, page_id in enumerate(batch.page_ids):
            for side, other in (SIDES, SIDES[::-1]):
                own, kinds = sides[side], (REFERENCE_KINDS if side == "reference" else PREDICTION_KINDS)
                offsets, _, kind_codes, partner_column, ious = columns[side]
                other_first = int(sides[other].offsets[local])
                for k in range(int(own.offsets[local]), int(own.offsets[local + 1])):
                    outcome, error = kinds[int(kind_codes[k])]
                    partner = int(partner_column[k])
                    score = None if own.scores is None or np.isnan(own.scores[k]) else float(own.scores[k])
                    yield (page_id, side, int(indices[side][k]), classes[int(own.classes[k])], score, *map(float, own.xyxy[k]),
                           outcome, error, None if partner < 0 else int(indices[other][other_first + partner]),
                           None if np.isnan(ious[k]) else float(ious[k]))
                assert offsets[page] == boxes[side] + own.offsets[local], "the boxes read again are the boxes evaluated"
            page += 1
        boxes = {side: boxes[side] + len(sides[side].classes) for side in SIDES}
