"""Box outcomes and TIDE's error types against tidecv 1.0.1 itself: every vector of
tests/vectors/tide (cases built to show one rule each, random pages with ties, unscored boxes and
over 100 detections a page, two real model-against-model sets and the demo's model A) holds what
tidecv, run unmodified in its own environment, decided about every box and every figure. Both
paths (plain Python and compiled) must give those decisions; merging runs of pages must give those
of all pages at once."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.vectors.tide.cases import VECTORS, case_of_source, case_sides, decisions, read_vector, vectors
from tore_engine.core import jit
from tore_engine.metrics import box_kernel
from tore_engine.metrics.box_outcomes import (
    CLASS_TYPE,
    NO_PREDICTION,
    NO_REFERENCE,
    BoxOutcomes,
    BoxPartners,
    _by_class,
    _by_score,
    _class_aps,
    _class_order,
    _compiled_class_aps,
    decided,
    match_outcomes,
    nothing_to_match,
    summarise,
)

TOLERANCE = 1e-9
TIDECV = Path("/tmp/tidecv-venv/bin/python")  # where the vectors' reference runs (tests/vectors/tide/build_vectors.py)
NAMES = [path.stem for path in vectors()]


def _case(vector: dict) -> dict:
    return vector["case"] if "case" in vector else case_of_source(vector["source"])


def _outcomes(case: dict, path: str) -> BoxOutcomes:
    return _decided(case, path)[0]


def _decided(case: dict, path: str) -> tuple[BoxOutcomes, BoxPartners]:
    os.environ["TORE_MAP_KERNEL"] = path
    try:
        outcomes, partners = decided(*case_sides(case))
    finally:
        del os.environ["TORE_MAP_KERNEL"]
    held = match_outcomes(*case_sides(case))  # what an evaluation holds: the same decisions
    assert all(np.array_equal(getattr(held, name), getattr(outcomes, name)) for name in BoxOutcomes.__dataclass_fields__)
    return outcomes, partners


def _class_count(case: dict) -> int:
    return 1 + max([box[0] for page in case["pages"] for side in page.values() for box in side], default=0)


def check_figures(outcomes: BoxOutcomes, case: dict, theirs: dict) -> None:
    """The summary equals tidecv's figures (its percentages / 100) within 1e-9, its counts exactly, and
    each class's tp, fp and fn are those of tidecv's decisions."""
    if "failure" in theirs:
        assert nothing_to_match(outcomes) in (NO_REFERENCE, NO_PREDICTION)
        return
    assert nothing_to_match(outcomes) is None
    ours = summarise(outcomes, _class_count(case))
    assert abs(ours.ap50 - theirs["ap"] / 100) <= TOLERANCE
    for name, value in theirs["main"].items():
        assert abs(ours.dap[name] - value / 100) <= TOLERANCE, name
    for name, value in theirs["special"].items():
        assert abs(ours.dap_special[name] - value / 100) <= TOLERANCE, name
    assert ours.counts == theirs["counts"]
    counted: dict[int, list[int]] = {}
    columns = {"prediction": {"tp": 0, "fp": 1}, "reference": {"fn": 2}}  # a matched pair counts once, by its prediction
    for side, outcomes_counted in columns.items():
        for page, rows in zip(case["pages"], theirs["boxes"][side]):
            for box, (outcome, _, _, _) in zip(page[side], rows):
                if outcome in outcomes_counted:
                    counted.setdefault(box[0], [0, 0, 0])[outcomes_counted[outcome]] += 1
    assert ours.per_class == {label: tuple(values) for label, values in sorted(counted.items())}


@pytest.mark.parametrize("name", NAMES)
def test_every_box_and_figure_equals_tidecv(name):
    vector = read_vector(VECTORS / f"{name}.json")
    case = _case(vector)
    outcomes, partners = _decided(case, "numpy")
    assert decisions(outcomes, partners) == vector["tidecv"]["boxes"]
    check_figures(outcomes, case, vector["tidecv"])


@pytest.mark.skipif(not jit.numba_available(), reason="numba is not installed: no compiled path to check")
@pytest.mark.parametrize("name", [name for name in NAMES if not name.startswith("real_")])
def test_the_compiled_path_decides_alike(name):
    case = _case(read_vector(VECTORS / f"{name}.json"))
    plain, compiled = _decided(case, "numpy"), _decided(case, "always")
    assert box_kernel.outcomes.loaded
    for made_plain, made_compiled in zip(plain, compiled):
        for field in type(made_plain).__dataclass_fields__:
            np.testing.assert_array_equal(getattr(made_plain, field), getattr(made_compiled, field), err_msg=field)


INHERITED_KERNEL = """
import numba  # loaded already, as a compiled reader loads it
from tore_engine.metrics import box_kernel, box_outcomes
from tore_engine.run.workers import worker_pool

