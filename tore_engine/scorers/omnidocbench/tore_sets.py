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
from tore_engine.scorers.omnidocbench.categories import (
    KNOWN_EXTRA_BLOCKS,
    README_BLOCK_CATEGORIES,
)
from tore_engine.scorers.omnidocbench.layout_predictions import (
    LayoutPrediction,
    load_layout_prediction,
)
from tore_engine.scorers.omnidocbench.reference import (
    Reference,
    block_boxes,
    load_reference,
)

REFERENCE_NAME = "omnidocbench"


def reference_layout_set(reference: Reference) -> LayoutSet:
    """Every block of every page, labelled with its OmniDocBench category."""
    pages = [
        Page(
            id=page.id,
            width=page.width,
            height=page.height,
            labels=[block.category for block in page.blocks],
            bboxes=block_boxes(page.blocks),
            image=PageImage(page.image_path) if page.image_path is not None else None,
        )
        for page in reference.pages
    ]
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
