"""The compiled page kernel against the NumPy path (bit for bit) and the per-pixel brute force, and
when `evaluate_batch` uses it (cold and warm cache, small and large jobs, pools, no numba)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import synthetic_layouts
from tests.brute_force import confusion as brute_confusion
from tests.helpers import REPOSITORY, load_vector
from tore_engine.core import jit
from tore_engine.core.polygons import Polygons
from tore_engine.engine import page_kernel as kernel
from tore_engine.engine.raster import PageTask, PixelExtents, pair_table
from tore_engine.formats.native import from_document as from_native
from tore_engine.metrics.matrices import ExactMatrix
from tore_engine.run.runner import evaluate_dataset, numpy_cells


@pytest.fixture
def always(monkeypatch):
    """The kernel whenever it applies, compiling or loading at once."""
    monkeypatch.setenv(kernel.KERNEL_ENV, kernel.ALWAYS)


def task(page_id: str, width: int, height: int, reference: list, prediction: list) -> PageTask:
    def side(boxes):
        classes = np.array([c for c, _ in boxes], dtype=np.int64)
        return classes, PixelExtents.from_boxes(np.array([b for _, b in boxes], dtype=float).reshape(-1, 4), width, height)

    return PageTask(page_id, width, height, *side(reference), *side(prediction))


def assert_same_bits(compiled: kernel.Cells | None, expected: kernel.Cells) -> None:
    """Every array equal in dtype and bits (floats compared as their 64-bit patterns)."""
    assert compiled is not None
    for actual, wanted in zip(compiled[:4], expected[:4]):
        assert actual.dtype == wanted.dtype and actual.shape == wanted.shape
        assert np.array_equal(actual.view(np.uint64) if actual.dtype == np.float64 else actual, wanted.view(np.uint64) if wanted.dtype == np.float64 else wanted)
    counts, wanted_counts = compiled[4], expected[4]
    assert counts.class_count == wanted_counts.class_count
    for field in ("denominator", "row", "column", "numerator"):
        actual, wanted = getattr(counts, field), getattr(wanted_counts, field)
        assert actual.dtype == wanted.dtype and np.array_equal(actual, wanted)


def brute_reduced(matrix: list[list[Fraction]]) -> list[list[Fraction]]:
    """The 2x2 Background/Foreground blocks of a full matrix."""
    k = len(matrix)
    return [
        [matrix[0][0], sum(matrix[0][1:])],
        [sum(matrix[i][0] for i in range(1, k)), sum(matrix[i][j] for i in range(1, k) for j in range(1, k))],
    ]


# --- hypothesis: random batches of small pages ---------------------------------------------------

coordinate = st.floats(-4, 26, allow_nan=False).map(lambda v: round(v * 4) / 4)  # beyond every edge


@st.composite
def batches(draw):
    """1-4 pages of one taxonomy: single (classes 1..K-1 on both sides) or dual (reference
    1..R, prediction R+1..K-1), up to 70 classes; overlapping boxes, empty sides."""
    class_count = draw(st.sampled_from([2, 3, 6, 17, 33, 63, 64, 65, 70]))
    dual = class_count >= 3 and draw(st.booleans())
    split = draw(st.integers(1, class_count - 2)) if dual else class_count - 1
    reference_classes = st.integers(1, split)
    prediction_classes = st.integers(split + 1, class_count - 1) if dual else reference_classes

    def boxes(classes):
        return st.lists(st.tuples(classes, st.lists(coordinate, min_size=4, max_size=4)), max_size=9)

    pages = []
    for k in range(draw(st.integers(1, 4))):
        width, height = draw(st.integers(1, 20)), draw(st.integers(1, 20))
        pages.append((f"p{k}", width, height, draw(boxes(reference_classes)), draw(boxes(prediction_classes))))
    return class_count, pages


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches())
def test_kernel_numpy_and_brute_force_agree(always, batch):
    class_count, pages = batch
    tasks = [task(*page) for page in pages]
    expected = numpy_cells(tasks, class_count)
    compiled = kernel.evaluate(tasks, class_count)
    if class_count > kernel.MAX_CLASSES:
        assert compiled is None  # label sets of two words: the NumPy path
    else:
        assert_same_bits(compiled, expected)
    bounds, cells, values, reduced, counts = expected
    total = [[Fraction(0)] * class_count for _ in range(class_count)]
    for k, (_, width, height, reference, prediction) in enumerate(pages):
        matrix = brute_confusion(width, height, reference, prediction, class_count)
        flat = [value for row in matrix for value in row]
        page_cells = cells[bounds[k] : bounds[k + 1]]
        assert page_cells.tolist() == [cell for cell, value in enumerate(flat) if value]
        assert np.allclose(values[bounds[k] : bounds[k + 1]], [float(flat[cell]) for cell in page_cells], rtol=1e-12, atol=0)
        assert reduced[k].tolist() == brute_reduced(matrix)
        total = [[a + b for a, b in zip(row, page_row)] for row, page_row in zip(total, matrix)]
    assert ExactMatrix.from_counts(counts).fractions() == total


def test_class_63_takes_the_top_bit_of_the_word(always):
    tasks = [task("p", 8, 6, [(63, [0, 0, 5, 6]), (1, [2, 1, 8, 4])], [(63, [3, 0, 8, 6]), (62, [0, 0, 2, 2])])]
    expected = numpy_cells(tasks, 64)
    assert_same_bits(kernel.evaluate(tasks, 64), expected)
    assert ExactMatrix.from_counts(expected[4]).fractions() == brute_confusion(8, 6, [(63, [0, 0, 5, 6]), (1, [2, 1, 8, 4])], [(63, [3, 0, 8, 6]), (62, [0, 0, 2, 2])], 64)


def test_pages_with_many_pairs_grow_the_pair_table(always):
    """A page of about 1,400 distinct pairs, beyond what the table's first 1,024 slots hold."""
    rng = np.random.default_rng(5)
    reference = [(int(c), [x, y, x + 1, y + 1]) for (x, y), c in zip(np.ndindex(40, 40), rng.integers(1, 30, 1600))]
    prediction = [(int(c), [x, y, x + 2, y + 1]) for (x, y), c in zip(np.ndindex(40, 40), rng.integers(1, 30, 1600))]
    tasks = [task("dense", 40, 40, reference, prediction), task("small", 5, 5, reference[:3], [])]
    dense = tasks[0]
    pairs = pair_table(40, 40, (dense.reference_classes, dense.reference_extents), (dense.prediction_classes, dense.prediction_extents), 30)
    assert len(pairs.pixels) > kernel.INITIAL_SLOTS // 2  # the table doubles when half full
    assert_same_bits(kernel.evaluate(tasks, 30), numpy_cells(tasks, 30))


