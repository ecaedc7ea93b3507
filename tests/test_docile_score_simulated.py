"""`score_simulated`: a DocILE split scored against the simulated model, as the app shows it."""

from __future__ import annotations

from tests.helpers import shared_path

from tore_engine.docile import evaluate, load_dataset
from tore_engine.docile.simulated import score_simulated, simulate


def test_score_simulated_is_the_split_evaluated_against_the_simulated_predictions():
    sample = shared_path("data", "docile")
    dataset = load_dataset(sample, "dev")
    for seed, threshold in ((0, 1.0), (5, 0.5)):
        simulated = simulate(dataset, seed)
        expected = evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions, threshold)
        result = score_simulated(sample, "dev", seed, threshold)
        assert result.panel() == expected.panel() and result.iou_threshold == threshold
    assert score_simulated(sample, "dev").kile.metrics().TP == 6  # pinned as in test_docile_simulated
