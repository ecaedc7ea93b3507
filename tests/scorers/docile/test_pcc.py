"""Pseudo-character centres (tore_engine.scorers.docile.pcc): the official evaluator's PCCs, bit for bit, a
missing snapped geometry named, and box coverage against brute force."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.scorers.docile.helpers import CASES, write_case
from tore_engine.core.errors import InputError
from tore_engine.scorers.docile import load_dataset


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_pccs_match_official(case, tmp_path):
    dataset_dir, _ = write_case(case, tmp_path)
    dataset = load_dataset(dataset_dir, case["dataset"]["split"])
    for document in dataset.documents:
        expected = np.array(case["result"]["pccs"][document.docid], dtype=np.float64).reshape(-1, 3)
        assert document.pccs.shape == expected.shape
        assert np.array_equal(document.pccs, expected)  # exact: coverage depends on exact floats


def test_missing_snapped_geometry_names_the_document(tmp_path):
    case = CASES[0]
    dataset_dir, _ = write_case(case, tmp_path)
    docid = case["dataset"]["docids"][0]
    ocr_file = dataset_dir / "ocr" / f"{docid}.json"
    ocr = json.loads(ocr_file.read_text())
    del ocr["pages"][0]["blocks"][0]["lines"][0]["words"][0]["snapped_geometry"]
    ocr_file.write_text(json.dumps(ocr))
    with pytest.raises(InputError, match=f"document {docid}.*snapped_geometry"):
        load_dataset(dataset_dir, case["dataset"]["split"])


def test_coverage_equals_brute_force_on_boundaries():
    """Boxes whose edges sit exactly on PCC coordinates, duplicated PCCs, several pages."""
    from tore_engine.scorers.docile.pcc import PCCSet

    rng = np.random.default_rng(3)
    grid = np.round(rng.uniform(0, 1, 12), 3)  # few distinct values: many exact ties
    pccs = np.column_stack([rng.choice(grid, 400), rng.choice(grid, 400), rng.integers(0, 3, 400)]).astype(float)
    pcc_set = PCCSet(pccs)
    points = {tuple(p) for p in pccs.tolist()}
    assert len(pcc_set) == len(points)
    xs, ys = np.sort(rng.choice(grid, (300, 2)), axis=1), np.sort(rng.choice(grid, (300, 2)), axis=1)
    boxes = np.column_stack([xs[:, 0], ys[:, 0], xs[:, 1], ys[:, 1]])  # left, top, right, bottom
    pages = rng.integers(-1, 4, 300)
    box, row = pcc_set.covered(boxes, pages)
    for k, ((left, top, right, bottom), page) in enumerate(zip(boxes.tolist(), pages.tolist())):
        expected = {(x, y, p) for x, y, p in points if p == page and left <= x <= right and top <= y <= bottom}
        found = {(pcc_set.x[r], pcc_set.y[r], pcc_set.page[r]) for r in row[box == k]}
        assert found == expected