def test_a_polygon_page_with_many_pairs_grows_the_pair_table(always):
    """Triangles a 2 x 2 cell (two pieces each, a chain), about 1,000 distinct pairs: the table
    grows while the page's bands remember their pairs' slots, which then point nowhere."""
    rng = np.random.default_rng(7)
    cells = list(np.ndindex(40, 40))

    def side(corners: list[tuple[int, int]], classes: np.ndarray) -> tuple[np.ndarray, PixelExtents]:
        outlines = [[(2 * x + dx, 2 * y + dy) for dx, dy in corners] for y, x in cells]
        bboxes = np.array([[min(p[0] for p in o), min(p[1] for p in o), max(p[0] for p in o), max(p[1] for p in o)] for o in outlines], float)
        return classes, PixelExtents.from_boxes(bboxes, 80, 80, Polygons.of(outlines))

    reference = side([(0, 0), (2, 0), (0, 2)], rng.integers(1, 30, len(cells)))
    prediction = side([(0, 0), (2, 0), (2, 2)], rng.integers(1, 30, len(cells)))
    tasks = [PageTask("triangles", 80, 80, *reference, *prediction)]
    assert len(pair_table(80, 80, reference, prediction, 30).pixels) > kernel.INITIAL_SLOTS // 2
    assert reference[1].pieces is not None and len(reference[1].pieces) == 2 * len(cells)
    assert_same_bits(kernel.evaluate(tasks, 30), numpy_cells(tasks, 30))


# --- whole datasets through evaluate_dataset -------------------------------------------------------


