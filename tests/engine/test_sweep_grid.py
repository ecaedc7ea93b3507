"""The sweep's NumPy path (each page painted once for all points) against each point's own
rasterisation: `raster.pair_table` of the boxes that point keeps, on that point's own grid."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tore_engine.core.layout import PageColumns
from tore_engine.core.taxonomy import resolve_taxonomy
from tore_engine.engine import sweep_grid
from tore_engine.engine.preparation import prepare_columns
from tore_engine.engine.raster import pair_table
from tore_engine.formats.native import from_document as from_native
from tore_engine.metrics.sweep import POINTS, score_levels


def _batch(pages: int, classes: int, seed: int):
    rng = np.random.default_rng(seed)
    names = [f"c{k}" for k in range(classes - 1)]  # and Background

    def side(name: str, scored: bool) -> dict:
        return {"name": name, "taxonomy": names, "pages": [
            {"id": f"p{p}", "width": 40, "height": 30, "boxes": [
                {"label": names[int(rng.integers(0, classes - 1))], "bbox": [float(x), float(y), float(x + rng.integers(0, 15)), float(y + rng.integers(0, 12))],
                 **({"score": float(rng.choice([0.05, 0.1, 0.42, 0.95, 1.0, 0.0]))} if scored and rng.random() < 0.9 else {})}
                for x, y in zip(rng.integers(-3, 38, 25), rng.integers(-3, 28, 25))]} for p in range(pages)]}

    reference, prediction = from_native(side("gt", True), "gt.json"), from_native(side("model", True), "model.json")
    taxonomy = resolve_taxonomy(reference, prediction, "single")
    assert taxonomy.size == classes
    columns = [PageColumns.from_pages(side.pages) for side in (reference, prediction)]
    return prepare_columns(*columns, np.arange(pages), taxonomy), taxonomy.size


def _per_point(prepared, levels, class_count) -> list[Counter]:
    """Each point's pixels by (reference codes, prediction codes), each point rasterised alone."""
    points = []
    for point in range(1, POINTS + 1):
        kept = prepared.kept(levels >= point)
        counted: Counter = Counter()
        for task in kept.tasks():
            table = pair_table(task.width, task.height, (task.reference_classes, task.reference_extents),
                               (task.prediction_classes, task.prediction_extents), class_count)
            for ref, pred, pixels in zip(table.reference_codes.tolist(), table.prediction_codes.tolist(), table.pixels.tolist()):
                counted[(tuple(ref), tuple(pred))] += pixels
        points.append(+counted)
    return points


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("classes", [5, 70, 200])
def test_each_points_pixels_are_that_points_own_rasterisation(classes, collide, monkeypatch):
    if collide:  # every row hashes alike: the check catches it and the band is counted row by row
        monkeypatch.setattr(sweep_grid, "row_hashes", lambda rows: np.zeros(len(rows), np.uint64))
    prepared, class_count = _batch(3, classes, seed=classes)
    levels = score_levels(prepared.scores, len(prepared.scores))
    reference, prediction, pixels = sweep_grid.sweep_pairs(prepared, levels, class_count)
    assert len(reference) == len({(tuple(r), tuple(p)) for r, p in zip(reference.tolist(), prediction.tolist())})  # each pair once
    for point, expected in enumerate(_per_point(prepared, levels, class_count)):
        found = Counter({(tuple(r), tuple(p)): n for r, p, n in zip(reference.tolist(), prediction.tolist(), pixels[:, point].tolist()) if n})
        assert found == expected, point
