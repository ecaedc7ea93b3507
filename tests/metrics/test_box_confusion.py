"""The box-level confusion matrix at IoU 0.5 (metrics/box_confusion.py): on the demo, every cell
equals a plain count over tidecv 1.0.1's own decisions of the same boxes (tests/vectors/tide/
demo_model_a.json: each box's outcome, error and partner, made by tidecv run unmodified) and the
boxes' classes read from the demo files; each prediction counted once; its diagonal is TIDE's per-class
true positives; a cell's pages add up to the cell and are ordered most first."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.helpers import DEMO, load_vector
from tore_engine.api import evaluate
from tore_engine.metrics.box_confusion import NO_PREDICTION, NO_REFERENCE

TIDE = load_vector("tide/demo_model_a.json")["tidecv"]["boxes"]


@pytest.fixture(scope="module")
def demo():
    return evaluate(DEMO / "reference.json", DEMO / "model_a.json")


def _classes(name: str) -> list[list[str]]:
    data = json.loads((DEMO / name).read_text(encoding="utf-8"))
    return [[box["label"] for box in page["boxes"]] for page in data["pages"]]


def _by_hand() -> tuple[Counter, Counter]:
    """Cells and their pages from tidecv's decisions, box by box."""
    references, predictions = _classes("reference.json"), _classes("model_a.json")
    cells: Counter = Counter()
    pages: Counter = Counter()
    for page, (reference, prediction) in enumerate(zip(TIDE["reference"], TIDE["prediction"])):
        claimed = set()
        for k, (outcome, error, partner, _) in enumerate(prediction):
            if outcome == "tp" or error == "Cls":
                claimed.add(partner)
                cell = (references[page][partner], predictions[page][k])
            else:
                cell = (NO_REFERENCE, predictions[page][k])
            cells[cell] += 1
            pages[(cell, page)] += 1
        for k in range(len(reference)):
            if k not in claimed:
                cells[(references[page][k], NO_PREDICTION)] += 1
                pages[((references[page][k], NO_PREDICTION), page)] += 1
    return cells, pages


def test_every_cell_equals_a_count_over_tidecvs_decisions(demo):
    matrix = demo.box_confusion
    cells, _ = _by_hand()
    assert {(row, column): int(matrix.loc[row, column]) for row in matrix.index for column in matrix.columns if matrix.loc[row, column]} == dict(cells)
    assert int(matrix.drop(columns=NO_PREDICTION).to_numpy().sum()) == sum(len(page) for page in TIDE["prediction"])  # each prediction once
    per_class = demo.errors["per_class"]
    assert {name: int(matrix.loc[name, name]) for name in per_class} == {name: values["tp"] for name, values in per_class.items()}


def test_a_cells_pages_add_up_to_the_cell_most_first(demo):
    _, pages = _by_hand()
    matrix = demo.box_confusion
    for row, column in [("Title", "Section-header"), (NO_REFERENCE, "Text"), ("Text", NO_PREDICTION), ("Text", "Text")]:
        listed = demo.pages_for_box_cell(row, column)
        assert int(listed["boxes"].sum()) == int(matrix.loc[row, column]) > 0
        assert dict(zip(listed["page"], listed["boxes"])) == {demo.page_ids[page]: count for (cell, page), count in pages.items() if cell == (row, column)}
        assert listed["boxes"].is_monotonic_decreasing
    with pytest.raises(KeyError, match="rows: "):
        demo.pages_for_box_cell("Nothing", "Text")

