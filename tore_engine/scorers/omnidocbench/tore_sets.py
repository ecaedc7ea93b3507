"""OmniDocBench as TORE layout sets, for `tore evaluate --format omnidocbench`.

The ground truth keeps OmniDocBench's own block categories (`text_block`, `header`, ...), and the
prediction keeps its own class names (`plain text`, `abandon`, ...), so that TORE compares the two
taxonomies in dual mode instead of forcing the 10-class merge of the layout AP onto them.

Ignore-flagged blocks are kept, as the official layout-detection evaluation keeps them (spec
section 3: the `ignore` flag is not used by layout detection; it only drops blocks from the
end-to-end text score). Page ids are the image names; the frame is the real image size (the
`page_info` width/height swap is corrected, see `reference.py`).
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.errors import InputWarning
from tore_engine.core.layout import LayoutSet, Page, PageImage
from tore_engine.core.polygons import Polygons
from tore_engine.scorers.omnidocbench.categories import (
    KNOWN_EXTRA_BLOCKS,
    README_BLOCK_CATEGORIES,
)
from tore_engine.scorers.omnidocbench.layout_predictions import (
    LayoutPrediction,
    load_layout_prediction,
)
from tore_engine.scorers.omnidocbench.reference import (
    Block,
    Reference,
    block_boxes,
    load_reference,
)

REFERENCE_NAME = "omnidocbench"


def block_outline(block: Block) -> list[float] | None:
    """A block's `poly` as its polygon, or None when it is the official box's rectangle (which
    then paints as that box, bit for bit): a rotated or skewed region is painted as drawn."""
    poly = block.poly
    if len(poly) == 8 and len(set(poly[0::2])) <= 2 and len(set(poly[1::2])) <= 2 and block.bbox == poly_hull(poly):
        return None
    return list(poly) if len(poly) >= 6 else None


def poly_hull(poly: tuple[float, ...]) -> tuple[float, float, float, float]:
    return min(poly[0::2]), min(poly[1::2]), max(poly[0::2]), max(poly[1::2])


def reference_layout_set(reference: Reference) -> LayoutSet:
    """Every block of every page, labelled with its OmniDocBench category; a block whose `poly` is
    not its official box's rectangle is that polygon (its bbox then the polygon's bounding box)."""
    pages = []
    for page in reference.pages:
        outlines = [block_outline(block) for block in page.blocks]
        bboxes = block_boxes(page.blocks)
        for k, outline in enumerate(outlines):
            if outline is not None:
                bboxes[k] = poly_hull(tuple(outline))
        pages.append(Page(
            id=page.id,
            width=page.width,
            height=page.height,
            labels=[block.category for block in page.blocks],
            bboxes=bboxes,
            image=PageImage(page.image_path) if page.image_path is not None else None,
            polygons=Polygons.of(outlines) if any(outline is not None for outline in outlines) else None,
        ))
    in_use = {label for page in pages for label in page.labels}
    known = README_BLOCK_CATEGORIES + KNOWN_EXTRA_BLOCKS
    taxonomy = [c for c in known if c in in_use] + sorted(in_use.difference(known))
    return LayoutSet(REFERENCE_NAME, pages, taxonomy, reference.source)


def prediction_layout_set(prediction: LayoutPrediction) -> LayoutSet:
    """The prediction in its own taxonomy, one page per reference page (in the reference frame)."""
    in_use = {label for page in prediction.pages for label in page.labels}
    taxonomy = list(prediction.taxonomy) + sorted(in_use.difference(prediction.taxonomy))
    warnings = [
        InputWarning(key, None, "prediction", "prediction page with no reference page (not scored)")
        for key in prediction.unknown_pages
    ]
    return LayoutSet(prediction.name, prediction.pages, taxonomy, prediction.source, warnings)


def omnidocbench_layout_sets(
    gt_file: str | Path, layout_prediction_file: str | Path | None = None
) -> tuple[LayoutSet, LayoutSet | None]:
    """The ground truth and (if given) the layout prediction of an OmniDocBench evaluation."""
    reference = load_reference(gt_file)
    if layout_prediction_file is None:
        return reference_layout_set(reference), None
    prediction = load_layout_prediction(layout_prediction_file, reference)
    return reference_layout_set(reference), prediction_layout_set(prediction)
