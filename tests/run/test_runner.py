"""Dataset evaluation against the conformance vectors, determinism across workers, drill-down."""

from __future__ import annotations

import dataclasses
import io
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tore_engine as tore
from tests.brute_force import confusion as brute_confusion
from tests.brute_force import pixel_sets as brute_sets
from tests.helpers import layout_json, load_vector, one_page, ranked_pages, shared_path, small_layout
from tests.metrics.oracles import coco_oracle, layout_pages, record_columns
from tore_engine.api import load_pair
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet
from tore_engine.core.taxonomy import resolve_taxonomy
from tore_engine.engine import page_kernel, sweep_grid
from tore_engine.formats.native import from_document as from_native
from tore_engine.metrics.map_report import DUAL_TAXONOMY, NOTHING_TO_RANK, SWITCHED_OFF
from tore_engine.metrics.rates import f1_score
from tore_engine.metrics.sweep import MIN_SCORES
from tore_engine.results.documents import subset_evaluation
from tore_engine.run import runner
from tore_engine.run.runner import evaluate_dataset


def close(actual, expected) -> bool:
    """Pixel-count tolerance of docs/algorithm.md#exactness-and-determinism: |a - b| <= 1e-9 * max(1, |b|)."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    return actual.shape == expected.shape and bool(np.all(np.abs(actual - expected) <= 1e-9 * np.maximum(1, np.abs(expected))))


def ratios_close(actual, expected) -> bool:
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    return actual.shape == expected.shape and bool(np.all(np.abs(actual - expected) <= 1e-9))


@pytest.fixture(scope="module")
def paper():
    data = load_vector("tore_paper_example.json")
    return data, from_native(data["reference"], "gt.json"), from_native(data["prediction"], "model.json")


@pytest.fixture(scope="module")
def public():
    pages = load_vector("tore_public_pages.json")
    expected = load_vector("tore_public_expected.json")
    return expected, from_native(pages["reference"], "gt.json"), from_native(pages["prediction"], "model.json")


def exact_times(evaluation, common: int) -> list[list[int]]:
    exact = evaluation.matrices.exact
    assert common % exact.denominator == 0
    return [[n * (common // exact.denominator) for n in row] for row in exact.numerators]


@pytest.mark.parametrize("mode", ["single", "dual"])
def test_paper_example_exact_fractions(paper, mode):
    data, reference, prediction = paper
    expected = data["expected"] if mode == "single" else data["expected"]["dual"]
    evaluation = evaluate_dataset(reference, prediction, taxonomy=mode)
    assert evaluation.matrices.classes == expected["classes"]
    matrices = evaluation.matrices
    assert matrices.exact.fractions() == [[Fraction(v) for v in row] for row in expected["confusion_exact"]]
    assert matrices.full.recall.tolist() == [[float(Fraction(v)) for v in row] for row in expected["recall_exact"]]
    assert matrices.full.precision.tolist() == [[float(Fraction(v)) for v in row] for row in expected["precision_exact"]]
    assert matrices.reduced.confusion.tolist() == expected["reduced"]["confusion"] == [[0, 0], [0, 15]]


def test_paper_example_rounds_to_the_published_tables(paper):
    data, reference, prediction = paper
    published = data["expected"]["published_2dp"]
    matrices = evaluate_dataset(reference, prediction).matrices.full
    for kind in ("confusion", "recall", "precision"):
        block = getattr(matrices, kind)[1:, 1:]
        assert np.round(block, 2).tolist() == published[kind]


def test_paper_example_report_equals_expected(paper):
    data, reference, prediction = paper
    expected = data["expected"]
    report = evaluate_dataset(reference, prediction, map="off").to_json()  # TORE's vector: without mAP's note on unscored boxes
    for key in ("mode", "classes", "pages", "pixels", "warnings"):
        assert report[key] == expected[key]
    assert report["trimmed"]["rows"] == expected["trimmed"]["rows"] == ["A", "B", "C", "D"]
    for kind in ("confusion", "recall", "precision"):
        assert ratios_close(report["trimmed"][kind], expected["trimmed"][kind])
    for name, scores in expected["per_class"].items():
        for metric, value in scores.items():
            assert report["per_class"][name][metric] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("mode", ["single", "dual"])
def test_public_vectors_match_the_reference_implementation(public, mode):
    expected_all, reference, prediction = public
    expected = expected_all if mode == "single" else expected_all["dual"]
    evaluation = evaluate_dataset(reference, prediction, taxonomy=mode)
    report = evaluation.to_json()
    assert report["classes"] == expected["classes"]
    assert (report["pages"], report["pixels"]) == (expected["pages"], expected["pixels"]) == (60, 63037500)
    assert exact_times(evaluation, expected["exact"]["L"]) == expected["exact"]["confusion_times_L"]
    assert close(report["matrices"]["confusion"], expected["matrices"]["confusion"])
    for kind in ("recall", "precision"):
        assert ratios_close(report["matrices"][kind], expected["matrices"][kind])
    assert report["trimmed"]["rows"] == expected["trimmed"]["rows"]
    assert report["trimmed"]["columns"] == expected["trimmed"]["columns"]
    assert close(report["trimmed"]["confusion"], expected["trimmed"]["confusion"])
    assert close(report["reduced"]["confusion"], expected["reduced"]["confusion"])
    assert ratios_close(report["reduced"]["recall"], expected["reduced"]["recall"])
    if mode == "single":
        for name, scores in expected["per_class"].items():
            for metric, value in scores.items():
                assert report["per_class"][name][metric] == pytest.approx(value, abs=1e-9)
    else:
        assert report["per_class"] is None


def test_public_page_matrices_match(public):
    expected, reference, prediction = public
    evaluation = evaluate_dataset(reference, prediction)
    for index, page_id in enumerate(evaluation.page_ids):
        assert close(evaluation.page_matrix(index), expected["page_confusion"][page_id]), page_id


def test_reduced_matrix_is_identical_in_single_and_dual_mode(public):
    _, reference, prediction = public
    single = evaluate_dataset(reference, prediction, taxonomy="single").matrices
    dual = evaluate_dataset(reference, prediction, taxonomy="dual").matrices
    assert single.reduced_exact == dual.reduced_exact
    assert single.reduced.confusion.tobytes() == dual.reduced.confusion.tobytes()


def test_dual_mode_block_structure(public):
    expected, reference, prediction = public
    evaluation = evaluate_dataset(reference, prediction, taxonomy="dual")
    confusion = evaluation.matrices.full.confusion
    n = len(reference.class_list())
    assert not confusion[1 : n + 1, 1 : n + 1].any()  # reference x reference: empty
    assert not confusion[n + 1 :, :].any()  # prediction classes are never rows
    assert not confusion[:, 1 : n + 1].any()  # reference classes are never columns
    both = expected["dual"]["reduced"]["confusion"][1][1]  # pixels that are Foreground on both sides
    assert both > 0 and confusion[1 : n + 1, n + 1 :].sum() == pytest.approx(both, rel=1e-12)


@pytest.mark.parametrize("workers", [2, 3])
def test_same_bits_for_any_number_of_workers(public, workers):
    _, reference, prediction = public
    one = evaluate_dataset(reference, prediction, workers=1).to_json()
    many = evaluate_dataset(reference, prediction, workers=workers).to_json()
    assert one == many


def test_a_small_job_runs_in_this_process_unless_it_is_large_in_pages_or_boxes(public, monkeypatch):
    """The default (no TORE_POOL): below POOL_AFTER_PAGES pages, and boxes counted as pages of
    BOXES_A_PAGE, no pool is started, the result the same bits; at the threshold either way, it is."""
    monkeypatch.delenv(runner.POOL_ENV)
    _, reference, prediction = public
    pools = []
    real_pool = runner.worker_pool
    monkeypatch.setattr(runner, "worker_pool", lambda workers, **options: pools.append(workers) or real_pool(workers, **options))
    assert evaluate_dataset(reference, prediction, workers=2).to_json() == evaluate_dataset(reference, prediction, workers=1).to_json()
    assert pools == []
    pages, boxes = len(reference.pages), reference.box_count() + prediction.box_count()
    monkeypatch.setattr(runner, "POOL_AFTER_PAGES", max(pages, boxes // runner.map_kernel.BOXES_A_PAGE) + 1)
    assert runner.local_workers(2, reference, prediction, pages) == 1
    monkeypatch.setattr(runner, "POOL_AFTER_PAGES", pages)
    assert runner.local_workers(2, reference, prediction, pages) == 2
    monkeypatch.setattr(runner, "POOL_AFTER_PAGES", boxes // runner.map_kernel.BOXES_A_PAGE)
    assert runner.local_workers(2, reference, prediction, 1) == 2  # a few pages of many boxes
    evaluate_dataset(reference, prediction, workers=2)
    assert pools == [2]
    monkeypatch.setenv(runner.POOL_ENV, "always")
    monkeypatch.setattr(runner, "POOL_AFTER_PAGES", 10**9)
    assert runner.local_workers(2, reference, prediction, 1) == 2


def test_a_pool_of_a_single_taxonomy_loads_the_box_outcome_kernel_first(public, monkeypatch):
    """TIDE's decisions are made in the workers of a single taxonomy only: its kernel is loaded
    before the pool forks then (`box_outcomes.preload_for_pool`), never for a dual one."""
    _, reference, prediction = public
    preloads = []
    monkeypatch.setattr(runner.box_outcomes, "preload_for_pool", lambda: preloads.append(True))
    evaluate_dataset(reference, prediction, workers=2, taxonomy="single")
    assert preloads == [True]
    evaluate_dataset(reference, prediction, workers=2, taxonomy="dual")
    assert preloads == [True]


def test_a_dense_first_batch_reserves_a_bounded_join():
    """The cells' columns are reserved from the first batch's cells a page, at most
    `CELLS_RESERVED_AT_MOST` rows: a first page of 4,096 cells in a job of a billion pages does not
    ask for terabytes, and the columns grow past the reservation as batches come."""
    reference = small_layout("gt", [("p", [{"label": "a", "bbox": [0, 0, 5, 5]}])])
    page = reference.pages[0]
    outcome = runner.evaluate_batch([(page, page)], resolve_taxonomy(reference, reference))
    dense = dataclasses.replace(outcome, cells=np.arange(4096, dtype=np.int32), values=np.ones(4096), bounds=np.array([0, 4096]))
    join = runner.BatchJoin(10**9, 1, 1)
    assert runner.BatchJoin.CELLS_RESERVED_AT_MOST < 2 * 4096 * 10**9
    for _ in range(3):
        join.take(dense)
    offsets, cells, values = join.cells()
    assert np.array_equal(offsets, [0, 4096, 8192, 12288]) and np.array_equal(cells, np.tile(np.arange(4096), 3)) and values.sum() == 3 * 4096


def test_a_job_of_polygons_weighs_its_rows_too(monkeypatch):
    """Ten pages of one triangle a side (7 pixel rows each): too few boxes for the pool, but their
    140 rows, counted as pages of POLYGON_ROWS_A_PAGE rows, reach it."""
    monkeypatch.delenv(runner.POOL_ENV, raising=False)
    triangle = [(2, 1.5), (9, 4), (3, 7.2)]
    pages = [tore.Page(f"p{k}", 20, 20, ["a"], np.array([[2, 1.5, 9, 7.2]]), polygons=[triangle]) for k in range(10)]
    reference, prediction = LayoutSet("gt", pages), LayoutSet("model", pages)
    monkeypatch.setattr(runner, "POLYGON_ROWS_A_PAGE", 7)
    monkeypatch.setattr(runner, "POOL_AFTER_PAGES", 20)  # 20 boxes are 0 pages of BOXES_A_PAGE; 140 rows, 20 pages
    assert runner.local_workers(2, reference, prediction, len(pages)) == 2
    monkeypatch.setattr(runner, "POOL_AFTER_PAGES", 21)
    assert runner.local_workers(2, reference, prediction, len(pages)) == 1


def test_same_bits_with_a_caller_supplied_executor(public):
    _, reference, prediction = public
    one = evaluate_dataset(reference, prediction, workers=1)
    with ThreadPoolExecutor(4) as executor:
        threaded = evaluate_dataset(reference, prediction, workers=8, executor=executor)
    assert one.to_json() == threaded.to_json()
    assert one.contribution_value.tobytes() == threaded.contribution_value.tobytes()


class _AtOnce:
    """An executor that runs each task as it is submitted (`as_completed` then hands them back in
    whatever order the test chooses)."""

    def submit(self, function, *arguments):
        from concurrent.futures import Future

        future = Future()
        future.set_result(function(*arguments))
        return future


@pytest.mark.parametrize("arrival", ["reversed", "shuffled"])
def test_batches_arriving_out_of_order_are_joined_in_page_order(monkeypatch, arrival):
    """`BatchJoin` copies each batch's cells, mAP records and box outcomes as it arrives: whatever
    the order in which the batches complete, every array is the one process's, bit for bit."""
    order = {"reversed": lambda futures: futures[::-1], "shuffled": lambda futures: [futures[k] for k in np.random.default_rng(3).permutation(len(futures))]}
    monkeypatch.setattr(runner, "as_completed", lambda futures: iter(order[arrival](list(futures))))
    monkeypatch.setattr(runner, "MAX_BATCH_PAGES", 1)  # a batch a page
    cases = [case for case in _map_vector_sets() if len(case[1].pages) > 1]
    assert len(cases) >= 3
    for name, reference, prediction in cases:
        one = evaluate_dataset(reference, prediction, workers=1)
        joined = evaluate_dataset(reference, prediction, workers=4, executor=_AtOnce())
        assert one.to_json() == joined.to_json(), name
        for column in ("contribution_offsets", "contribution_cell", "contribution_value"):
            assert getattr(one, column).tobytes() == getattr(joined, column).tobytes(), (name, column)
        if one.box_outcomes is not None:
            for field in dataclasses.fields(one.box_outcomes):
                assert np.array_equal(getattr(one.box_outcomes, field.name), getattr(joined.box_outcomes, field.name), equal_nan=True), (name, field.name)
        if one.map_state is not None:
            for k, (a, b) in enumerate(zip(record_columns(one.map_state.matches), record_columns(joined.map_state.matches), strict=True)):
                assert np.array_equal(a, b, equal_nan=True), (name, k)