def evaluation_state(evaluation) -> tuple:
    counts = evaluation.counts
    return (
        evaluation.page_ids, evaluation.page_pixels.tolist(), evaluation.page_reduced.tolist(),
        evaluation.contribution_offsets.tolist(), evaluation.contribution_cell.tolist(),
        evaluation.contribution_value.view(np.uint64).tolist(),
        [getattr(counts, field).tolist() for field in ("denominator", "row", "column", "numerator")],
        evaluation.matrices.exact.fractions(), evaluation.warnings,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["single", "dual"])
def test_public_vectors_and_synthetic_pages_give_the_same_evaluation(monkeypatch, mode):
    pages = load_vector("tore_public_pages.json")
    datasets = [
        (from_native(pages["reference"], "gt.json"), from_native(pages["prediction"], "model.json")),
        synthetic_layouts(300),
    ]
    for reference, prediction in datasets:
        monkeypatch.setenv(kernel.KERNEL_ENV, kernel.NUMPY)
        expected = evaluation_state(evaluate_dataset(reference, prediction, taxonomy=mode))
        monkeypatch.setenv(kernel.KERNEL_ENV, kernel.ALWAYS)
        assert evaluation_state(evaluate_dataset(reference, prediction, taxonomy=mode)) == expected


def test_huge_pages_are_left_to_the_numpy_path(always):
    """Sums beyond int64 need Python integers, which only the NumPy path has."""
    side = 2**31
    tasks = [task("p", side, side, [(1, [0, 0, side, side]), (2, [0, 0, side, side])], [(1, [0, 0, side, side])])]
    assert kernel.evaluate(tasks, 3) is None
    small = [task("p", 1000, 1000, [(1, [0, 0, 10, 10])], [])]
    assert_same_bits(kernel.evaluate(small, 3), numpy_cells(small, 3))  # a page the kernel takes, and counts right


TALL_PAGE = """
import os, resource
import numpy as np
os.environ["TORE_PAGE_KERNEL"] = "always"
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.run.runner import evaluate_dataset
page = Page("p", 100, 2**31, ["a", "b"], np.array([[0, 0, 10, 10], [5, 5, 50, 2**30]], float))
evaluation = evaluate_dataset(LayoutSet("gt", [page]), LayoutSet("model", [page]), taxonomy="single", map="off")
reduced = evaluation.page_reduced[0]
print(int(reduced[0, 0]), int(reduced[1, 1]), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_a_page_of_few_boxes_2_31_pixels_tall_costs_no_memory_a_row():
    """A page may be 2^31 pixels tall: the kernel sorts a few boxes, and counts rectangles into
    rows only when they are many for the page's height (an array of its rows: 16 GB)."""
    result = subprocess.run([sys.executable, "-c", TALL_PAGE], capture_output=True, text=True, check=True, timeout=120)
    background, foreground, peak_kb = map(int, result.stdout.split())
    boxes = 10 * 10 + 45 * (2**30 - 5)  # each box's pixels: the overlap counts in both (the reduced rule)
    assert (background, foreground) == (100 * 2**31 - (boxes - 5 * 5), boxes)
    assert peak_kb < 1_500_000


def test_pages_with_more_boxes_than_the_kernel_takes_are_left_to_the_numpy_path(always):
    boxes = [(1, [0, 0, 1, 1])] * (kernel.MAX_BOXES + 1)
    assert kernel.evaluate([task("p", 10, 10, boxes, [])], 2) is None


# --- when the kernel is used ---------------------------------------------------------------------


class FakeKernels:
    """Stands in for the compiled kernel: records loads instead of compiling."""

    def __init__(self, cached: bool) -> None:
        self.cached, self.loads = cached, 0

    @property
    def loaded(self) -> bool:
        return self.loads > 0

    def is_cached(self) -> bool:
        return self.cached

    def load(self) -> None:
        self.loads += 1


@pytest.fixture
def policy(monkeypatch, tmp_path):
    """The dispatch with a fake kernel, a fresh page count and a private cache folder: returns a
    function that evaluates `pages` pages (of one tiny task each) and says which path ran."""
    monkeypatch.delenv(kernel.KERNEL_ENV, raising=False)
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "numba"))
    monkeypatch.setattr(kernel, "_pages_seen", 0)
    monkeypatch.setattr(kernel, "_run", lambda *arrays: "kernel")
    tiny = task("p", 2, 2, [(1, [0, 0, 1, 1])], [])

    def run(pages: int) -> str:
        return kernel.evaluate([tiny] * pages, 2) or "numpy"

    return run


