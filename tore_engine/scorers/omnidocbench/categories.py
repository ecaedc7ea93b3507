"""OmniDocBench's category names and the mappings its official evaluations apply to them
(docs/benchmarks.md#omnidocbench-classes). Kept as data so that each scorer reads the same tables.
"""

from __future__ import annotations

# Block categories in the order of the upstream README; `KNOWN_EXTRA_BLOCKS` occur in other
# releases. Unknown categories are tolerated everywhere (they are dropped by the layout AP).
README_BLOCK_CATEGORIES: tuple[str, ...] = (
    "title", "text_block", "figure", "figure_caption", "figure_footnote", "table", "table_caption",
    "table_footnote", "equation_isolated", "equation_caption", "header", "footer", "page_number",
    "page_footnote", "abandon", "code_txt", "code_txt_caption", "reference",
)
KNOWN_EXTRA_BLOCKS: tuple[str, ...] = (
    "text_mask", "table_mask", "need_mask", "code_algorithm", "code_algorithm_caption",
)

# The 10 layout-detection classes, in order; COCO category id = position + 1.
EVAL_CLASSES: tuple[str, ...] = (
    "title", "text", "abandon", "figure", "figure_caption", "table", "table_caption",
    "table_footnote", "isolate_formula", "formula_caption",
)

# Ground-truth `category_type` -> eval class, as configs/layout_detection.yaml maps it. `reference`
# is absent on purpose: the upstream key is misspelt `refernece`, so reference blocks are dropped.
GT_TO_EVAL: dict[str, str] = {
    "title": "title",
    "text_block": "text",
    "header": "abandon",
    "footer": "abandon",
    "page_number": "abandon",
    "page_footnote": "abandon",
    "abandon": "abandon",
    "figure": "figure",
    "code_txt": "figure",
    "figure_caption": "figure_caption",
    "table": "table",
    "table_caption": "table_caption",
    "table_footnote": "table_footnote",
    "equation_isolated": "isolate_formula",
    "equation_caption": "formula_caption",
}

# The summary numbers of COCO evaluation, in the order of COCOeval's `stats`.
AP_STATS: tuple[str, ...] = ("mAP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large")

# Prediction class name -> eval class; any other name is dropped.
PREDICTION_TO_EVAL: dict[str, str] = {"plain text": "text", **{name: name for name in EVAL_CLASSES}}

# Page attributes the official evaluator breaks its page-level scores down by.
PAGE_ATTRIBUTES: tuple[str, ...] = ("data_source", "language", "layout", "special_issue", "subset")


def eval_class_of_gt(category: str) -> str | None:
    """The layout-detection class of a ground-truth block, or None when the block is dropped."""
    return GT_TO_EVAL.get(category)


def eval_class_of_prediction(name: str) -> str | None:
    """The layout-detection class of a predicted class name, or None when it is dropped."""
    return PREDICTION_TO_EVAL.get(name)