def test_missing_prediction_page_is_scored_as_background_and_warned(public):
    _, reference, prediction = public
    full = evaluate_dataset(reference, prediction)
    pruned = LayoutSet(prediction.name, [p for p in prediction.pages if p.id != "page_00013"], prediction.taxonomy)
    missing = evaluate_dataset(reference, pruned)
    assert full.to_json()["matrices"] == missing.to_json()["matrices"]
    new = [w for w in missing.input_warnings if w not in full.input_warnings]
    assert [(w.page, w.box, w.side) for w in new] == [("page_00013", None, "prediction")]
    assert new[0].message == "no prediction for this page; scored as all Background"


def test_pages_for_cell_add_up_to_the_cell(public):
    _, reference, prediction = public
    evaluation = evaluate_dataset(reference, prediction)
    confusion, classes = evaluation.matrices.full.confusion, evaluation.classes
    for row, column in [(0, 0), (10, 10), (10, 1), (1, 0)]:
        pages = ranked_pages(evaluation, "full", classes[row], classes[column])
        assert sum(value for _, value, _ in pages) == pytest.approx(confusion[row, column], rel=1e-12)
        values = [value for _, value, _ in pages]
        assert values == sorted(values, reverse=True)
        assert sum(share for _, _, share in pages) == pytest.approx(1.0)
    assert len(evaluation.pages_for_cell(classes[10], classes[10], limit=3)) == 3