def use_fake(monkeypatch, cached: bool) -> FakeKernels:
    fake = FakeKernels(cached)
    monkeypatch.setattr(kernel, "_kernels", fake)
    return fake


def test_small_jobs_never_wait_for_a_cold_compile(policy, monkeypatch, capsys):
    fake = use_fake(monkeypatch, cached=False)
    batch = 256
    paths = [policy(batch) for _ in range(kernel.COMPILE_AFTER_PAGES // batch)]
    assert set(paths) == {"numpy"} and fake.loads == 0 and capsys.readouterr().err == ""
    assert [policy(batch), policy(batch)] == ["kernel", "kernel"]  # the job grew large: compiled once
    notice = capsys.readouterr().err.splitlines()
    assert fake.loads == 1 and len(notice) == 1
    assert notice[0].startswith("compiling TORE's page kernel once, about") and notice[0].endswith(str(jit.use_cache_folder()))


def test_a_large_jobs_first_batch_takes_the_kernel(monkeypatch, tmp_path, capsys):
    """The job's size, when the runner says it, decides at once (not only the pages seen so far)."""
    monkeypatch.delenv(kernel.KERNEL_ENV, raising=False)
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "numba"))
    monkeypatch.setattr(kernel, "_pages_seen", 0)
    monkeypatch.setattr(kernel, "_run", lambda *arrays: "kernel")
    fake = use_fake(monkeypatch, cached=False)
    tiny = task("p", 2, 2, [(1, [0, 0, 1, 1])], [])
    assert kernel.evaluate([tiny] * 8, 2, job_pages=kernel.COMPILE_AFTER_PAGES) == "kernel" and fake.loads == 1


def test_a_warm_cache_is_loaded_once_the_job_pays_for_it(policy, monkeypatch, capsys):
    """Without numba imported, its import must be paid for too: from `LOAD_AFTER_PAGES` pages on."""
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    fake = use_fake(monkeypatch, cached=True)
    assert policy(kernel.LOAD_AFTER_PAGES - 1) == "numpy" and fake.loads == 0
    assert policy(1) == "kernel" and fake.loads == 1 and capsys.readouterr().err == ""


def test_with_numba_imported_a_warm_cache_is_loaded_at_once(policy, monkeypatch, capsys):
    """A compiled reader imported numba: a load is then a few hundredths of a second, which the
    first page's NumPy path costs (`jit.load_pays_off`), so even a one-page job takes the kernel."""
    pytest.importorskip("numba", reason="numba is not installed: the kernel is never used")
    fake = use_fake(monkeypatch, cached=True)
    assert policy(1) == "kernel" and fake.loads == 1 and capsys.readouterr().err == ""


def test_polygon_pages_load_a_warm_cache_at_once_and_compile_sooner(policy, monkeypatch, capsys):
    """The polygon rasteriser has imported numba, and the NumPy path paints a turned region's rows
    one by one: a batch with polygons takes the kernel from a warm cache at once, and compiles it
    from `POLYGON_COMPILE_AFTER_PAGES` pages on."""
    tiny = task("p", 2, 2, [(1, [0, 0, 1, 1])], [])

    def run(pages: int, polygons: bool) -> str:
        flags = np.ones(pages, bool) if polygons else None
        frames, offsets, boxes, pieces = kernel._inputs([tiny] * pages)
        return kernel.evaluate_arrays(frames, offsets, boxes, 2, 0, flags, pieces) or "numpy"

    cold = use_fake(monkeypatch, cached=False)
    assert run(kernel.POLYGON_COMPILE_AFTER_PAGES - 1, True) == "numpy" and cold.loads == 0
    assert run(1, True) == "kernel" and cold.loads == 1
    monkeypatch.setattr(kernel, "_pages_seen", 0)
    monkeypatch.delitem(sys.modules, "numba", raising=False)  # a job of boxes read without numba (`jit.load_pays_off`)
    warm = use_fake(monkeypatch, cached=True)
    assert run(1, False) == "numpy" and warm.loads == 0  # boxes alone: not yet worth importing numba
    assert run(1, True) == "kernel" and warm.loads == 1


