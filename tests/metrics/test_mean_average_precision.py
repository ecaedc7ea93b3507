"""mAP against independent values: the public vectors, pycocotools 2.0.11 on generated sets and on
real data (`coco`, within 1e-12), docling-metrics-layout 0.17.0 run unmodified (`docling`, its
float32 values), and the reference's rules written out as cases whose values are derived by hand
(and were checked against the reference, which the last tests here run again when it is present).
Both paths, the NumPy one and the compiled one, are run and must agree bit for bit."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import load_vector, shared_path
from tests.metrics.oracles import (
    STATS,
    coco_oracle,
    docling_case,
    layout_pages,
    record_columns,
    run_docling_reference,
)
from tore_engine.api import load_pair
from tore_engine.metrics import map_kernel, map_numpy
from tore_engine.metrics.map_report import MapState
from tore_engine.metrics.map_types import COCO, CODE_TYPE, DOCLING, PageMatches, SideBoxes, match_patterns, ranking
from tore_engine.metrics.mean_average_precision import (
    convention_named,
    match_pages,
    mean_average_precision,
    page_statistics,
    summarise,
)

TOLERANCE = 1e-12
EPS = float(np.spacing(1))
PATHS = ("numpy", "always")  # TORE_MAP_KERNEL: the NumPy path, the compiled one


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    monkeypatch.setenv(map_kernel.KERNEL_ENV, request.param)
    return request.param


# --- building pages ------------------------------------------------------------------------------------


def page(reference: list, prediction: list) -> tuple:
    """A page from box rows: reference [class, x1, y1, x2, y2], prediction [class, x1, y1, x2, y2, score or None]."""
    ref = (np.array([row[1:5] for row in reference], np.float64).reshape(-1, 4), np.array([row[0] for row in reference], np.int64))
    scores = np.array([np.nan if row[5] is None else row[5] for row in prediction], np.float64)
    pred = (np.array([row[1:5] for row in prediction], np.float64).reshape(-1, 4), np.array([row[0] for row in prediction], np.int64), scores)
    return ref, pred


def vector_pages(case: dict) -> list:
    taxonomy = case["taxonomy"]
    predicted = {p["id"]: p["boxes"] for p in case["prediction"]["pages"]}
    return [page([[taxonomy.index(b["label"]), *b["bbox"]] for b in p["boxes"]],
                 [[taxonomy.index(b["label"]), *b["bbox"], b.get("score")] for b in predicted.get(p["id"], [])])
            for p in case["reference"]["pages"]]


# --- comparing -------------------------------------------------------------------------------------------


def same(actual: float | None, expected: float, exact: bool = False) -> bool:
    """-1 (the references' undefined) is None here; a number within 1e-12 (`exact`: equal)."""
    if expected == -1:
        return actual is None
    return actual is not None and (actual == expected if exact else abs(actual - expected) <= TOLERANCE)


def page_figure(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def assert_equals_pycocotools(result, pages: list, class_count: int) -> None:
    oracle = coco_oracle(pages, class_count)
    assert all(same(getattr(result, name), oracle["stats"][name]) for name in STATS), (result, oracle["stats"])
    assert set(result.per_class) == set(oracle["per_class"])
    for label, (ap, ar) in oracle["per_class"].items():
        assert same(result.per_class[label][0], ap) and same(result.per_class[label][1], ar), (label, result.per_class[label], ap, ar)
    assert len(result.pages) == len(oracle["pages"])
    for ours, theirs in zip(result.pages.tolist(), oracle["pages"]):
        assert all(same(page_figure(a), b) for a, b in zip(ours, theirs)), (ours, theirs)


def assert_equals_docling(result, expected: dict, taxonomy: list[str]) -> None:
    """Every value the reference writes, float32 values compared exactly."""
    assert all(same(getattr(result, name), expected[name], exact=True) for name in STATS), (result, expected)
    assert {taxonomy[label] for label in result.per_class} == set(expected["map_per_class"])
    for label, (ap, ar) in result.per_class.items():
        name = taxonomy[label]
        assert same(ap, expected["map_per_class"][name], exact=True) and same(ar, expected["mar_100_per_class"][name], exact=True), name
    for ours, theirs in zip(result.pages.tolist(), expected["page_evaluations"].values(), strict=True):
        assert all(same(page_figure(value), theirs[name], exact=True) for value, name in zip(ours, ("map", "map_50", "map_75")))
    for name in ("map", "map_50", "map_75"):
        ours = result.page_stats[name]
        theirs = expected[f"{name}_stats"]
        assert (ours.total, ours.median, ours.bins, ours.hist) == (theirs["total"], theirs["median"], theirs["bins"], theirs["hist"])
        assert abs(ours.mean - theirs["mean"]) <= TOLERANCE and abs(ours.std - theirs["std"]) <= TOLERANCE


# --- the public vectors ------------------------------------------------------------------------------------


def _vector_cases() -> list[dict]:
    return load_vector("map_public.json")["cases"]


VECTOR_NAMES = [case["name"] for case in _vector_cases()]


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_public_vectors_in_both_conventions(name, path):
    case = next(case for case in load_vector("map_public.json")["cases"] if case["name"] == name)
    pages, taxonomy = vector_pages(case), case["taxonomy"]
    docling = mean_average_precision(pages, len(taxonomy), "docling")
    assert_equals_docling(docling, case["expected"]["docling"], taxonomy)
    coco = mean_average_precision(pages, len(taxonomy), "coco")
    expected = case["expected"]["coco"]
    assert all(same(getattr(coco, stat), expected[stat]) for stat in STATS)
    assert {taxonomy[label] for label in coco.per_class} == set(expected["map_per_class"])
    for label, (ap, ar) in coco.per_class.items():
        assert same(ap, expected["map_per_class"][taxonomy[label]]) and same(ar, expected["mar_100_per_class"][taxonomy[label]])
    assert_equals_pycocotools(coco, pages, len(taxonomy))  # per page, which the vectors leave out


# --- generated sets against pycocotools --------------------------------------------------------------------

# Boxes on a coarse grid of a few units (so that IoUs hit thresholds exactly and boxes coincide),
# zero-area and inverted boxes, boxes past the page, scores from a few values (ties) or none.
UNITS = st.sampled_from([1.0, 7.0, 25.0, 0.1])
SCORES = st.one_of(st.none(), st.sampled_from([0.9, 0.5, 0.25, 0.1]), st.floats(0, 1, allow_nan=False))


@st.composite
def boxes(draw, scored: bool):
    unit = draw(UNITS)
    count = draw(st.integers(0, 7))
    rows = []
    for _ in range(count):
        x1, y1 = draw(st.integers(-2, 8)), draw(st.integers(-2, 8))
        x2, y2 = x1 + draw(st.integers(-1, 10)), y1 + draw(st.integers(-1, 10))
        row = [draw(st.integers(0, 2)), x1 * unit, y1 * unit, x2 * unit, y2 * unit]
        rows.append(row + [draw(SCORES)] if scored else row)
    return rows


PAGE_SETS = st.lists(st.tuples(boxes(False), boxes(True)), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(PAGE_SETS)
def test_generated_sets_equal_pycocotools_and_both_paths_agree(monkeypatch, rows):
    _equal_pycocotools_on_both_paths(monkeypatch, [page(reference, prediction) for reference, prediction in rows], 3)


def _equal_pycocotools_on_both_paths(monkeypatch, pages: list, class_count: int) -> None:
    """The NumPy path's figures are pycocotools', and the compiled path's the same, to the bit."""
    results = {}
    for mode in PATHS:
        monkeypatch.setenv(map_kernel.KERNEL_ENV, mode)
        results[mode] = mean_average_precision(pages, class_count, "coco")
    assert_equals_pycocotools(results["numpy"], pages, class_count)
    assert results["numpy"].per_class == results["always"].per_class
    assert np.array_equal(results["numpy"].pages, results["always"].pages, equal_nan=True)
    assert [getattr(results["numpy"], s) for s in STATS] == [getattr(results["always"], s) for s in STATS]


def test_boxes_whose_areas_underflow_match_as_pycocotools_on_both_paths(monkeypatch):
    """Sides of 1e-170 are positive, but width x height underflows to 0: COCO's `bbIou` divides 0
    by 0 (NaN, which its matching lets through), where the compiled and the plain Python kernels
    raised ZeroDivisionError (`tore evaluate`: an internal error). A normal box beside them."""
    tiny = [1e-170, 1e-170, 2e-170, 2e-170]
    _equal_pycocotools_on_both_paths(monkeypatch, [page([[0, *tiny], [1, 10, 10, 50, 50]], [[0, *tiny, 0.9], [1, 12, 12, 50, 50, 0.8]])], 2)


def _matches_equal(a: PageMatches, b: PageMatches) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(record_columns(a), record_columns(b), strict=True))


def _random_pages(seed: int, count: int, classes: int = 4) -> list:
    """Pages with jittered predictions, misses, extras, ties, unscored boxes and, now and then, a
    page without reference boxes or more than 100 detections of one class."""
    rng = np.random.default_rng(seed)
    pages = []
    for _ in range(count):
        n = int(rng.integers(0, 12)) if rng.random() > 0.1 else 0
        x1, y1 = rng.integers(0, 900, n) * 1.0, rng.integers(0, 900, n) * 1.0
        reference = np.column_stack([x1, y1, x1 + rng.integers(0, 150, n), y1 + rng.integers(0, 150, n)])
        labels = rng.integers(0, classes, n)
        keep = rng.random(n) > 0.15
        extra = int(rng.integers(0, 4)) if rng.random() > 0.05 else 110
        prediction = np.concatenate([reference[keep] + rng.normal(0, 6, (int(keep.sum()), 4)).round(2), rng.integers(0, 1000, (extra, 4)) * 1.0])
        prediction[:, 2:] = np.maximum(prediction[:, 2:], prediction[:, :2])
        predicted_labels = np.concatenate([labels[keep], rng.integers(0, classes, extra)])
        scores = rng.choice([0.3, 0.7, 0.9, np.nan, *rng.random(5).round(3)], len(prediction))
        pages.append(((reference, labels), (prediction, predicted_labels, scores)))
    return pages


def test_ranking_is_a_stable_sort_by_class_then_score_descending():
    """`ranking` (a radix sort by class, then each class's scores in place) against np.lexsort of the
    same keys with the record's position last: records of many classes, most scores tied, in runs
    that are each already ranked (as merged chunks are) and not."""
    rng = np.random.default_rng(7)
    classes = rng.integers(0, 40, 50_000).astype(np.int32)
    scores = rng.choice([0.25, 0.5, 0.75, 1.0, *rng.random(20)], len(classes))
    runs = np.concatenate([np.sort(rng.choice(len(classes), 9, replace=False)), [len(classes)]])
    for order_of_runs in (np.arange(len(classes)), np.concatenate([np.lexsort((-scores[a:b], classes[a:b])) + a
                                                                   for a, b in zip([0, *runs[:-1]], runs)])):
        keys_classes, keys_scores = classes[order_of_runs], scores[order_of_runs]
        expected = np.lexsort((np.arange(len(classes)), -keys_scores, keys_classes))
        assert np.array_equal(ranking(keys_classes, keys_scores), expected)


@pytest.mark.parametrize("distinct", [1, 137, 5_000, 40_000])
def test_match_patterns_give_back_every_records_bits(distinct):
    """Each record's (matched, ignored) pair is its row of the table, and the table holds each pair
    once: few pairs (the table of every rank pair), as many as the records (the sort), values over
    the whole 64 bits; and no records."""
    rng = np.random.default_rng(distinct)
    pairs = rng.integers(0, 2**64, (distinct, 2), dtype=np.uint64)
    pairs[: distinct // 2, 0] = pairs[0, 0]  # shared matched values with different ignored ones
    chosen = rng.integers(0, distinct, 40_000)
    matched, ignored = pairs[chosen, 0], pairs[chosen, 1]
    codes, patterns = match_patterns(matched, ignored)
    assert codes.dtype == CODE_TYPE and patterns.dtype == np.uint64
    assert np.array_equal(patterns[codes, 0], matched) and np.array_equal(patterns[codes, 1], ignored)
    assert len(np.unique(patterns, axis=0)) == len(patterns) == len(np.unique(chosen))
    codes, patterns = match_patterns(np.zeros(0, np.uint64), np.zeros(0, np.uint64))
    assert codes.shape == (0,) and patterns.shape == (0, 2)


@pytest.mark.parametrize("distinct", [1, 300, 20_000])
def test_the_matching_kernels_table_of_match_bits_holds_each_pair_once_in_the_order_first_met(distinct):
    """`map_kernel._encode` as Python runs it (its hash table twice the records, so that probing
    runs long at 20,000 pairs in 40,000 records; the compiled one is held to the NumPy path's
    records by the test below) against the records' own bits: each record's row gives its bits
    back, the rows are distinct and in the order first met."""
    encode = getattr(map_kernel._encode, "py_func", map_kernel._encode)  # the plain function, whether the kernel is loaded or not
    rng = np.random.default_rng(distinct)
    pairs = rng.integers(0, 2**40, (distinct, 2), dtype=np.uint64)
    chosen = rng.integers(0, distinct, 40_000)
    matched, ignored = pairs[chosen, 0], pairs[chosen, 1]
    slots, table, codes = np.full(1 << 17, -1, np.int64), np.zeros((len(chosen), 2), np.uint64), np.zeros(len(chosen), np.int32)
    with np.errstate(over="ignore"):  # the hash's products wrap, as they do compiled
        rows = encode(matched, ignored, len(chosen), slots, table, codes)
    first_met = chosen[np.sort(np.unique(chosen, return_index=True)[1])]
    assert rows == len(first_met) and np.array_equal(table[:rows], pairs[first_met])
    assert np.array_equal(table[codes, 0], matched) and np.array_equal(table[codes, 1], ignored)


def test_a_pages_curves_are_computed_once_for_thresholds_whose_positives_are_the_same():
    """`map_kernel._distinct_thresholds` (the page values skip a threshold whose true and false
    positives are its predecessor's) against the records' columns compared threshold by threshold:
    records where few thresholds differ (IoUs between two of them are rare) and where all do."""
    distinct_thresholds = getattr(map_kernel._distinct_thresholds, "py_func", map_kernel._distinct_thresholds)
    rng = np.random.default_rng(3)
    for _ in range(300):
        count, area = int(rng.integers(0, 6)), int(rng.integers(0, 4))
        reached = rng.integers(0, 11, count)  # a detection matches the thresholds below this
        matched = ((np.uint64(1) << reached.astype(np.uint64)) - np.uint64(1)) << np.uint64(area * 10)
        ignored = rng.choice([0, 2**40 - 1, *rng.integers(0, 2**40, 2)], count).astype(np.uint64)
        if rng.random() < 0.3:
            matched = rng.integers(0, 2**40, count, dtype=np.uint64)
        valid = ~(ignored >> np.uint64(area * 10))
        hits = ((matched >> np.uint64(area * 10)) & valid)
        columns = [(tuple((hits >> np.uint64(t)) & np.uint64(1)), tuple((valid >> np.uint64(t)) & np.uint64(1))) for t in range(10)]
        expected = sum(1 << t for t in range(10) if t == 0 or columns[t] != columns[t - 1])
        assert distinct_thresholds(matched, ignored, count, np.uint64(area * 10)) == expected


def test_each_boxs_area_ranges_are_those_cocoeval_keeps_it_in():
    """`map_kernel._area_masks` against COCOeval's test (`map_numpy`'s: left out below the range's
    low end or above its high one), at the ranges' ends, NaN and infinite areas included."""
    area_masks = getattr(map_kernel._area_masks, "py_func", map_kernel._area_masks)
    ends = np.unique(map_kernel.AREA_RANGES_K.ravel())
    areas = np.concatenate([ends, np.nextafter(ends, -np.inf), np.nextafter(ends, np.inf), [np.nan, np.inf, 0.0, 5e9]])
    masks = np.zeros(len(areas), np.int64)
    area_masks(areas, masks)
    for area, (low, high) in enumerate(map_kernel.AREA_RANGES_K):
        with np.errstate(invalid="ignore"):
            outside = (areas < low) | (areas > high)
        assert np.array_equal((masks >> area) & 1 == 0, outside)


def test_chunks_of_pages_merge_into_the_records_of_all_pages(path):
    pages = _random_pages(1, 40)
    reference = SideBoxes.from_pages([(xyxy, classes, None) for (xyxy, classes), _ in pages])
    prediction = SideBoxes.from_pages([boxes for _, boxes in pages])
    whole = match_pages(reference, prediction, 4, COCO)
    chunks = [(0, 7), (7, 8), (8, 31), (31, 40)]
    parts = [match_pages(SideBoxes.from_pages([(xyxy, classes, None) for (xyxy, classes), _ in pages[a:b]]),
                         SideBoxes.from_pages([boxes for _, boxes in pages[a:b]]), 4, COCO) for a, b in chunks]
    merged = PageMatches.merged(list(parts))
    assert _matches_equal(merged, whole) and summarise(merged, COCO).per_class == summarise(whole, COCO).per_class
    singles = [match_pages(SideBoxes.from_pages([(xyxy, classes, None)]), SideBoxes.from_pages([boxes]), 4, COCO) for (xyxy, classes), boxes in pages]
    assert any(len(part.classes) == 0 for part in singles) and _matches_equal(PageMatches.merged(list(singles)), whole)  # 40 runs, some empty
    emptied = list(parts)
    PageMatches.merged(emptied)
    assert emptied == [] and all(len(part.classes) for part in parts)  # the list is consumed, the runs left as they were
    states = [MapState("coco", (part,), len(part.classes), 0) for part in parts]
    state = MapState.merged([MapState.merged(states[:2]), MapState.merged(states[2:])])
    assert len(state.runs) == 4 and state.boxes == int(whole.boxes.sum())  # kept as runs until read
    assert _matches_equal(state.matches, whole) and state.runs == (state.matches,)  # then merged once, held once


@pytest.mark.parametrize("seed, count, classes", [(2, 300, 4), (5, 40, 1), (11, 200, 7), (13, 3, 2)])
def test_the_compiled_path_writes_the_numpy_records_bit_for_bit(seed, count, classes):
    """The records, then the curves sampled from them (the compiled accumulation keeps no curve, only
    each recall threshold's best precision: `map_kernel._samples`), against the NumPy path."""
    pages = _random_pages(seed, count, classes)
    reference = SideBoxes.from_pages([(xyxy, labels, None) for (xyxy, labels), _ in pages])
    prediction = SideBoxes.from_pages([boxes for _, boxes in pages])
    for convention in (COCO, DOCLING):
        numpy_matches = map_numpy.match_pages(reference, prediction, classes, convention)
        compiled = map_kernel.match_pages(reference, prediction, classes, convention)
        assert _matches_equal(numpy_matches, compiled)  # in page order
        numpy_ranked, compiled_ranked = PageMatches.merged([numpy_matches]), PageMatches.merged([compiled], compiled=True)
        assert _matches_equal(numpy_ranked, compiled_ranked)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(map_numpy.accumulate(numpy_ranked, convention),
                                                              map_kernel.accumulate(compiled_ranked, convention)))


def test_a_larger_generated_set_equals_pycocotools(path):
    pages = _random_pages(3, 120)
    assert_equals_pycocotools(mean_average_precision(pages, 4, "coco"), pages, 4)


# --- the docling convention's rules, written out -----------------------------------------------------------

SQUARE = [0.0, 0.0, 100.0, 100.0]
# Each rule: pages, taxonomy size, expected coco and docling figures (None: undefined) and, where
# the rule is about them, per-class values {class: (ap, ar_100)} and page values.
ONE_PRECISION = 1 / (1 + EPS)  # pycocotools' precision at a first true positive: 1 / (1 + np.spacing(1))
RULES = {
    # IoU 5500 / 10000 = 0.55 exactly: pycocotools' threshold 0.55 takes it, the reference's
    # float32 0.550000011920929 does not (2 thresholds of 10 against 1).
    "iou_exactly_055": ([page([[0, *SQUARE]], [[0, 0, 0, 55, 100, 0.9]])], 1,
                        {"map": 0.2 * ONE_PRECISION, "map_50": ONE_PRECISION, "map_75": 0.0}, {"map": 0.1, "map_50": 1.0, "map_75": 0.0}),
    # 55.000001 is 55.0 in float32: the IoU 0.55000001 passes pycocotools' 0.55 and, rounded, fails the reference's.
    "float32_coordinates": ([page([[0, *SQUARE]], [[0, 0, 0, 55.000001, 100, 0.9]])], 1,
                            {"map": 0.2 * ONE_PRECISION}, {"map": 0.1}),
    # A page without reference boxes scores -1 (None) and counts as -1 in the page statistics; its
    # detection, ranked first, halves the precision of the other page's true positive.
    "page_without_reference": ([page([[0, *SQUARE]], [[0, *SQUARE, 0.5]]), page([], [[0, *SQUARE, 0.9]])], 1,
                               {"map": 0.5, "mar_100": 1.0}, {"map": 0.5, "mar_100": 1.0},
                               None, [(ONE_PRECISION, ONE_PRECISION, ONE_PRECISION), (None, None, None)]),
    # A class only predicted (1) is undefined and left out of the mean; one on neither side (2) has no value.
    "class_only_predicted": ([page([[0, *SQUARE]], [[0, *SQUARE, 0.5], [1, 300, 300, 400, 400, 0.9]])], 3,
                             {"map": ONE_PRECISION}, {"map": 1.0}, {0: (ONE_PRECISION, 1.0), 1: (None, None)}),
    # A class only in the reference (1) scores 0 and pulls the mean down.
    "class_only_in_reference": ([page([[0, *SQUARE], [1, 300, 300, 400, 400]], [[0, *SQUARE, 0.5]])], 2,
                                {"map": ONE_PRECISION / 2, "mar_100": 0.5}, {"map": 0.5, "mar_100": 0.5}, {0: (ONE_PRECISION, 1.0), 1: (0.0, 0.0)}),
    # Unscored boxes count 1.0 each: the ranking is the file order, false positive first here.
    "unscored_in_file_order": ([page([[0, *SQUARE]], [[0, 500, 500, 600, 600, None], [0, *SQUARE, None]])], 1,
                               {"map": 0.5}, {"map": 0.5}),
    "unscored_reversed": ([page([[0, *SQUARE]], [[0, *SQUARE, None], [0, 500, 500, 600, 600, None]])], 1,
                          {"map": ONE_PRECISION}, {"map": 1.0}),
    # Scores 0.3 and 0.30000000001 differ in float64 and tie in float32, where the file order decides.
    "float32_score_tie": ([page([[0, *SQUARE]], [[0, *SQUARE, 0.3], [0, 500, 500, 600, 600, 0.30000000001]])], 1,
                          {"map": 0.5}, {"map": 1.0}),
    # 101 detections of a class on a page: only the 100 best count (the true positive, ranked 101st, is dropped).
    "more_than_100_detections": ([page([[0, *SQUARE]], [[0, 1000 + 3 * k, 0, 1002 + 3 * k, 2, 0.9] for k in range(100)] + [[0, *SQUARE, 0.1]])], 1,
                                 {"map": 0.0, "mar_100": 0.0, "mar_10": 0.0}, {"map": 0.0, "mar_100": 0.0}),
    # ... and ranked 100th it counts, at precision 1/100 (recall 1 only from 100 detections on).
    "the_100th_detection_counts": ([page([[0, *SQUARE]], [[0, 1000 + 3 * k, 0, 1002 + 3 * k, 2, 0.9] for k in range(99)] + [[0, *SQUARE, 0.1]])], 1,
                                   {"map": 1 / (100 + EPS), "mar_10": 0.0, "mar_100": 1.0}, {"map": float(np.float32(0.01)), "mar_10": 0.0, "mar_100": 1.0}),
    # Zero-area boxes never match, not even an identical copy; area 0 is "small".
    "zero_area": ([page([[0, 10, 10, 10, 50]], [[0, 10, 10, 10, 50, 0.9]])], 1,
                  {"map": 0.0, "map_small": 0.0, "map_large": None}, {"map": 0.0, "map_small": 0.0, "map_large": None}),
    # Boxes past the page are used as given: [-50, 0, 50, 100] against the square has IoU 1/3 (clipped, it would be 0.5).
    "past_the_page": ([page([[0, -50, 0, 50, 100]], [[0, *SQUARE, 0.9]])], 1, {"map": 0.0}, {"map": 0.0}),
    # Area 32 x 32 = 1024 is both small and medium (the ranges include both ends).
    "area_on_a_range_edge": ([page([[0, 0, 0, 32, 32]], [[0, 0, 0, 32, 32, 0.9]])], 1,
                             {"map_small": ONE_PRECISION, "map_medium": ONE_PRECISION, "map_large": None},
                             {"map_small": 1.0, "map_medium": 1.0, "map_large": None}),
}


def _expected(convention: str, rule: tuple) -> tuple[dict, dict | None, list | None]:
    pages, classes, coco, docling, *rest = rule
    per_class, page_values = (rest + [None, None])[:2]
    figures = coco if convention == "coco" else {field: None if v is None else float(np.float32(v)) for field, v in docling.items()}
    if convention == "docling" and per_class:
        per_class = {label: tuple(None if v is None else float(np.float32(v)) for v in values) for label, values in per_class.items()}
    if convention == "docling" and page_values:
        page_values = [tuple(None if v is None else float(np.float32(v)) for v in values) for values in page_values]
    return figures, per_class, page_values


@pytest.mark.parametrize("convention", ["coco", "docling"])
@pytest.mark.parametrize("name", RULES)
def test_rules_of_each_convention(name, convention, path):
    rule = RULES[name]
    result = mean_average_precision(rule[0], rule[1], convention)
    figures, per_class, page_values = _expected(convention, rule)
    for field, value in figures.items():
        actual = getattr(result, field)
        assert (actual is None) if value is None else actual == pytest.approx(value, abs=TOLERANCE), (field, actual, value)
    if per_class is not None:
        assert result.per_class.keys() == per_class.keys()
        for label, values in per_class.items():
            assert result.per_class[label] == pytest.approx(values, abs=TOLERANCE)
    if page_values is not None:
        for row, expected in zip(result.pages.tolist(), page_values, strict=True):
            assert all((e is None and math.isnan(v)) or v == pytest.approx(e, abs=TOLERANCE) for v, e in zip(row, expected)), (row, expected)
    if convention == "coco":
        assert_equals_pycocotools(result, rule[0], rule[1])


def test_page_statistics_count_undefined_pages_as_minus_one():
    result = mean_average_precision(RULES["page_without_reference"][0], 1, "docling")
    stats = result.page_stats["map"]
    assert (stats.total, stats.mean, stats.median, stats.std) == (2, 0.0, 0.0, math.sqrt(2))
    assert stats.hist == [0.0] * 19 + [1.0] and stats.bins[-1] == 1.0  # the -1 page is outside the histogram


PAGE_VALUES = st.one_of(st.floats(-1, 1, allow_nan=False), st.sampled_from([-1.0, 0.0, 1.0, 0.5, 1e-300, 3e-17]),
                        st.floats(0, 1, width=32).map(float))


@settings(max_examples=300, deadline=None)
@given(st.lists(PAGE_VALUES, min_size=1, max_size=40))
def test_page_statistics_are_those_of_python_s_statistics_module(values):
    """The reference's `compute_stats` uses `statistics.mean` and `statistics.stdev`: the same bits."""
    import statistics

    stats = page_statistics(values)
    assert stats.mean == statistics.mean(values) and stats.median == statistics.median(values)
    assert stats.std == (statistics.stdev(values) if len(values) > 1 else 0.0)


def test_the_docling_thresholds_are_torch_float32():
    assert DOCLING.iou_thresholds[1] == 0.550000011920929 and DOCLING.iou_thresholds[6] == 0.800000011920929
    # torch.linspace(0, 1, 101) counts down from 1 in its second half: its 0.53 is not float32(0.53)
    assert DOCLING.recall_thresholds[53] == 0.5300000309944153 != float(np.float32(0.53)) and COCO.iou_thresholds[1] == 0.55
    assert list(DOCLING.iou_thresholds) == [float(np.float32(v)) for v in np.linspace(0.5, 0.95, 10)]


def test_the_path_switch_takes_only_its_three_values(monkeypatch):
    monkeypatch.setenv(map_kernel.KERNEL_ENV, "fast")
    with pytest.raises(ValueError, match="TORE_MAP_KERNEL must be 'auto', 'numpy' or 'always', not 'fast'"):
        mean_average_precision([page([], [])], 1)


def test_wrong_calls_say_what_is_wrong():
    with pytest.raises(ValueError, match="unknown mAP convention 'voc': expected one of coco, docling"):
        convention_named("voc")
    one = SideBoxes.from_pages([(np.zeros((0, 4)), np.zeros(0, np.int64), None)])
    with pytest.raises(ValueError, match="1 reference pages but 2 prediction pages"):
        match_pages(one, SideBoxes.from_pages([(np.zeros((0, 4)), np.zeros(0, np.int64), None)] * 2), 1, COCO)
    labelled = SideBoxes.from_pages([(np.array([SQUARE]), np.array([3]), None)])
    with pytest.raises(ValueError, match=r"prediction: class indices must lie in 0..2, got 3..3"):
        match_pages(one, labelled, 3, COCO)
    with pytest.raises(ValueError, match=r"reference: 1 classes but boxes of shape \(2, 4\)"):
        match_pages(SideBoxes(np.array([0, 1]), np.zeros((2, 4)), np.array([0]), None), one, 3, COCO)
    with pytest.raises(ValueError, match="reference: page offsets must rise from 0 to the 1 boxes"):
        match_pages(SideBoxes(np.array([0, 2]), np.zeros((1, 4)), np.array([0]), None), one, 3, COCO)


# --- real data ----------------------------------------------------------------------------------------------


def _real_sets(tmp_path_factory) -> dict[str, tuple[list, list[str]]]:
    """Real layout pairs of ../shared/data (those present): a docling layout model against another's
    scored predictions; OmniDocBench's ground truth against a real detector's scores (classes
    missing on one side); DocLayNet ground truth against SmolDocling's unscored DocTags (no class in
    common); the reference package's own fixture."""
    sets = {}
    layouts = shared_path("data", "layouts")
    models = layouts / "docling_two_layout_models"
    reference, prediction = load_pair(models / "coco_results_pre_heron_default_layout_model.json", models / "coco_results_heron_layout_model.json",
                                      coco_images=models / "coco_images_and_categories.json")
    sets["docling_heron_vs_pre_heron"] = reference, prediction
    coco = shared_path("data", "omnidocbench", "coco")
    sets["omnidocbench_eval10"] = load_pair(coco / "gt_eval10.coco.json", coco / "pred_eval10.coco_results.json")
    samples = layouts / "doclaynet_readme_example_and_smoldocling"
    page_id = "132a855ee8b23533d8ae69af0049c038171a06ddfcac892c3c6d7e6b4091c642"
    folder = tmp_path_factory.mktemp("smoldocling")
    shutil.copy(samples / f"smoldocling_{page_id}.dt", folder / f"{page_id}.png.dt")
    sets["doclaynet_vs_smoldocling_unscored"] = load_pair(samples / "doclaynet_gt_132a855_from_readme.coco.json", folder)
    out = {}
    for name, (reference, prediction) in sets.items():
        taxonomy = list(dict.fromkeys(reference.class_list() + prediction.class_list()))
        out[name] = layout_pages(reference, prediction, taxonomy), taxonomy
    fixture = json.loads((layouts / "docling_metrics_layout_dlnv1" / "dlnv1_t1_preds_score.json").read_text())
    rows = [[[box["category_id"], *box["bbox"]] + ([box.get("score")] if side == "page_resolution_b" else []) for box in fixture[side]]
            for side in ("page_resolution_a", "page_resolution_b")]  # its category ids start at 0
    out["docling_metrics_fixture"] = [page(*rows)], [str(k) for k in range(18)]
    return out


@pytest.fixture(scope="module")
def real_sets(tmp_path_factory):
    return _real_sets(tmp_path_factory)


@pytest.mark.parametrize("name", ["docling_heron_vs_pre_heron", "omnidocbench_eval10", "doclaynet_vs_smoldocling_unscored", "docling_metrics_fixture"])
def test_real_data_equals_pycocotools(real_sets, name, path):
    pages, taxonomy = real_sets[name]
    result = mean_average_precision(pages, len(taxonomy), "coco")
    assert_equals_pycocotools(result, pages, len(taxonomy))
    if name == "docling_metrics_fixture":
        assert result.map == pytest.approx(1.0, abs=1e-15)  # its upstream test expects 1.0


# --- against the docling reference itself (when its environment is present) ----------------------------------


@pytest.fixture(scope="module")
def docling_runs(tmp_path_factory):
    """Every docling case of this module, run once by the reference: the rules, generated sets and
    the real data."""
    cases = {f"rule_{name}": (rule[0], [str(k) for k in range(rule[1])]) for name, rule in RULES.items()}
    cases.update({f"generated_{seed}": (_random_pages(seed, 25), [str(k) for k in range(4)]) for seed in range(10, 20)})
    try:
        cases.update({f"real_{name}": value for name, value in _real_sets(tmp_path_factory).items()})
    except pytest.skip.Exception:
        pass
    results = run_docling_reference([docling_case(pages, taxonomy) for pages, taxonomy in cases.values()])
    return {name: (pages, taxonomy, result) for (name, (pages, taxonomy)), result in zip(cases.items(), results)}


def test_docling_convention_equals_the_reference(docling_runs, path):
    for name, (pages, taxonomy, expected) in docling_runs.items():
        try:
            assert_equals_docling(mean_average_precision(pages, len(taxonomy), "docling"), expected, taxonomy)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error
    assert len(docling_runs) >= len(RULES) + 10


HUGE = [[0, -1e300, -1e300, 1e300, 1e300, 0.9], [0, 10, 10, 50, 50, 0.8], [0, 60, 60, 90, 90, 1e308], [0, -1e308, 5, 1e308, 5, 0.5]]


@pytest.mark.parametrize("convention", ["coco", "docling"])
def test_boxes_and_scores_beyond_the_float_range_warn_nothing_and_match_as_the_references(path, convention):
    """Issue 42 C6 (map_types, map_numpy, map_kernel): a box [-1e300, -1e300, 1e300, 1e300] (its area
    overflows float64, its coordinates float32), a score of 1e308 (beyond float32) and a box whose
    width overflows, on both sides; COCO convention = pycocotools, whose Python floats and C doubles
    overflow to infinity silently; both paths give the same numbers; NumPy warns nothing."""
    import warnings

    pages = [page([[0, 10, 10, 50, 50], [0, -1e300, -1e300, 1e300, 1e300], [0, 60, 60, 90, 90]], HUGE), page([[0, 0, 0, 5, 5]], HUGE[:1])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (numpy's overflow) fails the test
        result = mean_average_precision(pages, 1, convention)
    if convention == "coco":
        assert_equals_pycocotools(result, pages, 1)
    other = "numpy" if path == "always" else "always"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(map_kernel.KERNEL_ENV, other)
        again = mean_average_precision(pages, 1, convention)
    assert [getattr(result, s) for s in STATS] == [getattr(again, s) for s in STATS] and result.per_class == again.per_class