def page(page_id, boxes, width=10, height=10):
    return {"id": page_id, "width": width, "height": height, "boxes": [{"label": l, "bbox": b} for l, b in boxes]}


def test_edge_cases_empty_pages_boxes_over_the_edge_and_degenerate_boxes():
    reference = from_native(layout_json("gt", [page("a", []), page("b", [("x", [-5, -5, 4, 4]), ("y", [8, 8, 30, 30]), ("x", [3, 3, 3, 9])])]), "gt.json")
    prediction = from_native(layout_json("model", [page("a", [("x", [0, 0, 10, 10])]), page("b", [("y", [20, 20, 40, 40])]), page("c", [])]), "model.json")
    evaluation = evaluate_dataset(reference, prediction)
    confusion = evaluation.matrices.full.confusion
    assert evaluation.matrices.classes == ["Background", "x", "y"]
    # page a: 100 background pixels predicted x; page b: 16 x + 4 y pixels predicted Background.
    assert confusion.tolist() == [[80 + 0, 100, 0], [16, 0, 0], [4, 0, 0]]
    events = {(w.page, w.box, w.side, w.message.split(":")[0]) for w in evaluation.input_warnings}
    assert ("b", 0, "reference", "box clipped at the edge of the 10 x 10 page") in events
    assert ("b", 1, "reference", "box clipped at the edge of the 10 x 10 page") in events
    assert ("b", 2, "reference", "box paints no pixel (outside the 10 x 10 page, or zero area after rounding)") in events
    assert ("b", 0, "prediction", "box paints no pixel (outside the 10 x 10 page, or zero area after rounding)") in events
    assert ("c", None, "prediction", "prediction page has no reference page; not scored") in events