def test_a_process_waits_for_no_other_process_compiling(policy, monkeypatch):
    """Another process holds the cache folder's lock: this one goes on with NumPy meanwhile."""
    fake = use_fake(monkeypatch, cached=False)
    folder = jit.use_cache_folder()
    folder.mkdir(parents=True)
    with open(folder / jit.LOCK_NAME, "a+b") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        assert policy(kernel.COMPILE_AFTER_PAGES) == "numpy" and fake.loads == 0
    assert policy(1) == "kernel" and fake.loads == 1


def test_the_numpy_path_when_the_kernel_does_not_apply(policy, monkeypatch):
    fake = use_fake(monkeypatch, cached=True)
    large = kernel.COMPILE_AFTER_PAGES
    assert kernel.evaluate([task("p", 2, 2, [], [])] * large, kernel.MAX_CLASSES + 1) is None  # two-word label sets
    with monkeypatch.context() as patch:
        patch.setattr(jit, "numba_available", lambda: False)
        assert policy(large) == "numpy"
    with monkeypatch.context() as patch:
        patch.setenv(kernel.KERNEL_ENV, kernel.NUMPY)
        assert policy(large) == "numpy"
    assert fake.loads == 0


def test_an_unknown_mode_is_refused(monkeypatch):
    monkeypatch.setenv(kernel.KERNEL_ENV, "sometimes")
    with pytest.raises(ValueError, match=kernel.KERNEL_ENV):
        kernel.evaluate([task("p", 2, 2, [], [])], 2)


# --- processes: a cold cache, a pool, numba missing ------------------------------------------------


def run_python(code: str, cache: Path, **environment: str) -> subprocess.CompletedProcess:
    env = {**os.environ, jit.CACHE_ENV: str(cache), "PYTHONPATH": str(REPOSITORY)}
    env.pop(kernel.KERNEL_ENV, None)
    env.update(environment)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPOSITORY, env=env, capture_output=True, text=True, timeout=600, check=True)


EVALUATE = """
    import os, sys
    from benchmarks.synthetic import synthetic_layouts
    from tore_engine.run.runner import evaluate_dataset
    reference, prediction = synthetic_layouts({pages})
    evaluation = evaluate_dataset(reference, prediction, workers={workers})
    print(evaluation.contribution_value.sum().hex(), int(evaluation.counts.numerator.sum()), "numba" in sys.modules)
"""


def test_a_small_job_on_a_cold_cache_neither_compiles_nor_imports_numba(tmp_path):
    result = run_python(EVALUATE.format(pages=30, workers=1), tmp_path / "cache")
    assert result.stderr == "" and result.stdout.split()[-1] == "False"
    assert not list((tmp_path / "cache").glob("**/*.nbi"))


def test_pool_workers_compile_once_and_later_processes_load_the_cache(tmp_path):
    cache = tmp_path / "cache"
    expected = run_python(EVALUATE.format(pages=40, workers=1), cache, TORE_PAGE_KERNEL="numpy").stdout.split()[:2]
    first = run_python(EVALUATE.format(pages=40, workers=2), cache, TORE_PAGE_KERNEL="always")
    assert first.stdout.split()[:2] == expected
    assert first.stderr.count("compiling TORE's page kernel once") == 1, first.stderr  # one of the two workers
    warm = run_python("from tore_engine.run.warm import main; main([])", cache)
    assert warm.stdout.startswith("TORE's page kernel loaded in")
    assert "page kernel once" not in warm.stderr  # only the JSON scan, never warmed here, compiles
    again = run_python("from tore_engine.run.warm import main; main([])", cache)
    assert again.stderr == "" and any(line.startswith("TORE's JSON scan loaded in") for line in again.stdout.splitlines())


def test_without_numba_evaluations_take_the_numpy_path_silently(tmp_path):
    hide_numba = "import sys; sys.modules['numba'] = None\n"
    result = run_python(hide_numba + textwrap.dedent(EVALUATE.format(pages=20, workers=1)), tmp_path / "cache", TORE_PAGE_KERNEL="always")
    expected = run_python(EVALUATE.format(pages=20, workers=1), tmp_path / "cache", TORE_PAGE_KERNEL="numpy")
    assert result.stderr == "" and result.stdout.split()[:2] == expected.stdout.split()[:2]
