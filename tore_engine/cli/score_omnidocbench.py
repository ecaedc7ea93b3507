"""`tore score omnidocbench --reference FILE [--layout FILE] [--markdown DIR] [--json]`
(formats.md section 5, omnidocbench.md section 6)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
    from tore_engine.omnidocbench.score import score_omnidocbench

    result = score_omnidocbench(args.reference, args.layout, args.markdown)
    _warn(result)
    print(json.dumps(result, ensure_ascii=False) if args.json else human_summary(result))
    return 0


def _warn(result: dict) -> None:
    layout, end_to_end = result["layout"], result["end_to_end"]
    if layout and layout["unknown_pages"]:
        print(f"tore: layout predictions for {len(layout['unknown_pages'])} page(s) not in the reference, "
              f"ignored: {', '.join(layout['unknown_pages'][:5])}", file=sys.stderr)
    if end_to_end and end_to_end["missing_pages"]:
        print(f"tore: {len(end_to_end['missing_pages'])} page(s) without a Markdown file, scored as empty",
              file=sys.stderr)
    if end_to_end and end_to_end["unknown_files"]:
        print(f"tore: Markdown file(s) matching no reference page, ignored: "
              f"{', '.join(end_to_end['unknown_files'][:5])}", file=sys.stderr)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def human_summary(result: dict) -> str:
    lines = [f"OmniDocBench: {result['pages']} page(s)"]
    swapped = result["reference"]["size_swapped_pages"]
    if swapped:
        lines.append(f"  page_info width/height swapped (corrected) on {len(swapped)} page(s)")
    layout = result["layout"]
    if layout:
        lines += ["", "Layout detection (COCO box AP, 10 classes; exact as the official evaluator):"]
        lines += [f"  {key:<10} {_number(layout[key])}" for key in ("mAP", "AP50", "AP75", "AP_small", "AP_medium", "AP_large")]
        lines.append("  per class AP@[.5:.95]:")
        lines += [f"    {name:<16} {_number(value)}" for name, value in layout["per_class"].items()]
        iou50 = layout["iou50"]
        lines.append(f"  at IoU 0.5: precision {_number(iou50['precision'])}, recall {_number(iou50['recall'])}, "
                     f"F1 {_number(iou50['f1'])} (project metric{'' if layout['has_scores'] else '; no scores, AP not meaningful'})")
    end_to_end = result["end_to_end"]
    if end_to_end:
        lines += ["", "End to end, page level (official metrics, project matcher: not leaderboard numbers):"]
        for key, note in (("text_edit", "lower is better"), ("reading_order_edit", "lower is better"),
                          ("table_teds", "higher is better"), ("table_teds_s", "higher is better"),
                          ("formula_edit", "lower is better"), ("overall", "needs formula CDM")):
            lines.append(f"  {key:<18} {_number(end_to_end[key])}   ({note})")
    return "\n".join(lines)
