"""TORE: taxonomy-invariant, pixel-level evaluation of document layouts.

The package's top level is what a notebook user needs (docs/api.md)::

    import tore_engine as tore

    ref = tore.load("gt.json")                       # any format of docs/formats.md#your-data
    pred = tore.load("preds/", format="docling")
    ev = tore.evaluate(ref, pred)                    # or paths; taxonomy=, label_map=, min_score=, ...
    ev.recall                                        # a pandas DataFrame, rows = reference classes
    ev.pages_for_cell("Text", "Table")               # the pages behind a cell, ranked
    tore.compare(ev_a, ev_b)                         # B minus A, per class and per page
    tore.open("results/")                            # what `tore evaluate --out results/` saved, without its inputs
    tore.tags().pages("gt", "reference wrong")       # the pages tagged so, in the app or here
    ev_1.merge(ev_2)                                 # evaluations of disjoint pages as one, bit for bit

What was clipped, skipped or defaulted is in `.warnings`, summed up in one `ToreWarning`; bad
input is an `InputError` (a `ValueError`); a class name that is not there is a `KeyError`.

Everything else stays importable but internal. The engine never imports Streamlit; pandas and
Plotly are imported only by the methods that return them.
"""

from __future__ import annotations

from tore_engine.api import FORMATS, evaluate, load, load_pair, open, tags
from tore_engine.core.errors import InputError, InputWarning, ToreWarning
from tore_engine.core.layout import LayoutSet, Page, PageImage
from tore_engine.results.comparison import Comparison, compare
from tore_engine.results.evaluation import Evaluation

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
    "ToreWarning",
    "__version__",
    "compare",
    "evaluate",
    "load",
    "load_pair",
    "open",
    "tags",
]
