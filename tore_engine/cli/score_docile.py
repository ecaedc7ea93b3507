"""`tore score docile`: DocILE KILE and LIR scores as docile-benchmark 0.3.5 computes them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

METRIC_COLUMNS = ("AP", "f1", "precision", "recall", "TP", "FP", "FN")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "docile",
        help="DocILE KILE Average Precision and LIR F1 (official evaluator's numbers)",
        description=(
            "Score DocILE predictions as the official evaluator (docile-benchmark 0.3.5) does: a "
            "predicted field is correct when it has the gold field's type and page and covers the same "
            "pseudo-character centres of the OCR words. KILE's primary metric is AP, LIR's is F1 over "
            "fields in maximally matched line items. A task without any prediction gives null. One "
            "difference: a page without OCR words has no PCCs (an intersecting pair there matches) "
            "instead of the official crash."
        ),
    )
    parser.add_argument(
        "--dataset",
        type=Path,
        required=True,
        metavar="DIR",
        help="DocILE dataset folder: annotations/<docid>.json, ocr/<docid>.json and <split>.json "
        "(pdfs/ is not needed for scoring)",
    )
    parser.add_argument("--split", required=True, metavar="NAME", help="split to score: the docids of DIR/NAME.json")
    parser.add_argument(
        "--kile",
        type=Path,
        metavar="FILE",
        help="KILE predictions {docid: [{bbox, page, fieldtype, score?, text?, use_only_for_ap?}]}",
    )
    parser.add_argument(
        "--lir",
        type=Path,
        metavar="FILE",
        help="LIR predictions, the same with line_item_id in every prediction",
    )
    parser.add_argument(
        "--iou-threshold",
        type=float,
        default=1.0,
        metavar="T",
        help="PCC IoU needed for a match (default 1.0, the official value; lower values are for "
        "debugging, and IoU > T - 1e-6 passes)",
    )
    parser.add_argument("--json", action="store_true", help='print {"kile": metrics | null, "lir": metrics | null}')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tore_engine.docile import score_files

    result = score_files(args.dataset, args.split, args.kile, args.lir, args.iou_threshold)
    if args.json:
        print(json.dumps(result.headline()))
    else:
        print(human_summary(result))
    return 0


def human_summary(result) -> str:
    """A table per evaluated task: the micro average, then every fieldtype."""
    lines = [f"DocILE scores for {result.dataset_name} (PCC IoU threshold {result.iou_threshold})"]
    for task, primary in (("kile", "AP"), ("lir", "f1")):
        task_result = getattr(result, task)
        lines.append("")
        if task_result is None:
            lines.append(f"{task.upper()}: no predictions (n/a)")
            continue
        metrics = task_result.metrics()
        lines.append(f"{task.upper()}: primary metric {primary} = {getattr(metrics, primary):.4f}")
        rows = [("micro average", metrics)] + [
            (fieldtype, task_result.metrics(fieldtype=fieldtype)) for fieldtype in task_result.table.fieldtypes()
        ]
        width = max(len(name) for name, _ in rows)
        lines.append(f"  {'fieldtype':<{width}}  " + "  ".join(f"{c:>9}" for c in METRIC_COLUMNS))
        for name, row in rows:
            values = row.to_json()
            cells = [f"{values[c]:>9.4f}" if isinstance(values[c], float) else f"{values[c]:>9d}" for c in METRIC_COLUMNS]
            lines.append(f"  {name:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
