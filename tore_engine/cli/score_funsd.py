"""`tore score funsd` and `tore score ec-funsd`: the FUNSD panels under the conventions of funsd.md.

One module adds both sub-commands because they share folders pairing, reporting and the summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FUNSD_DESCRIPTION = (
    "Score FUNSD predictions end to end: word and entity detection (IoU >= 0.5, one-to-one optimal "
    "assignment, plus the ICDAR greedy variant), OCR similarity (1 - Levenshtein / max length), word "
    "grouping (Adjusted Rand Index), entity labeling (per class, micro, macro, micro without other), "
    "LayoutLM-style SER (seqeval, entity level) and entity linking. Words with blank text, and entities "
    "left without words, are dropped on both sides. FUNSD has no official scorer: the conventions are "
    "those of TORE Studio's funsd.md. Files are paired by name; a reference file without a prediction "
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
    from tore_engine.funsd import score_ec_funsd_folders, score_funsd_folders

    score = score_funsd_folders if args.benchmark == "funsd" else score_ec_funsd_folders
    report = score(args.reference, args.prediction)
    if report.missing_predictions:
        print(f"tore: reference file(s) without a prediction file, scored as empty: "
              f"{_file_names(report.missing_predictions)}", file=sys.stderr)
    if report.unused_predictions:
        print(f"tore: prediction file(s) without a reference file, ignored: "
              f"{_file_names(report.unused_predictions)}", file=sys.stderr)
    print(json.dumps(report.corpus) if args.json else human_summary(report))
    return 0


def human_summary(report) -> str:
    """Headline numbers with their conventions, then the per-class tables."""
    title = "FUNSD" if report.benchmark == "funsd" else "EC-FUNSD"
    lines = [f"{title} scores over {len(report.documents)} document(s)", ""]
    items = report.headline()
    width = max(len(item["label"]) for item in items)
    lines += [f"  {item['label']:<{width}}  {_number(item['value'])}   ({item['convention']})" for item in items]
    for title, table in report.per_class_tables().items():
        lines += ["", f"{title} per class:", f"  {'class':<10} {'precision':>9} {'recall':>9} {'f1':>9} {'support':>8}"]
        for name, row in table.items():
            support = row.get("support", row.get("support_gt"))
            lines.append(f"  {name:<10} {_number(row['precision']):>9} {_number(row['recall']):>9} "
                         f"{_number(row['f1']):>9} {support:>8}")
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _file_names(doc_ids: list[str]) -> str:
    return ", ".join(f"{doc_id}.json" for doc_id in doc_ids)
