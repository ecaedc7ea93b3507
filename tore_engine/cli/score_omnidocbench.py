"""`tore score omnidocbench --reference FILE [--layout FILE] [--markdown DIR] [--out DIR] [--json]`
(docs/cli.md#tore-score, docs/benchmarks.md#omnidocbench-output)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tore_engine.cli.score_output import print_result
from tore_engine.core.errors import InputError

DESCRIPTION = (
    "Score OmniDocBench predictions. With --layout: layout-detection COCO box AP over the 10 merged "
    "classes of the official configuration (mAP, AP50, AP75, AP by size, per-class AP), exactly as the "
    "official evaluator computes it, plus precision/recall/F1 at IoU 0.5 (for predictions without "
    "scores). With --markdown: the end-to-end scores exactly as the official OmniDocBench v1.6 "
    "evaluator computes them (its quick_match matching, normalisation and quirks; leaderboard-comparable): "
    "text edit distance, reading-order edit distance (and beside it the value with the official first-table "
    "quirk corrected), table TEDS/TEDS-S at page level and over tables, table edit, display-formula edit, "
    "with the official breakdowns and every page's values. Unlike the official evaluator it has no time "
    "limits. Overall is null: it needs formula CDM, which is not computed."
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
                        help="folder of per-page Markdown predictions, found as the official evaluator finds them: "
                        "<image name less its 4-character extension>.md, then that name without .pdf as .mmd and .md, "
                        "then <image name>.md (a page without a file is scored as an empty page)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="also write the official v1.6 evaluator's result files into DIR (needs --markdown): "
                        "<markdown folder name>_quick_match_metric_result.json, _run_summary.json, _stage_execution.json "
                        "and _runtime_environment.json, with upstream's names and keys, so that its result parser reads "
                        "them (Overall null: formula CDM is not computed)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: layout, end_to_end (null when not requested), pages, per_page")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tore_engine.scorers.omnidocbench import score_omnidocbench

    if args.out is None:
        return print_result(score_omnidocbench(args.reference, args.layout, args.markdown), args.json)
    if args.markdown is None:
        raise InputError("--out writes the official evaluator's end-to-end result files, which need --markdown DIR")
    from tore_engine.scorers.omnidocbench.result_files import file_names, result_files, save_name, write_result_files
    from tore_engine.writers.staging import staged_output

    name = save_name(args.markdown)
    inputs = [path for path in (args.reference, args.layout) if path is not None]
    with staged_output(args.out, file_names(name), inputs) as staging:
        result = score_omnidocbench(args.reference, args.layout, args.markdown)
        files = result_files(result.data["end_to_end"], result.data["pages"], name)
        staging.save(lambda folder: write_result_files(files, folder))
    return print_result(result, args.json)
