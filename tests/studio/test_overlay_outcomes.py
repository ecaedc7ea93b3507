"""Overlays drawn by box outcome: each demo box's outcome, error type, partner and IoU, as the page
chart draws them, equal tidecv 1.0.1's own decisions on the same boxes (tests/vectors/tide/
demo_model_a.json, made by tidecv run unmodified in its own environment); a clicked box lights its
partner; the navigator orders pages by an error type's count (pages.csv's column)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers import load_vector, page_legend, page_rows, valid_plotly
from tore_engine.plots import page_overlays
from tore_engine.plots.page_overlays import Pane
from tore_engine.plots.palette import OUTCOME_STYLES
from tore_engine.studio.page_index import MOST, PageIndex

TIDE = load_vector("tide/demo_model_a.json")["tidecv"]["boxes"]


def _tide(side: str, page: int) -> list[tuple[str, str, int, float]]:
    return [(outcome, error or "", -1 if partner is None else partner, math.nan if iou is None else iou)
            for outcome, error, partner, iou in TIDE[side][page]]


def test_every_box_decision_of_the_demo_equals_tidecvs(demo):
    _, _, evaluation = demo
    outcomes = evaluation.box_outcomes
    assert outcomes.pages == len(TIDE["reference"]) == 26
    for page in range(outcomes.pages):
        decided = evaluation.page_decisions(page)
        for side in ("reference", "prediction"):
            ours = [(box.outcome, box.error, box.partner, box.iou) for box in decided[side]]
            theirs = _tide(side, page)
            assert [row[:3] for row in ours] == [row[:3] for row in theirs], (page, side)
            np.testing.assert_allclose([row[3] for row in ours], [row[3] for row in theirs], rtol=0, atol=1e-9, equal_nan=True)


def _drawn(demo, page: int, lit=frozenset()):
    reference_set, prediction_set, evaluation = demo
    reference, prediction = reference_set.pages[page], prediction_set.pages[page]
    decided = evaluation.page_decisions(page)
    panes = [Pane("reference", reference, decisions=decided["reference"], partner_page=prediction),
             Pane("model A", prediction, decisions=decided["prediction"], partner_page=reference, lit=lit)]
    return reference, prediction, valid_plotly(page_overlays.page_overlay(panes, reference.width, reference.height, None))


@pytest.mark.parametrize("page", range(0, 26, 5))
def test_each_box_is_drawn_in_its_outcomes_style_with_partner_and_iou_in_its_hover(demo, page):
    reference, prediction, spec = _drawn(demo, page)
    pages = {0: reference, 1: prediction}
    rows = page_rows(spec, "box")
    assert len(rows) == len(reference.labels) + len(prediction.labels)
    for row in rows:
        side = "reference" if row["pane"] == 0 else "prediction"
        box = int(row["tip"]["box"])
        outcome, error, partner, iou = _tide(side, page)[box]
        name, colour, dash = OUTCOME_STYLES[error or outcome]
        assert (row["group"], row["outline"], row["dash"]) == (name, colour, dash)
        assert row["tip"]["title"] == pages[row["pane"]].labels[box]  # the class stays readable
        assert row["tip"]["outcome"] == name
        assert row["tip"]["IoU"] == ("none" if math.isnan(iou) else f"{iou:.3f}")
        other = pages[1 - row["pane"]]
        assert row["tip"]["partner"] == ("none" if partner < 0 else f"box {partner}, {other.labels[partner]}, " + ", ".join(
            f"{value:.1f}" for value in other.bboxes[partner].tolist()))
    shown = {OUTCOME_STYLES[error or outcome][0] for side in ("reference", "prediction") for outcome, error, _, _ in _tide(side, page)}
    assert set(page_legend(spec)) == shown  # one legend entry an outcome on the page


def test_the_lit_box_is_drawn_thicker_than_the_others(demo):
    page = next(p for p in range(26) if any(partner is not None for _, _, partner, _ in TIDE["prediction"][p]))
    box = next(k for k, (_, _, partner, _) in enumerate(TIDE["prediction"][page]) if partner is not None)
    _, _, spec = _drawn(demo, page, lit=frozenset({box}))
    widths = {int(row["tip"]["box"]): row["line"] for row in page_rows(spec, "box") if row["pane"] == 1}
    assert widths[box] > max(width for k, width in widths.items() if k != box)


def test_the_navigator_orders_pages_by_an_error_types_count_most_first(demo):
    _, _, evaluation = demo
    pages = evaluation.pages
    counts = {name: pages[name].to_numpy() for name in ("tp", "fp", "fn", "Cls", "Loc", "Miss")}
    index = PageIndex(list(evaluation.page_ids), pages["foreground_f1"].to_numpy(), None, counts)
    assert f"{MOST}Cls" in index.orders() and f"{MOST}tp" not in index.orders()
    ordering = index.ordering(f"{MOST}Cls")
    by_hand = sorted(range(len(pages)), key=lambda page: (-int(pages["Cls"].iloc[page]), page))  # most first, ties in file order
    assert ordering.pages.tolist() == by_hand
    assert int(pages["Cls"].iloc[ordering.at(0)]) == int(pages["Cls"].max()) > 0
