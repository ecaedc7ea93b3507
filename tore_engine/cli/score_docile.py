"""`tore score docile`: DocILE KILE and LIR scores as docile-benchmark 0.3.5 computes them."""

from __future__ import annotations

import argparse
from pathlib import Path

from tore_engine.cli.options import number
from tore_engine.cli.score_output import print_result


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
        type=number(0, 1),
        default=1.0,
        metavar="T",
        help="PCC IoU needed for a match, 0 to 1 (default 1.0, the official value; lower values are "
        "for debugging, and IoU > T - 1e-6 passes)",
    )
    parser.add_argument("--json", action="store_true", help='print {"kile": metrics | null, "lir": metrics | null}')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tore_engine.scorers.docile import score_docile

    return print_result(score_docile(args.dataset, args.split, args.kile, args.lir, args.iou_threshold), args.json)
