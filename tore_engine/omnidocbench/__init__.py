"""OmniDocBench (Ouyang et al., CVPR 2025): reading its ground truth and predictions, the official
layout-detection AP (exact), the page-level end-to-end scores (official per-pair metrics and
aggregation on this project's matcher), and its layouts as TORE layout sets.

Modules, in reading order: `categories` (taxonomies and mappings), `reference` (OmniDocBench.json),
`layout_predictions`, `layout_ap`, `markdown`, `pair_metrics`, `matching`, `aggregation`,
`end_to_end`, `tore_sets`, and `score` (`score_omnidocbench` and its `OmniDocBenchResult`: the JSON
the CLI prints and the app renders). This file imports only the light modules, so that
`tore evaluate` does not load the scorers (`score` imports them when it scores).
"""

from tore_engine.omnidocbench.reference import Reference, ReferencePage, load_reference
from tore_engine.omnidocbench.score import OmniDocBenchResult, score_omnidocbench
from tore_engine.omnidocbench.tore_sets import omnidocbench_layout_sets

__all__ = ["OmniDocBenchResult", "Reference", "ReferencePage", "load_reference", "omnidocbench_layout_sets", "score_omnidocbench"]
