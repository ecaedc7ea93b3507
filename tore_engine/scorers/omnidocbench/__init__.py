"""OmniDocBench (Ouyang et al., CVPR 2025): reading its ground truth and predictions, the official
layout-detection AP (exact), the end-to-end scores exactly as the official v1.6 evaluator computes
them (CDM aside; its matcher, normalisation and quirks reproduced, without its time limits), and its
layouts as TORE layout sets.

Modules, in reading order: `categories` (taxonomies and mappings), `reference` (OmniDocBench.json),
`layout_predictions`, `layout_ap`; for the end-to-end scores `soup` (BeautifulSoup's HTML rules),
`latex_text`, `formula_text`, `tables` (normalisation), `markdown` (prediction files and pieces),
`ground_truth`, `formula_rows`, `quick_match`, `formula_match`, `page_match` (the official matching),
`pair_metrics` (TEDS), `aggregation`, `end_to_end`; then `tore_sets`, `official` (the demo's shipped
results), and `score` (`score_omnidocbench` and its `OmniDocBenchResult`: the JSON
the CLI prints and the app renders). This file imports only the light modules, so that
`tore evaluate` does not load the scorers (`score` imports them when it scores).
"""

from tore_engine.scorers.omnidocbench.reference import (
    Reference,
    ReferencePage,
    load_reference,
)
from tore_engine.scorers.omnidocbench.score import (
    OmniDocBenchResult,
    score_omnidocbench,
)
from tore_engine.scorers.omnidocbench.tore_sets import omnidocbench_layout_sets

__all__ = ["OmniDocBenchResult", "Reference", "ReferencePage", "load_reference", "omnidocbench_layout_sets", "score_omnidocbench"]
