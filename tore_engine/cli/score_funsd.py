"""`tore score funsd` and `tore score ec-funsd`: the FUNSD panels under the conventions of docs/benchmarks.md#funsd-and-ec-funsd.

One module adds both sub-commands because they share folders pairing, reporting and the summary.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tore_engine.cli.score_output import print_result

FUNSD_DESCRIPTION = (
    "Score FUNSD predictions end to end: word and entity detection (IoU >= 0.5, one-to-one optimal "
    "assignment, plus the ICDAR greedy variant), OCR similarity (1 - Levenshtein / max length), word "
    "grouping (Adjusted Rand Index), entity labeling (per class, micro, macro, micro without other), "
    "LayoutLM-style SER (seqeval, entity level) and entity linking. Words with blank text, and entities "
    "left without words, are dropped on both sides. FUNSD has no official scorer: the conventions are "
    "those of TORE Studio's docs/benchmarks.md#funsd-and-ec-funsd. Files are paired by name; a reference file without a prediction "
    "file is scored as an empty prediction and named on stderr."
)
EC_FUNSD_DESCRIPTION = (
    "Score EC-FUNSD predictions ({\"label_entities\", \"label_linkings\"} over the gold words) against "
    "EC-FUNSD annotations: entity-level SER (seqeval over the gold word order, 3 types), exact entity "
    "matches (same word span and label), directed entity linking given the gold entities (n/a unless "
    "the predicted entities are exactly the gold ones) and end to end. Files are paired by name; a "
    "reference file without a prediction file is scored as an empty prediction and named on stderr."
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    for name, help_text, description in (
        ("funsd", "FUNSD end-to-end panels: detection, OCR, grouping, labeling, SER, linking", FUNSD_DESCRIPTION),
        ("ec-funsd", "EC-FUNSD entity-level SER and entity linking", EC_FUNSD_DESCRIPTION),
    ):
        parser = subparsers.add_parser(name, help=help_text, description=description)
        parser.add_argument("--reference", type=Path, required=True, metavar="DIR",
                            help=f"folder of reference {'FUNSD' if name == 'funsd' else 'EC-FUNSD'} JSON files")
        parser.add_argument("--prediction", type=Path, required=True, metavar="DIR",
                            help="folder of prediction JSON files with the same file names")
        parser.add_argument("--json", action="store_true",
                            help="print the corpus panel as one JSON object (null = undefined)")
        parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tore_engine.scorers.funsd import score_ec_funsd, score_funsd

    score = score_funsd if args.benchmark == "funsd" else score_ec_funsd
    return print_result(score(args.reference, args.prediction), args.json)