def loaded_in_worker():
    return box_kernel.outcomes.loaded

assert not box_kernel.outcomes.loaded
box_outcomes.preload_for_pool()
with worker_pool(1) as pool:
    print(box_kernel.outcomes.loaded, pool.submit(loaded_in_worker).result())
"""


@pytest.mark.skipif(not jit.numba_available(), reason="numba is not installed: no compiled path to check")
@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="workers inherit the kernel only when they are forked")
def test_a_forked_worker_inherits_the_box_outcome_kernel_loaded_before_the_pool():
    """Each worker loaded the kernel at its first batch; loaded before the pool forks, it is theirs."""
    if not box_kernel.outcomes.is_cached():
        pytest.skip("the kernel is not in its cache: a pool never waits for a compile (`python -m tore_engine.run.warm`)")
    done = subprocess.run([sys.executable, "-c", INHERITED_KERNEL], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["True", "True"]


@pytest.mark.parametrize("name", ["mixed_grid_0", "mixed_real_1", "over_100_a_page", "demo_model_a"])
def test_runs_of_pages_merge_into_all_pages(name):
    vector = read_vector(VECTORS / f"{name}.json")
    case = _case(vector)
    cuts = [0, 1, len(case["pages"]) // 2, len(case["pages"])]
    parts = [_outcomes({"pages": case["pages"][start:stop]}, "numpy") for start, stop in zip(cuts, cuts[1:])]
    merged = BoxOutcomes.merged(parts)
    whole = _outcomes(case, "numpy")
    for field in BoxOutcomes.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(merged, field), getattr(whole, field), err_msg=field)
    assert summarise(merged, _class_count(case)) == summarise(whole, _class_count(case))


def test_nothing_to_match_still_decides_every_box():
    """tidecv divides by zero without a reference box or without a prediction; every box is still
    decided as it decides it: all Bkg, or all Miss."""
    for name, reason in (("no_reference_box", NO_REFERENCE), ("no_prediction_box", NO_PREDICTION)):
        vector = read_vector(VECTORS / f"{name}.json")
        outcomes, partners = _decided(vector["case"], "numpy")
        assert nothing_to_match(outcomes) == reason
        assert decisions(outcomes, partners) == vector["tidecv"]["boxes"]


@pytest.mark.skipif(not TIDECV.exists(), reason=f"tidecv 1.0.1 is not installed at {TIDECV} (tests/vectors/tide/build_vectors.py)")
def test_the_stored_vectors_are_what_tidecv_says_now():
    built = {path.stem: read_vector(path) for path in vectors() if "case" in read_vector(path)}
    run = subprocess.run([str(TIDECV), str(VECTORS / "tidecv_reference.py")], input=json.dumps([v["case"] for v in built.values()]),
                         capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == [v["tidecv"] for v in built.values()]


def test_the_score_orders_are_the_stable_sorts_tide_makes():
    """The records' orders made by one sort of the scores and radix sorts of the classes equal
    numpy's lexsort of the same keys (the summary's first code): scores drawn from five values so
    that most records tie, classes up to 2,047."""
    generator = np.random.default_rng(7)
    for records, class_count in ((0, 1), (1, 1), (5_000, 17), (20_000, 2048)):
        scores = generator.choice([-0.0, 0.0, 0.1, 0.5, 0.5000000000000001, 0.9, 1.0, np.inf], records)
        classes = generator.integers(0, class_count, records).astype(np.int32)
        true = generator.random(records) < 0.6
        plain, errors_first = _by_score(scores, np.arange(records), true)
        np.testing.assert_array_equal(_by_class(plain, classes), np.lexsort((-scores, classes)))
        np.testing.assert_array_equal(_by_class(errors_first, classes), np.lexsort((true, -scores, classes)))
        moved = np.where(generator.random(records) < 0.2, generator.integers(-1, class_count, records), classes).astype(np.int32)
        np.testing.assert_array_equal(_by_class(errors_first, moved), np.lexsort((true, -scores, moved)))


@pytest.mark.parametrize("name", ["mixed_grid_0", "mixed_real_2", "over_100_a_page", "demo_model_a"])
def test_the_class_order_is_where_tides_records_first_meet_each_class(name):
    """TIDE's class order walked page by page, as its records are pushed: a page's reference boxes,
    then its kept predictions by rank."""
    outcomes = _outcomes(_case(read_vector(VECTORS / f"{name}.json")), "numpy")
    walked: list[int] = []
    for page in range(outcomes.pages):
        references = outcomes.reference_classes[outcomes.reference_offsets[page] : outcomes.reference_offsets[page + 1]]
        on_page = (outcomes.ranked >= outcomes.prediction_offsets[page]) & (outcomes.ranked < outcomes.prediction_offsets[page + 1])
        for label in [*references.tolist(), *outcomes.prediction_classes[outcomes.ranked[on_page]].tolist()]:
            if label not in walked:
                walked.append(label)
    assert _class_order(outcomes, outcomes.prediction_classes[outcomes.ranked]) == walked


@pytest.mark.skipif(not jit.numba_available(), reason="numba is not installed: no compiled path to check")
def test_the_compiled_class_aps_are_the_numpy_ones_to_the_bit():
    """`box_kernel.class_aps` against the NumPy path it replaces at scale (`_class_aps` of the kept
    records sorted by class, kept as this check): records in score order with their classes
    interleaved, which the kernel reads in that order, some left out by `keep` (or none); 0-12 classes
    with ties of rank, hit rates from none to all, classes with records but no reference box,
    reference boxes but no record, and reference counts (1, 4, 20, 50, 100) whose recalls land
    exactly on TIDE's recall points."""
    rng = np.random.default_rng(7)
    for trial in range(400):
        class_count = int(rng.integers(1, 13))
        records = int(rng.integers(0, 300))
        by_record = rng.integers(0, class_count, records).astype(CLASS_TYPE)
        ranking = rng.permutation(records).astype(np.int32)
        keep = None if trial % 3 == 0 else rng.random(records) < rng.choice([0.0, 0.5, 0.9, 1.0])
        kept = np.ones(records, bool) if keep is None else keep
        true = rng.random(records) < rng.choice([0.0, 0.3, 0.8, 1.0])
        hits = np.bincount(by_record[true & kept], minlength=class_count) if records else np.zeros(class_count, np.int64)
        references = np.array([0 if rng.random() < 0.15 else int(hits[c]) + int(rng.choice([0, 0, 1, 3, 20, 50, 100])) for c in range(class_count)], np.int64)
        references[references < hits] = hits[references < hits]
        numpy_aps, numpy_counts = _class_aps(_by_class(ranking[kept[ranking]], by_record), by_record, true, references)
        in_order = None if keep is None else keep[ranking]  # the kernel reads the records in ranking order
        aps, counts = _compiled_class_aps(by_record[ranking], true[ranking], in_order, references)
        np.testing.assert_array_equal(counts, numpy_counts, err_msg=f"trial {trial}")
        assert aps.tobytes() == numpy_aps.tobytes(), f"trial {trial}: {aps} != {numpy_aps}"


@pytest.mark.skipif(not jit.numba_available(), reason="numba is not installed: no compiled path to check")
@pytest.mark.parametrize("name", NAMES)
def test_the_compiled_summary_is_the_numpy_one_and_tidecvs(name):
    vector = read_vector(VECTORS / f"{name}.json")
    case = _case(vector)
    outcomes = _outcomes(case, "numpy")
    if nothing_to_match(outcomes) is not None:
        pytest.skip("nothing to match: no summary (tidecv divides by zero)")
    plain = summarise(outcomes, _class_count(case))
    os.environ["TORE_MAP_KERNEL"] = "always"
    try:
        compiled = summarise(outcomes, _class_count(case))
    finally:
        del os.environ["TORE_MAP_KERNEL"]
    assert box_kernel.class_aps.loaded
    assert compiled == plain