def test_prediction_in_another_frame_is_scaled_into_the_reference_frame():
    reference = from_native(layout_json("gt", [page("a", [("x", [0, 0, 5, 10])])]), "gt.json")
    prediction = from_native(layout_json("model", [page("a", [("x", [0, 0, 50, 100])], width=100, height=100)]), "model.json")
    assert evaluate_dataset(reference, prediction).matrices.full.confusion.tolist() == [[50, 0], [0, 50]]


def test_seventy_classes_work_in_dual_mode_beyond_one_word():
    labels = [f"c{k}" for k in range(70)]
    reference = from_native(layout_json("gt", [page("a", [(l, [k % 10, k // 10, k % 10 + 1, k // 10 + 1]) for k, l in enumerate(labels)])], labels), "gt.json")
    prediction = from_native(layout_json("model", [page("a", [(l, [0, 0, 10, 10]) for l in labels[:3]])], labels), "model.json")
    evaluation = evaluate_dataset(reference, prediction, taxonomy="dual")
    assert evaluation.taxonomy.size == 141
    confusion = evaluation.matrices.exact.fractions()
    # Every reference pixel (one label) is predicted {c0, c1, c2}: 1/3 to each.
    assert confusion[1][71] == confusion[70][73] == Fraction(1, 3)
    assert sum(map(sum, confusion)) == 70 + 30  # 70 labelled pixels, 30 Background pixels


# --- pixel counts beyond int64 -------------------------------------------------------------------

SCALE = 250_000_000  # one pixel of the small brute-force page stands for SCALE x SCALE pixels
SMALL_REFERENCE = [(1, [0, 0, 2, 4]), (2, [0, 0, 4, 4]), (3, [1, 1, 3, 3])]  # a left half, b everywhere, c centre
SMALL_PREDICTION = [(1, [0, 0, 4, 2]), (3, [0, 1, 2, 4])]
HUGE_PAGES = 20


def scaled_pages(boxes, count):
    labels = "_abc"
    return [page(f"p{k}", [(labels[c], [v * SCALE for v in bbox]) for c, bbox in boxes], 4 * SCALE, 4 * SCALE) for k in range(count)]


@pytest.fixture(scope="module")
def huge():
    """20 pages of 10^9 x 10^9 pixels, two or three labels a pixel: 2e19 pixels and sums beyond 2^63."""
    reference = from_native(layout_json("gt", scaled_pages(SMALL_REFERENCE, HUGE_PAGES), ["a", "b", "c"]), "gt.json")
    prediction = from_native(layout_json("model", scaled_pages(SMALL_PREDICTION, HUGE_PAGES), ["a", "b", "c"]), "model.json")
    return reference, prediction


def test_huge_pages_are_counted_exactly(huge):
    evaluation = evaluate_dataset(*huge, workers=1)
    small = brute_confusion(4, 4, SMALL_REFERENCE, SMALL_PREDICTION, 4)
    expected = [[value * HUGE_PAGES * SCALE**2 for value in row] for row in small]
    assert evaluation.pixels == HUGE_PAGES * 10**18 == 2 * 10**19
    assert evaluation.matrices.exact.fractions() == expected
    report = evaluation.to_json()
    assert report["pixels"] == 20_000_000_000_000_000_000
    for k, name in enumerate("abc", start=1):
        support, predicted = sum(expected[k]), sum(row[k] for row in expected)
        assert report["per_class"][name]["recall"] == (float(expected[k][k] / support) if support else None)
        assert report["per_class"][name]["precision"] == (float(expected[k][k] / predicted) if predicted else None)
    # Reduced view: |T| a pixel into its Foreground row; every small pixel is Foreground on the reference side.
    truth, predicted = brute_sets(4, 4, SMALL_REFERENCE), brute_sets(4, 4, SMALL_PREDICTION)
    fg_fg = sum(len(t) for row_t, row_p in zip(truth, predicted) for t, p in zip(row_t, row_p) if p != {0})
    fg_bg = sum(len(t) for row_t, row_p in zip(truth, predicted) for t, p in zip(row_t, row_p) if p == {0})
    scale = HUGE_PAGES * SCALE**2
    assert evaluation.matrices.reduced_exact.fractions() == [[0, 0], [fg_bg * scale, fg_fg * scale]]
    assert int(evaluation.page_reduced[0].sum()) == (fg_bg + fg_fg) * SCALE**2


def test_huge_pages_give_the_same_bits_for_any_number_of_workers(huge):
    assert evaluate_dataset(*huge, workers=1).to_json() == evaluate_dataset(*huge, workers=2).to_json()


def test_a_page_of_two_to_the_62_pixels_with_two_labels_is_exact():
    side = 2**31
    boxes = [("a", [0, 0, side, side]), ("b", [0, 0, side, side])]
    reference = from_native(layout_json("gt", [page("p", boxes, side, side)]), "gt.json")
    prediction = from_native(layout_json("model", [page("p", boxes[:1], side, side)]), "model.json")
    evaluation = evaluate_dataset(reference, prediction)
    assert evaluation.pixels == 2**62
    assert evaluation.matrices.reduced_exact.fractions() == [[0, 0], [0, 2**63]]  # |T| = 2 on every pixel
    assert evaluation.matrices.exact.fractions()[2][1] == 2**62  # b missed, predicted a


def test_ten_thousand_boxes_on_one_page_give_a_correct_total():
    rng = np.random.default_rng(7)
    corners = rng.uniform(-20, 1040, (10_000, 2))
    sizes = rng.uniform(1, 300, (10_000, 2))
    labels = [f"c{k}" for k in rng.integers(0, 17, 10_000)]
    boxes = [{"label": l, "bbox": [*c, *(c + s)]} for l, c, s in zip(labels, corners.tolist(), sizes)]
    reference = one_page(boxes, 1025, 1025)
    prediction = one_page(boxes[::-1][:5000], 1025, 1025)
    evaluation = evaluate_dataset(reference, prediction, workers=1)
    numerators = evaluation.matrices.exact.numerators
    # Every reference label's row gets exactly one a pixel: row sums are the supports.
    assert int(np.asarray(numerators, dtype=object).sum()) == evaluation.matrices.exact.denominator * int(evaluation.page_reduced.sum())


# --- mAP and the sweep through the runner ------------------------------------------------------------

KERNEL_PATHS = ("always", "numpy", "per point")  # the sweep kernel, its NumPy path (sweep_grid), or one NumPy run a point


def _use_sweep_path(monkeypatch, path: str) -> None:
    monkeypatch.setenv(page_kernel.KERNEL_ENV, "always" if path == "always" else "numpy")
    if path == "per point":
        monkeypatch.setattr(sweep_grid, "MAX_SUM", 0)  # as for a batch whose sums would not fit in int64


def _counts(counts) -> list[list]:
    return [getattr(counts, name).tolist() for name in ("denominator", "row", "column", "numerator")]


def assert_every_point_is_a_run(reference: LayoutSet, prediction: LayoutSet, **options) -> None:
    """Each point of the sweep: the exact counts and the integer 2x2 matrix of a run with that
    minimum score, and from them the same Foreground and per-class recall, precision and F1, bit
    for bit (compared with ==)."""
    swept = evaluate_dataset(reference, prediction, sweep=True, **options)
    report = swept.report_content().sweep
    for point, min_score in enumerate(MIN_SCORES):
        run = evaluate_dataset(reference, prediction, min_score=min_score, map="off", taxonomy=swept.taxonomy.mode,
                               min_score_side=options.get("min_score_side", "both"))
        assert _counts(swept.sweep_state.counts[point]) == _counts(run.counts), min_score
        assert [int(v) for v in swept.sweep_state.reduced[point].ravel()] == [int(v) for v in run.page_reduced.sum(axis=0).ravel()]
        recall, precision = run.matrices.foreground
        assert (report.foreground.recall[point], report.foreground.precision[point], report.foreground.f1[point]) == \
               (recall, precision, f1_score(precision, recall))
        if run.matrices.per_class is None:
            assert report.per_class is None
            continue
        for name, curve in report.per_class.items():
            scores = run.matrices.per_class[name]
            assert (curve.recall[point], curve.precision[point], curve.f1[point]) == (scores["recall"], scores["precision"], scores["f1"])
    if report.per_class is not None:
        assert list(report.per_class) == evaluate_dataset(reference, prediction, min_score=MIN_SCORES[0], map="off").matrices.present_classes()


def _map_vector_sets() -> list[tuple[str, LayoutSet, LayoutSet]]:
    cases = load_vector("map_public.json")["cases"]
    return [(case["name"], from_native(case["reference"], "gt.json"), from_native(case["prediction"], "model.json")) for case in cases]


def _two_models() -> tuple[LayoutSet, LayoutSet]:
    """Real scored predictions on both sides: docling's pre-Heron layout model as the reference, Heron as the prediction."""
    folder = shared_path("data", "layouts", "docling_two_layout_models")
    return load_pair(folder / "coco_results_pre_heron_default_layout_model.json", folder / "coco_results_heron_layout_model.json",
                     coco_images=folder / "coco_images_and_categories.json")


@pytest.mark.parametrize("path", KERNEL_PATHS)
def test_every_sweep_point_of_the_public_map_vectors_is_a_run(path, monkeypatch):
    _use_sweep_path(monkeypatch, path)
    for _, reference, prediction in _map_vector_sets():
        assert_every_point_is_a_run(reference, prediction)


@pytest.mark.parametrize("path, workers", [("always", 1), ("numpy", 1), ("always", 2)])
def test_every_sweep_point_of_real_scored_predictions_is_a_run(path, workers, monkeypatch):
    _use_sweep_path(monkeypatch, path)
    reference, prediction = _two_models()
    assert reference.pages[0].scores is not None  # both sides scored: the sweep drops reference boxes too, as --min-score does
    assert_every_point_is_a_run(reference, prediction, workers=workers)
    assert_every_point_is_a_run(reference, prediction, taxonomy="dual")  # Foreground only


@pytest.mark.parametrize("path", KERNEL_PATHS)
def test_every_sweep_point_of_the_prediction_side_only_is_a_run(path, monkeypatch):
    _use_sweep_path(monkeypatch, path)
    reference, prediction = _two_models()
    assert_every_point_is_a_run(reference, prediction, min_score_side="prediction")


def test_a_minimum_score_of_the_prediction_side_keeps_the_scored_reference_whole():
    """Issue 36 N4: --min-score-side prediction is the run of the prediction's boxes scored at least t,
    dropped by hand, against the whole reference (itself a scored model's output)."""
    reference, prediction = _two_models()
    threshold = 0.9  # the median score is about 0.96 on both sides
    kept = dataclasses.replace(prediction, pages=[page.above_score(threshold)[0] for page in prediction.pages])
    run = evaluate_dataset(reference, prediction, min_score=threshold, min_score_side="prediction")
    expected = evaluate_dataset(reference, kept)
    assert _counts(run.counts) == _counts(expected.counts)
    assert run.to_json()["per_class"] == expected.to_json()["per_class"] and run.map.figures == expected.map.figures
    dropped = [w for w in run.warnings if "(minimum score)" in w["message"]]
    assert dropped and {w["side"] for w in dropped} == {"prediction"}
    both = evaluate_dataset(reference, prediction, min_score=threshold)
    assert {w["side"] for w in both.warnings if "(minimum score)" in w["message"]} == {"reference", "prediction"}
    assert _counts(both.counts) != _counts(run.counts)
    with pytest.raises(InputError, match="side must be one of both, prediction"):
        evaluate_dataset(reference, prediction, min_score=threshold, min_score_side="reference")


SCORES = st.sampled_from([None, 0.05, 0.1, 0.15, 0.95, 0.0499999, 0.9500001, 1.0, 0.0, 0.42])
BOX = st.tuples(st.sampled_from(["A", "B", "C"]), st.integers(-3, 14), st.integers(-3, 14), st.integers(0, 9), st.integers(0, 9), SCORES)


def _generated_page(page_id: str, boxes: list, width: int, height: int) -> dict:
    return {"id": page_id, "width": width, "height": height,
            "boxes": [{"label": label, "bbox": [x + 0.5 * (x % 2), y, x + w, y + h], **({} if score is None else {"score": score})}
                      for label, x, y, w, h, score in boxes]}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(BOX, max_size=6), st.lists(BOX, max_size=8), st.integers(4, 12), st.integers(4, 12)), min_size=1, max_size=4))
def test_every_sweep_point_of_generated_pages_is_a_run(monkeypatch, pages):
    """Scores at and beside the minimum scores, unscored boxes, scored reference boxes, boxes past
    the page and boxes painting nothing, on both kernel paths."""
    reference = from_native(layout_json("gt", [_generated_page(f"p{k}", ref, w, h) for k, (ref, _, w, h) in enumerate(pages)], ["A", "B", "C"]), "gt.json")
    prediction = from_native(layout_json("model", [_generated_page(f"p{k}", pred, w, h) for k, (_, pred, w, h) in enumerate(pages)]), "model.json")
    for path in KERNEL_PATHS:
        _use_sweep_path(monkeypatch, path)
        assert_every_point_is_a_run(reference, prediction)


def test_every_sweep_point_of_crowded_pages_is_a_run(monkeypatch):
    """Pages of many overlapping boxes of mixed scores: a band of 30 active boxes needs room for
    (2 * 30 + 1) * 20 pairs, more than half of the kernel's first 1,024 table slots, so the table
    grows between bands (`sweep_kernel._sweep_bands` returns, `_sweep_pages` grows it, the sweep
    resumes at that band), several times in the batch."""
    rng = np.random.default_rng(11)
    scores = [None, 0.05, 0.1, 0.15, 0.42, 0.5, 0.66, 0.8, 0.95, 1.0]

    def boxes(count: int) -> list:
        x, y = rng.integers(0, 30, count), rng.integers(0, 30, count)
        w, h = rng.integers(8, 30, count), rng.integers(8, 30, count)
        return [(str(rng.choice(["A", "B", "C", "D", "E"])), int(a), int(b), int(c), int(d), scores[int(rng.integers(len(scores)))])
                for a, b, c, d in zip(x, y, w, h)]

    pages = [(boxes(12), boxes(40), 48, 48) for _ in range(3)]
    reference = from_native(layout_json("gt", [_generated_page(f"p{k}", ref, w, h) for k, (ref, _, w, h) in enumerate(pages)], list("ABCDE")), "gt.json")
    prediction = from_native(layout_json("model", [_generated_page(f"p{k}", pred, w, h) for k, (_, pred, w, h) in enumerate(pages)]), "model.json")
    _use_sweep_path(monkeypatch, "always")
    assert_every_point_is_a_run(reference, prediction)


WIDE_NAMES = [f"c{k}" for k in range(131)]  # three words a label set: the kernel declines, sweep_grid paints
WIDE_BOX = st.tuples(st.sampled_from(["c1", "c62", "c63", "c64", "c65", "c127", "c128", "c130"]), st.integers(-3, 14), st.integers(-3, 14),
                     st.integers(0, 9), st.integers(0, 9), SCORES)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(WIDE_BOX, max_size=6), st.lists(WIDE_BOX, max_size=8), st.integers(4, 12), st.integers(4, 12)), min_size=1, max_size=4))
def test_every_sweep_point_beyond_64_classes_is_a_run(monkeypatch, pages):
    """Classes on both sides of each word's edge, in a 131-class taxonomy: the sweep's NumPy path
    (each page painted once for all points) against a run at each minimum score."""
    reference = from_native(layout_json("gt", [_generated_page(f"p{k}", ref, w, h) for k, (ref, _, w, h) in enumerate(pages)], WIDE_NAMES), "gt.json")
    prediction = from_native(layout_json("model", [_generated_page(f"p{k}", pred, w, h) for k, (_, pred, w, h) in enumerate(pages)]), "model.json")
    _use_sweep_path(monkeypatch, "always")
    painted = []
    monkeypatch.setattr(sweep_grid, "sweep_pairs", lambda *args, sweep_pairs=sweep_grid.sweep_pairs: painted.append(1) or sweep_pairs(*args))
    assert_every_point_is_a_run(reference, prediction)
    assert painted


def test_a_sweep_asked_for_later_is_the_one_made_with_the_evaluation():
    reference, prediction = _two_models()
    later = evaluate_dataset(reference, prediction, min_score=0.5)
    assert later.sweep_state is None
    table = later.sweep()
    made = evaluate_dataset(reference, prediction, min_score=0.5, sweep=True)
    assert table.equals(made.sweep()) and later.to_json()["sweep"] == made.to_json()["sweep"]
    sweep = made.report_content().sweep
    assert len(table) == len(MIN_SCORES) * (1 + len(set(sweep.per_class) | set(sweep.detection.per_class)))  # the Foreground, each class
    # the minimum score does not narrow the sweep: its lowest point is a run at 0.05
    assert made.report_content().sweep.foreground.f1[0] == evaluate_dataset(reference, prediction, sweep=True).report_content().sweep.foreground.f1[0]


def _not_again(*_args):
    raise AssertionError("a sweep made later evaluated its pages again")


def test_a_sweep_asked_for_later_matches_boxes_for_map_again_only_under_a_minimum_score(monkeypatch):
    """Without a minimum score the detection view is the evaluation's own mAP state: the later run
    does not match the boxes again (with one, it must: mAP of all boxes, not of those kept); and
    it never makes the evaluation's own counts again."""
    reference, prediction = _two_models()
    matched = []
    original_map, original_task = runner._map_state, runner.evaluate_task
    monkeypatch.setattr(runner, "_map_state", lambda *args: matched.append(args[2]) or original_map(*args))
    for min_score, matchings in ((None, []), (0.5, ["coco"])):
        later = evaluate_dataset(reference, prediction, min_score=min_score)
        matched.clear()
        monkeypatch.setattr(runner, "evaluate_task", _not_again)
        table = later.sweep()
        monkeypatch.setattr(runner, "evaluate_task", original_task)
        assert sorted(set(matched)) == matchings, min_score
        assert table.equals(evaluate_dataset(reference, prediction, min_score=min_score, sweep=True).sweep())
        assert (later.sweep_state.detection is None) == (min_score is None)


def test_map_is_made_of_the_boxes_left_by_the_minimum_score_and_equals_pycocotools():
    reference, prediction = _two_models()
    for min_score in (None, 0.5):
        result = evaluate_dataset(reference, prediction, min_score=min_score).map
        kept = [LayoutSet(side.name, [page.above_score(min_score)[0] if min_score else page for page in side.pages], side.taxonomy)
                for side in (reference, prediction)]
        taxonomy = evaluate_dataset(reference, prediction).taxonomy.classes
        oracle = coco_oracle(layout_pages(*kept, taxonomy), len(taxonomy))
        assert [_defined(result.figures[name]) for name in oracle["stats"]] == pytest.approx(list(oracle["stats"].values()), abs=1e-12)
        assert {taxonomy[label] for label in oracle["per_class"]} == set(result.per_class)
        for label, values in oracle["per_class"].items():
            assert [_defined(value) for value in result.per_class[taxonomy[label]]] == pytest.approx(values, abs=1e-12)


def _defined(value: float | None) -> float:
    """A figure as pycocotools writes it: -1 where undefined."""
    return -1.0 if value is None else value


def test_map_merged_from_workers_is_the_map_of_one_process():
    reference, prediction = _two_models()
    one, two = (evaluate_dataset(reference, prediction, workers=workers, map="docling") for workers in (1, 2))
    assert one.map.figures == two.map.figures and one.map.per_class == two.map.per_class
    assert np.array_equal(one.map.pages, two.map.pages, equal_nan=True)


def test_map_is_null_with_its_reason_in_dual_taxonomy_when_off_and_with_nothing_to_rank(paper):
    _, reference, prediction = paper
    assert evaluate_dataset(reference, prediction, taxonomy="dual").to_json()["map"] is None
    assert evaluate_dataset(reference, prediction, taxonomy="dual").map_reason == DUAL_TAXONOMY
    assert evaluate_dataset(reference, prediction, map="off").map_reason == SWITCHED_OFF
    empty = [LayoutSet(side.name, [type(page)(page.id, page.width, page.height, [], np.zeros((0, 4)), None) for page in side.pages], side.taxonomy)
             for side in (reference, prediction)]
    nothing = evaluate_dataset(*empty)
    assert (nothing.map, nothing.map_reason, nothing.to_json()["map_reason"]) == (None, NOTHING_TO_RANK, NOTHING_TO_RANK)
    with pytest.raises(InputError, match="unknown mAP convention 'voc': expected one of coco, docling, or off"):
        evaluate_dataset(reference, prediction, map="voc")


# --- each page's scored prediction boxes ---------------------------------------------------------------


def _scored_pages(seed: int, ids: slice = slice(None)):
    """Reference and prediction pages (those of `ids`) with some boxes scored, a reference page
    without its prediction and a prediction page without its reference; the scored boxes of each
    reference page's prediction, counted from the boxes as written."""
    rng = np.random.default_rng(seed)

    def boxes(count: int, scored: bool) -> list[dict]:
        made = [{"label": "text", "bbox": [1, 1, 5, 5]} for _ in range(count)]
        for box in made:
            if scored and rng.random() < 0.6:
                box["score"] = float(rng.random())
        return made

    every_id = [f"p{k}" for k in range(12)]
    predicted = {page_id: boxes(int(rng.integers(0, 6)), scored=True) for page_id in every_id if page_id != "p3"}
    predicted["extra"] = boxes(4, scored=True)
    chosen = every_id[ids]
    reference = small_layout("gt", [(page_id, [{"label": "text", "bbox": [2, 2, 6, 6]}]) for page_id in chosen])
    prediction = small_layout("model", [(page_id, page) for page_id, page in predicted.items() if page_id in chosen or page_id == "extra"])
    expected = [sum("score" in box for box in predicted.get(page_id, [])) for page_id in chosen]
    return reference, prediction, expected


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("options", [{}, {"workers": 2}, {"min_score": 0.5}, {"map": "off", "taxonomy": "dual"}])
def test_each_pages_scored_prediction_boxes_are_counted(seed, options):
    reference, prediction, expected = _scored_pages(seed)
    evaluation = evaluate_dataset(reference, prediction, **options)
    assert evaluation.page_scored.tolist() == expected  # before the minimum score, whatever the run
    assert evaluation.scored_boxes == sum(expected)


def test_scored_boxes_follow_a_merge_and_a_subset():
    _, _, expected = _scored_pages(7)
    first, second = (evaluate_dataset(*_scored_pages(7, part)[:2]) for part in (slice(0, 5), slice(5, None)))
    assert first.merge(second).page_scored.tolist() == expected
    whole = evaluate_dataset(*_scored_pages(7)[:2])
    chosen = np.array([1, 3, 4])
    assert subset_evaluation(whole, chosen, whole.counts).page_scored.tolist() == [expected[k] for k in chosen]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream, shown", [(io.StringIO, False), (_Terminal, True)])
def test_progress_bars_only_on_a_terminal(stream, shown, monkeypatch):
    """The bars (tqdm, imported only then) are drawn on a terminal, and neither is made elsewhere."""
    monkeypatch.setattr(sys, "stderr", stream())
    with runner.terminal_reading(100), runner.terminal_progress(10) as progress:
        assert (progress is not None) is shown
        if progress is not None:
            progress(5, 10)
    assert ("0/10" in sys.stderr.getvalue() and "reading" in sys.stderr.getvalue()) is shown
