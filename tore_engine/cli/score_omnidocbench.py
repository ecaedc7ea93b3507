"""`tore score omnidocbench --reference FILE [--layout FILE] [--markdown DIR] [--json]`
(formats.md section 5, omnidocbench.md section 6)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tore_engine.cli.score_output import print_result

DESCRIPTION = (
    "Score OmniDocBench predictions. With --layout: layout-detection COCO box AP over the 10 merged "
    "classes of the official configuration (mAP, AP50, AP75, AP by size, per-class AP), exactly as the "
    "official evaluator computes it, plus precision/recall/F1 at IoU 0.5 (for predictions without "
    "scores). With --markdown: page-level end-to-end scores (text edit distance, reading-order edit "
    "distance, table TEDS/TEDS-S, formula edit); their per-pair metrics and aggregation are the official "
    "ones, but pages are matched by this project's segment matcher, not the official quick_match, so "
    "they are not leaderboard numbers. Overall is null: it needs formula CDM, which is not computed."
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "omnidocbench", help="OmniDocBench layout-detection AP and end-to-end page scores", description=DESCRIPTION
    )
    parser.add_argument("--reference", type=Path, required=True, metavar="FILE",
                        help="the ground truth, an OmniDocBench.json (page images are read from images/ beside it "
                        "when present, to correct swapped page sizes)")
    parser.add_argument("--layout", type=Path, metavar="FILE",
                        help="layout-detection prediction: the official {\"results\": [...], \"categories\": {...}} "
                        "form, a COCO results list (image_id = 1-based page position, category_id 1..10), or a "
                        "layout JSON whose page ids are the image names")
    parser.add_argument("--markdown", type=Path, metavar="DIR",
                        help="folder of per-page Markdown predictions named <image stem>.md (a missing file is an "
                        "empty page)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: layout, end_to_end (null when not requested), pages, per_page")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tore_engine.omnidocbench import score_omnidocbench

    return print_result(score_omnidocbench(args.reference, args.layout, args.markdown), args.json)
