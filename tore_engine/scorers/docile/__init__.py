"""DocILE scoring (KILE Average Precision and LIR F1), reproducing docile-benchmark 0.3.5.

Modules: `dataset` (the official folder layout and prediction files), `validation` (the official
checks and messages), `pcc` (pseudo-character centres), `matching` (greedy field matching and the
line-item assignment), `metrics` (AP, F1 and filters), `score` (the whole split: `score_docile`
and its `DocileResult`), `tore_sets` (DocILE fields as TORE layout sets).

One deliberate difference from the official code: a page without any OCR word has an empty PCC
set, so an intersecting gold/prediction pair there covers no PCC on either side and matches
(IoU 1), where the official evaluator crashes with `KeyError(page)` (docs/benchmarks.md#pages-without-ocr-words).
"""

from tore_engine.scorers.docile.dataset import (
    DocileDataset,
    DocileDocument,
    Field,
    load_dataset,
    load_predictions,
)
from tore_engine.scorers.docile.metrics import Metrics
from tore_engine.scorers.docile.score import (
    DocileResult,
    TaskResult,
    evaluate,
    score_docile,
)

__all__ = [
    "DocileDataset",
    "DocileDocument",
    "DocileResult",
    "Field",
    "Metrics",
    "TaskResult",
    "evaluate",
    "load_dataset",
    "load_predictions",
    "score_docile",
]
