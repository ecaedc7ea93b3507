"""TORE: taxonomy-invariant, pixel-level evaluation of document layouts.

The package's top level is what a notebook user needs (formats.md section 7)::

    import tore_engine as tore

    ref = tore.load("gt.json")                       # any format of formats.md section 6
    pred = tore.load("preds/", format="docling")
    ev = tore.evaluate(ref, pred)                    # or paths; taxonomy=, label_map=, min_score=, ...
    ev.recall                                        # a pandas DataFrame, rows = reference classes
    ev.pages_for_cell("Text", "Table")               # the pages behind a cell, ranked
    tore.compare(ev_a, ev_b)                         # B minus A, per class and per page

Everything else stays importable but internal. The engine never imports Streamlit; pandas and
Plotly are imported only by the methods that return them.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor
from pathlib import Path

from tore_engine.comparison import Comparison, compare
from tore_engine.errors import InputError, InputWarning
from tore_engine.evaluation import Evaluation
from tore_engine.formats import FORMATS, load, load_pair
from tore_engine.layout import LayoutSet, Page, PageImage

__version__ = "0.2.0"

__all__ = [
    "FORMATS",
    "Comparison",
    "Evaluation",
    "InputError",
    "InputWarning",
    "LayoutSet",
    "Page",
    "PageImage",
    "__version__",
    "compare",
    "evaluate",
    "load",
    "load_pair",
]


def _layout(side: LayoutSet | str | Path, format: str) -> LayoutSet:
    return side if isinstance(side, LayoutSet) else load(side, format)


def evaluate(
    reference: LayoutSet | str | Path,
    prediction: LayoutSet | str | Path | None = None,
    *,
    format: str = "auto",
    taxonomy: str = "auto",
    label_map: Mapping[str, str] | str | Path | None = None,
    min_score: float | None = None,
    workers: int = 1,
    executor: Executor | None = None,
) -> Evaluation:
    """TORE matrices of `prediction` against `reference` (layout sets, or paths in any format).

    `taxonomy`: auto, single or dual. `label_map`: {old label: new label} (or a JSON file of one),
    applied to both sides. `min_score`: drop boxes scored below it. `workers` local processes, or
    any `concurrent.futures.Executor` (a Dask client's `get_executor()`); the result is the same,
    bit for bit. A docling-eval dataset holds both sides: `evaluate(DATASET, format="docling-eval")`.
    """
    from tore_engine.dataset import evaluate_dataset
    from tore_engine.taxonomy import read_label_map

    if isinstance(reference, LayoutSet) and isinstance(prediction, LayoutSet):
        pair = reference, prediction
    elif not isinstance(reference, LayoutSet) and not isinstance(prediction, LayoutSet):
        pair = load_pair(reference, prediction, format)
    else:
        if prediction is None:
            raise InputError("a prediction is needed")
        pair = _layout(reference, format), _layout(prediction, format)
    mapping = read_label_map(label_map) if isinstance(label_map, (str, Path)) else dict(label_map or {})
    return evaluate_dataset(*pair, taxonomy=taxonomy, label_map=mapping, min_score=min_score, workers=workers, executor=executor)
