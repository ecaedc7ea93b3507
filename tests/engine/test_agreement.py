"""Agreement categories on a tiny page, counted by hand."""

import numpy as np

from tore_engine.core.layout import Page
from tore_engine.engine.agreement import (
    BOTH,
    DIFFERENT_CLASS,
    NOTHING,
    ONLY_PREDICTION,
    ONLY_REFERENCE,
    SAME_CLASS,
    agreement_raster,
)


def _page(boxes, width=10, height=10):
    return Page("p", width, height, [label for label, _ in boxes], np.array([bbox for _, bbox in boxes], dtype=float).reshape(-1, 4))


REFERENCE = _page([("Text", [0, 0, 4, 4]), ("Table", [0, 6, 2, 8])])
PREDICTION = _page([("Text", [2, 2, 6, 6]), ("Title", [0, 6, 2, 8]), ("Text", [8.5, 8.5, 9.2, 9.2])])


def test_categories_counted_by_hand():
    codes = agreement_raster(REFERENCE, PREDICTION, compare_classes=True).codes
    assert codes.shape == (10, 10)
    counts = np.bincount(codes.reshape(-1), minlength=6)
    # Text overlap [2,4)x[2,4) = 4 px same class; Table/Title [0,2)x[6,8) = 4 px different classes
    assert counts[SAME_CLASS] == 4
    assert counts[DIFFERENT_CLASS] == 4
    assert counts[ONLY_REFERENCE] == 16 - 4
    # the predicted Text box paints 16 px, 4 shared; [8.5, 9.2] rounds outward to columns and rows 8-9
    assert counts[ONLY_PREDICTION] == 12 + 4
    assert counts[NOTHING] == 100 - 4 - 4 - 12 - 16
    assert codes[8, 8] == ONLY_PREDICTION and codes[6, 0] == DIFFERENT_CLASS and codes[0, 0] == ONLY_REFERENCE


def test_dual_mode_does_not_compare_classes():
    codes = agreement_raster(REFERENCE, PREDICTION, compare_classes=False).codes
    assert (codes == BOTH).sum() == 8
    assert not np.isin(codes, [SAME_CLASS, DIFFERENT_CLASS]).any()


def test_missing_prediction_and_downscaling():
    raster = agreement_raster(REFERENCE, None, compare_classes=True)
    assert (raster.codes == ONLY_REFERENCE).sum() == 20
    assert raster.shares()["only in the reference"] == 0.2
    small = agreement_raster(_page([("Text", [0, 0, 500, 1000])], 1000, 1000), None, compare_classes=True, max_side=100)
    assert small.codes.shape == (100, 100) and small.scale == 0.1
    assert (small.codes == ONLY_REFERENCE).sum() == 50 * 100


def test_prediction_in_another_frame_is_scaled_to_the_reference():
    prediction = _page([("Text", [0, 0, 8, 8])], 20, 20)  # [0, 0, 4, 4] in the reference frame
    codes = agreement_raster(REFERENCE, prediction, compare_classes=True).codes
    assert (codes == SAME_CLASS).sum() == 16


def test_a_polygon_is_compared_where_it_is_painted():
    """A triangle against its bounding box: the corner the triangle leaves out is only in the
    prediction."""
    reference = Page("p", 4, 4, ["a"], np.array([[0, 0, 4, 4]], dtype=float), polygons=[[(0, 0), (4, 0), (0, 4)]])
    prediction = Page("p", 4, 4, ["a"], np.array([[0, 0, 4, 4]], dtype=float))
    codes = agreement_raster(reference, prediction, compare_classes=True).codes
    assert codes[0, 0] == SAME_CLASS and codes[3, 3] == ONLY_PREDICTION
