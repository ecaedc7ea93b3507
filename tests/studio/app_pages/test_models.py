"""The Models page (app_pages/models.py, studio/model_table.py): several models against one
reference in one table, through AppTest and on the engine's own numbers."""

from __future__ import annotations

import math

import pytest

from tests.helpers import DEMO
from tests.studio.helpers import _app, _no_exception, open_page
from tore_engine.api import evaluate_pair
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.model_table import models_table


@pytest.fixture(scope="module")
def three_models():
    """The demo's reference against model A, model B and model A again (as C)."""
    pairs = {model: evaluate_pair(DEMO / "reference.json", DEMO / name) for model, name in (("A", "model_a.json"), ("B", "model_b.json"),
                                                                                             ("C", "model_a.json"))}
    return {model: Evaluated(f"model {model}", pair.reference, pair.prediction, pair.evaluation) for model, pair in pairs.items()}


def test_the_table_holds_each_models_scores_map_and_per_class_f1(three_models):
    table = models_table(three_models)
    assert table.columns[:5].tolist() == ["model", "name", "Foreground F1", "mAP", "mAP@50"]  # in view without scrolling on a laptop
    table = table.set_index("model")
    assert table.index.tolist() == ["A", "B", "C"] and table["taxonomy"].tolist() == ["single", "dual", "single"]
    for model, entry in three_models.items():
        recall, precision = entry.evaluation.matrices.foreground
        assert table.loc[model, "Foreground recall"] == recall and table.loc[model, "Foreground precision"] == precision
        assert table.loc[model, "Foreground F1"] == pytest.approx(2 * recall * precision / (recall + precision))
    a = three_models["A"].evaluation
    assert table.loc["A", "mAP"] == a.map.map and table.loc["A", "mAP@50"] == a.map.map_50 and a.map.map is not None
    assert math.isnan(table.loc["B", "mAP"])  # dual taxonomy: no mAP
    for name, scores in a.matrices.per_class.items():
        assert table.loc["A", f"F1 {name}"] == table.loc["C", f"F1 {name}"] == scores["f1"]
        assert math.isnan(table.loc["B", f"F1 {name}"])  # dual: no per-class score


def test_the_models_page_lists_every_model_set(whole_disk_as_data_root):
    at = _app(src="path", ref=str(DEMO / "reference.json"), a=str(DEMO / "model_a.json"), b=str(DEMO / "model_b.json"),
              c=str(DEMO / "model_a.json"), models="3")
    open_page(at, "models").run()
    _no_exception(at)
    table = next(frame.value for frame in at.dataframe if "Foreground F1" in frame.value.columns)
    assert table["model"].tolist() == ["A", "B", "C"]
    assert table["name"].tolist() == ["model A (model-a)", "model B (model-b)", "model C (model-a)"]
    assert [button.disabled for button in at.button if button.label in ("Open its matrices", "Compare the two")] == [True, True]
