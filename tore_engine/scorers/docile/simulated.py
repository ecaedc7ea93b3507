"""A simulated DocILE model: KILE and LIR predictions made from the gold by seeded perturbations.

The shared DocILE sample has no predictions, so the app scores this stand-in instead and says so.
Each gold field gets one fate, taken in turn from `PATTERN` over a seeded shuffle of the golds (so
every fate occurs once a document has a few fields): kept exactly, slightly padded, shifted
sideways, given a wrong fieldtype, or dropped; about one gold in eight also gets a duplicate
("extra") box with a low score. Scores fall from exact to extra, so the AP ranking is meaningful.
Under the official PCC rule an exact box always matches, a relabelled, dropped or extra one never
does, and a padded or shifted one matches only if it still covers the gold's PCCs exactly.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

import msgspec
import numpy as np

from tore_engine.scorers.docile.dataset import (
    DocileDataset,
    DocileDocument,
    Field,
    load_dataset,
)
from tore_engine.scorers.docile.score import DocileResult, evaluate

EXACT, PADDED, SHIFTED, RELABELLED, DROPPED, EXTRA = "exact", "padded", "shifted", "relabelled", "dropped", "extra"
PATTERN = (EXACT, PADDED, RELABELLED, EXACT, SHIFTED, DROPPED, EXACT, PADDED)
EXTRA_EVERY = 8  # one extra box per this many golds (rounded up)
SCORE_RANGE = {EXACT: (0.8, 1.0), PADDED: (0.6, 0.9), SHIFTED: (0.3, 0.7), RELABELLED: (0.3, 0.7), EXTRA: (0.05, 0.4)}
PAD_RANGE = (0.001, 0.004)  # page fractions added on every side: about 2 to 7 pixels at 200 DPI
SHIFT_RANGE = (0.25, 0.5)  # fractions of the box width moved left or right
FALLBACK_FIELDTYPES = {"kile": ("document_id", "amount_due"), "lir": ("line_item_description", "line_item_quantity")}


@dataclass(frozen=True)
class Provenance:
    """How one simulated prediction was made: its fate and the gold it was made from."""

    kind: str
    gold: int


@dataclass
class SimulatedTask:
    """One task's simulated predictions per document, with each prediction's provenance and the
    golds that got no prediction."""

    predictions: dict[str, list[Field]]
    provenance: dict[str, list[Provenance]]
    dropped: dict[str, list[int]]


def simulate(dataset: DocileDataset, seed: int = 0) -> dict[str, SimulatedTask]:
    """Simulated predictions for both tasks of every document (LIR only where there are line items)."""
    tasks = {}
    for task in ("kile", "lir"):
        simulated = SimulatedTask({}, {}, {})
        for document in dataset.documents:
            fields, provenance, dropped = simulate_document(document, task, seed)
            simulated.predictions[document.docid] = fields
            simulated.provenance[document.docid] = provenance
            simulated.dropped[document.docid] = dropped
        tasks[task] = simulated
    return tasks


def score_simulated(dataset_dir: str | Path, split: str, seed: int = 0, iou_threshold: float = 1.0) -> DocileResult:
    """The split scored against the simulated model of `seed`, as `score_docile` scores prediction
    files: what the app shows for a sample without model output."""
    dataset = load_dataset(dataset_dir, split)
    simulated = simulate(dataset, seed)
    return evaluate(dataset, simulated["kile"].predictions, simulated["lir"].predictions, iou_threshold)


def simulate_document(document: DocileDocument, task: str, seed: int = 0) -> tuple[list[Field], list[Provenance], list[int]]:
    """(predictions, their provenance, dropped gold indices) of one document and task; the same
    seed, document and task always give the same predictions."""
    golds = document.golds(task)
    rng = np.random.default_rng([seed, zlib.crc32(f"{document.docid}/{task}".encode())])
    order = rng.permutation(len(golds)).tolist()
    fate = {gold: PATTERN[k % len(PATTERN)] for k, gold in enumerate(order)}
    pool = sorted({field.fieldtype for field in golds if field.fieldtype} | set(FALLBACK_FIELDTYPES[task]))
    fields: list[Field] = []
    provenance: list[Provenance] = []
    for index, gold in enumerate(golds):
        if fate[index] == DROPPED:
            continue
        fields.append(_perturbed(gold, fate[index], rng, pool))
        provenance.append(Provenance(fate[index], index))
    exact = [gold for gold in order if fate[gold] == EXACT]
    for gold in exact[: -(-len(golds) // EXTRA_EVERY)]:
        fields.append(_perturbed(golds[gold], EXTRA, rng, pool))
        provenance.append(Provenance(EXTRA, gold))
    dropped = sorted(gold for gold, kind in fate.items() if kind == DROPPED)
    return fields, provenance, dropped


def _perturbed(gold: Field, kind: str, rng: np.random.Generator, fieldtypes: list[str]) -> Field:
    """The prediction of one fate made from `gold`: no `use_only_for_ap`, a score, gold's text."""
    low, high = SCORE_RANGE[kind]
    bbox = gold.bbox
    fieldtype = gold.fieldtype
    if kind in (PADDED, EXTRA):
        bbox = _padded(bbox, rng.uniform(*PAD_RANGE))
    elif kind == SHIFTED:
        bbox = _shifted(bbox, rng.choice([-1.0, 1.0]) * rng.uniform(*SHIFT_RANGE) * (bbox[2] - bbox[0]))
    elif kind == RELABELLED:
        fieldtype = str(rng.choice([name for name in fieldtypes if name != gold.fieldtype]))
    return msgspec.structs.replace(gold, bbox=bbox, fieldtype=fieldtype, score=round(float(rng.uniform(low, high)), 3), use_only_for_ap=False)


def _padded(bbox: tuple[float, float, float, float], pad: float) -> tuple[float, float, float, float]:
    left, top, right, bottom = bbox
    return (max(0.0, left - pad), max(0.0, top - pad), min(1.0, right + pad), min(1.0, bottom + pad))


def _shifted(bbox: tuple[float, float, float, float], dx: float) -> tuple[float, float, float, float]:
    """The box moved sideways by `dx`, kept on the page (its width shrinks only at the page edge)."""
    left, top, right, bottom = bbox
    return (min(1.0, max(0.0, left + dx)), top, min(1.0, max(0.0, right + dx)), bottom)
