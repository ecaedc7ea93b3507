"""The simulated DocILE model: deterministic, officially valid, and scoring to the mix of TP/FP/FN
its perturbations imply (expected counts worked out from each prediction's provenance, with a
brute-force PCC coverage for padded and shifted boxes, not from the engine's matching)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import shared_path
from tests.scorers.docile.helpers import SAMPLE
from tore_engine.scorers.docile import evaluate, load_dataset
from tore_engine.scorers.docile.dataset import DocileDataset, DocileDocument, Field
from tore_engine.scorers.docile.simulated import (
    DROPPED,
    EXACT,
    EXTRA,
    PADDED,
    RELABELLED,
    SHIFTED,
    score_simulated,
    simulate,
)
from tore_engine.scorers.docile.validation import validate_predictions

WORD = 6  # characters per synthetic word


def _synthetic_dataset(gold_count: int = 16) -> DocileDataset:
    """One page of well-separated six-character words, one gold field on each (KILE and LIR)."""
    pccs, kile, lir = [], [], []
    for k in range(gold_count):
        left, top = 0.1 + 0.4 * (k % 2), 0.05 * (k // 2) + 0.02
        right, bottom = left + 0.12, top + 0.01
        pccs += [(left + (i + 0.5) * (right - left) / WORD, (top + bottom) / 2, 0) for i in range(WORD)]
        kile.append(Field((left, top, right, bottom), 0, f"type_{k % 5}", f"word {k}"))
        lir.append(Field((left, top, right, bottom), 0, f"line_item_{k % 3}", f"word {k}", line_item_id=k // 4))
    document = DocileDocument("synthetic", 1, [(1700, 2200)], kile, lir, np.array(pccs, dtype=np.float64))
    return DocileDataset("synthetic:test", "test", Path("."), [document])


def _covered(pccs: np.ndarray, field: Field) -> frozenset:
    """The PCCs a field covers, one point at a time."""
    left, top, right, bottom = field.bbox
    return frozenset(
        (x, y) for x, y, page in pccs.tolist() if page == field.page and left <= x <= right and top <= y <= bottom
    )


def _expected_counts(dataset: DocileDataset, simulated, task: str) -> dict[str, int]:
    """TP/FP/FN implied by the provenance: exact match, relabelled/extra never, dropped is an FN,
    padded/shifted match iff they cover exactly the gold's PCCs (official threshold 1.0)."""
    counts = Counter(TP=0, FP=0, FN=0)
    for document in dataset.documents:
        golds = document.golds(task)
        counts["FN"] += len(simulated.dropped[document.docid])
        for field, made in zip(simulated.predictions[document.docid], simulated.provenance[document.docid]):
            gold = golds[made.gold]
            matches = made.kind == EXACT or (
                made.kind in (PADDED, SHIFTED) and _covered(document.pccs, field) == _covered(document.pccs, gold)
            )
            counts["TP" if matches else "FP"] += 1
            counts["FN"] += made.kind in (PADDED, SHIFTED, RELABELLED) and not matches
    return dict(counts)


def _counts(result, task: str) -> dict[str, int]:
    metrics = getattr(result, task).metrics()
    return {"TP": metrics.TP, "FP": metrics.FP, "FN": metrics.FN}


def test_same_seed_same_predictions_other_seed_others():
    dataset = _synthetic_dataset()
    first, again, other = simulate(dataset, seed=0), simulate(dataset, seed=0), simulate(dataset, seed=1)
    for task in ("kile", "lir"):
        assert first[task].predictions == again[task].predictions
        assert first[task].provenance == again[task].provenance
        assert first[task].predictions != other[task].predictions


def test_every_fate_occurs_and_predictions_pass_the_official_checks():
    dataset = _synthetic_dataset()
    simulated = simulate(dataset)
    validate_predictions(dataset, {task: simulated[task].predictions for task in ("kile", "lir")})
    kinds = Counter(made.kind for made in simulated["kile"].provenance["synthetic"])
    assert kinds == {EXACT: 6, PADDED: 4, RELABELLED: 2, SHIFTED: 2, EXTRA: 2}
    assert len(simulated["kile"].dropped["synthetic"]) == 2
    golds = dataset.documents[0].kile_golds
    for field, made in zip(simulated["kile"].predictions["synthetic"], simulated["kile"].provenance["synthetic"]):
        gold = golds[made.gold]
        assert (field.fieldtype != gold.fieldtype) == (made.kind == RELABELLED)
        assert (field.bbox == gold.bbox) == (made.kind in (EXACT, RELABELLED))
    assert DROPPED not in kinds


def test_synthetic_page_scores_to_the_known_mix():
    """Separated words: padding keeps a box's PCCs, a shift by a quarter of the width or more
    loses some. So TP = exact + padded, FP = shifted + relabelled + extra, FN = shifted +
    relabelled + dropped, in both tasks."""
    dataset = _synthetic_dataset()
    simulated = simulate(dataset)
    result = evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions)
    for task in ("kile", "lir"):
        kinds = Counter(made.kind for made in simulated[task].provenance["synthetic"])
        dropped = len(simulated[task].dropped["synthetic"])
        expected = {
            "TP": kinds[EXACT] + kinds[PADDED],
            "FP": kinds[SHIFTED] + kinds[RELABELLED] + kinds[EXTRA],
            "FN": kinds[SHIFTED] + kinds[RELABELLED] + dropped,
        }
        assert _counts(result, task) == expected
    assert _counts(result, "kile") == {"TP": 10, "FP": 6, "FN": 6}
    assert _expected_counts(dataset, simulated["kile"], "kile") == {"TP": 10, "FP": 6, "FN": 6}


def test_real_sample_scores_to_the_mix_its_provenance_implies():
    if not (SAMPLE / "dev.json").is_file():
        pytest.skip(f"shared DocILE sample not found at {SAMPLE}; skipping")
    dataset = load_dataset(SAMPLE, "dev")
    simulated = simulate(dataset)
    result = evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions)
    for task in ("kile", "lir"):
        expected = _expected_counts(dataset, simulated[task], task)
        assert _counts(result, task) == expected
        assert 0 < expected["TP"] and 0 < expected["FP"] and 0 < expected["FN"]
    # Pinned, so that a change of the simulator shows up (also checked by the panel's test).
    assert _counts(result, "kile") == {"TP": 6, "FP": 6, "FN": 5}
    assert _counts(result, "lir") == {"TP": 27, "FP": 13, "FN": 13}


def test_score_simulated_is_the_split_evaluated_against_the_simulated_predictions():
    sample = shared_path("data", "docile")
    dataset = load_dataset(sample, "dev")
    for seed, threshold in ((0, 1.0), (5, 0.5)):
        simulated = simulate(dataset, seed)
        expected = evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions, threshold)
        result = score_simulated(sample, "dev", seed, threshold)
        assert result.panel() == expected.panel() and result.iou_threshold == threshold
    assert score_simulated(sample, "dev").kile.metrics().TP == 6  # pinned as in test_real_sample_scores_to_the_mix_its_provenance_implies
