"""`tore evaluate REFERENCE PREDICTION --out DIR` (docs/cli.md#reportjson).

This path imports neither Streamlit nor Plotly nor pandas, so that a run starts in a fraction of a
second.
"""

from __future__ import annotations

import argparse
import gc
import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from pathlib import Path

from tore_engine.api import FORMATS
from tore_engine.cli.options import integer, number
from tore_engine.core.text_safety import terminal_text
from tore_engine.metrics.map_types import CONVENTIONS
from tore_engine.metrics.sweep import MIN_SCORE_SIDES
from tore_engine.run.cluster import CONNECT_TIMEOUT_SECONDS, NO_WORKERS_TIMEOUT_SECONDS
from tore_engine.studio.data_root import data_root

MAX_WORKERS = 256  # beyond this a typo (--workers 10000) would fork the machine to a halt
SCHEDULER_VARIABLE = "DASK_SCHEDULER_ADDRESS"  # Dask's own name for the scheduler to use


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="TORE matrices of a prediction against a reference",
        description=(
            "Rasterise the reference and predicted boxes of every page into per-pixel label sets and "
            "build the multi-label confusion matrix (Algorithm 1 of Krstinic et al. 2020), with recall "
            "and precision matrices, the zero-trimmed and the reduced Background/Foreground views. "
            "Writes DIR/report.json, a CSV per matrix and pages.csv (and on request report.xlsx, report.html, "
            "cells.csv), and the saved evaluation that tore.open(DIR) and the app reopen without the inputs "
            "(saved.json, saved-text.json, saved-arrays.npz); prints a short summary."
        ),
    )
    parser.add_argument("reference", type=Path, help="reference layout (the dataset's annotations); rows of the matrix")
    parser.add_argument("prediction", type=Path, nargs="?",
                        help="predicted layout (a model's output); columns of the matrix (omit it for a docling-eval "
                        "dataset, which holds both sides)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder, created when missing")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="input format (docs/formats.md, 'Your data'): the native layout JSON (tore), JSON Lines of pages (jsonl), "
        "Parquet (parquet), COCO instances, images + categories, or results lists (coco), DoclingDocument "
        "files or folders (docling), DocTags folders (doctags), a docling-eval dataset folder "
        "(docling-eval), or a benchmark's own files (docile, funsd, omnidocbench); auto (default) "
        "recognises each side from its content",
    )
    parser.add_argument(
        "--images",
        type=Path,
        metavar="IMAGES.json",
        help="the COCO images + categories file that COCO results lists refer to (needed when both sides "
        "are results lists: model against model)",
    )
    parser.add_argument(
        "--page-images",
        type=Path,
        metavar="DIR",
        help="folder holding the page images or PDFs that the layout files name (default: beside each file); "
        "used for drawing only",
    )
    parser.add_argument(
        "--min-score",
        type=number(),
        metavar="S",
        help="drop the boxes scored below S on either side (or the prediction's only: --min-score-side) before rasterising "
        "(boxes without a score stay); how many is listed under warnings",
    )
    parser.add_argument(
        "--min-score-side",
        choices=MIN_SCORE_SIDES,
        default=MIN_SCORE_SIDES[0],
        help="whose boxes --min-score (and the --sweep) drops: both sides' (default), or the prediction's only, to compare a "
        "model against a scored pseudo-reference (another model's output) kept whole",
    )
    parser.add_argument(
        "--map",
        choices=(*CONVENTIONS, "off"),
        default="coco",
        help="COCO-style mAP of the same boxes beside TORE (single taxonomy only): coco (default) as pycocotools' "
        "COCOeval computes it, docling as docling-metrics-layout 0.17.0 reports it (float32 thresholds and values), "
        "or off. Boxes are used unclipped, after --min-score; boxes without a score rank as 1.0, in file order",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="also evaluate at the minimum scores 0.05, 0.10, ..., 0.95 (each point exactly a run with --min-score; "
        "from all boxes, whatever --min-score says): Foreground and per-class F1 with the best minimum score, and beside "
        "them mAP's AP and detection precision, recall and F1 at IoU 0.50; written to report.json and DIR/sweep.csv",
    )
    parser.add_argument(
        "--taxonomy",
        choices=("auto", "single", "dual"),
        default="auto",
        help="single: one class list for both sides; dual: the union of both class lists, prefixed "
        "with each side's name, for a prediction in another taxonomy; auto (default): single when "
        "every prediction class is a reference class",
    )
    parser.add_argument(
        "--label-map",
        type=Path,
        metavar="FILE",
        help='JSON object {"old label": "new label"} applied to both sides before evaluation, to '
        "rename or merge classes (many-to-one allowed)",
    )
    parser.add_argument(
        "--page-id-map",
        action="append",
        metavar="FILE|RULE",
        help="how the prediction's page ids become the reference's, when two tools name the same pages differently: a "
        "rule (strip-prefix:TEXT, strip-suffix:TEXT, add-prefix:TEXT, add-suffix:TEXT), a table FILE (a JSON object "
        '{"prediction id": "reference id"} or a CSV file with the header prediction,reference), or both (give the option '
        "twice; the table maps the ids it lists, the rule the others). When no prediction page id matches a reference "
        "page id, the run stops and names the rule that would map them",
    )
    parser.add_argument(
        "--workers",
        type=integer(1, MAX_WORKERS),
        default=min(os.cpu_count() or 1, 8),
        metavar="N",
        help=f"local worker processes, 1 to {MAX_WORKERS} (default: the number of cores, at most 8; a job under "
        "3,000 pages runs in one, which is faster); the result is the same, bit for bit, for any N",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a Dask scheduler (tcp://host:port) to run the pages on a cluster instead "
        f"of local processes (default: ${SCHEDULER_VARIABLE} when set; this option wins); needs the "
        f"'dask' extra. Connecting may take at most {CONNECT_TIMEOUT_SECONDS} s, and the evaluation "
        f"fails once the cluster has had no worker for {NO_WORKERS_TIMEOUT_SECONDS} s",
    )
    parser.add_argument("--run-name", metavar="NAME", help="a name for this run (checkpoint-12, say), kept in DIR/saved.json: the "
                        "app's Runs page shows it and can order a history by it (default: DIR's folder name)")
    parser.add_argument("--json", action="store_true", help="print report.json on stdout (the same bytes as the file), "
                        "instead of the summary")
    parser.add_argument("-q", "--quiet", action="store_true", help="print neither the summary nor the progress bar")
    parser.add_argument("--xlsx", action="store_true", help="also write DIR/report.xlsx: the matrices coloured, the same "
                        "with all-zero rows and columns hidden, per page, per class and warnings")
    parser.add_argument("--html", action="store_true", help="also write DIR/report.html: one self-contained page with the "
                        "app's interactive heatmaps and the tables (needs the 'app' extra's Plotly)")
    parser.add_argument("--cells", action="store_true", help="also write DIR/cells.csv: every page's contribution to every "
                        "matrix cell (page, reference_class, predicted_class, pixels, share_of_cell), the app's drill-down")
    parser.add_argument("--boxes", action="store_true", help="also write DIR/boxes.csv: every box of both sides with what "
                        "TIDE (tidecv 1.0.1) makes of it at IoU 0.5: outcome (tp, fp, fn, ignored), error type (Cls, Loc, Both, "
                        "Dupe, Bkg, Miss), the partner box and the IoU with it (single taxonomy)")
    parser.set_defaults(func=run)


@contextmanager
def _executor(scheduler: str | None) -> Iterator[Executor | None]:
    """A Dask cluster's executor when a scheduler address is given, else None (local workers)."""
    if not scheduler:
        yield None
        return
    from tore_engine.run.cluster import cluster_executor

    with cluster_executor(scheduler) as executor:
        yield executor


def run(args: argparse.Namespace) -> int:
    """Check --out (and hold it: `output.staged_output`) and reach the scheduler first, so that neither
    fails after the whole evaluation."""
    from tore_engine import __version__
    from tore_engine.api import evaluate_pair, load_pair
    from tore_engine.results.saved import SAVED_FILES, run_info, write_saved
    from tore_engine.run.runner import input_bytes, terminal_progress, terminal_reading
    from tore_engine.writers.outputs import REPORT_FILES, output_files, stale_files, write_outputs
    from tore_engine.writers.staging import staged_output

    gc.freeze()  # the modules loaded live until the process ends: no collection looks through them again
    scheduler = args.scheduler or os.environ.get(SCHEDULER_VARIABLE)
    reports = [report for report in REPORT_FILES if getattr(args, report)]
    if "html" in reports:
        from tore_engine.writers.html import require_plotly

        require_plotly()
    from tore_engine.formats.page_id_map import RULE_PATTERN, page_id_map

    id_map = page_id_map(args.page_id_map)  # a bad map fails now, not after reading the inputs
    map_files = [Path(value) for value in args.page_id_map or [] if not RULE_PATTERN.match(value)]
    read = [path for path in (args.reference, args.prediction, args.images, args.label_map, *map_files) if path is not None]
    with staged_output(args.out, (*output_files(reports), *SAVED_FILES), read, stale_files(reports)) as staging, _executor(scheduler) as executor:
        with terminal_reading(input_bytes(args.reference, args.prediction), enabled=not args.quiet):
            reference, prediction = load_pair(args.reference, args.prediction, args.format, coco_images=args.images,
                                              page_images=args.page_images)
        with terminal_progress(len(reference.pages), enabled=not args.quiet) as progress:
            # `evaluate_pair`, not `evaluate`: no notebook summary of the warnings, which report.json lists
            # (0.17-0.19 s at 100,000 pages, and ignored here)
            evaluation = evaluate_pair(reference, prediction, taxonomy=args.taxonomy, label_map=args.label_map, min_score=args.min_score,
                                       workers=args.workers, executor=executor, progress=progress, map=args.map, sweep=args.sweep,
                                       page_id_map=id_map, min_score_side=args.min_score_side).evaluation
        run = run_info({"reference": args.reference, "prediction": args.prediction, "reference_name": reference.name,
                        "prediction_name": prediction.name, "format": args.format, "images": args.images, "page_images": args.page_images,
                        "taxonomy": args.taxonomy, "label_map": args.label_map, "min_score": args.min_score, "map": args.map,
                        "sweep": args.sweep, "min_score_side": args.min_score_side, "name": args.run_name,
                        "page_id_map": [value if RULE_PATTERN.match(value) else str(Path(value).absolute()) for value in args.page_id_map or []]
                        or None})

        def write(folder: Path) -> None:
            gc.freeze()  # what the run holds lives until the process ends: no collection looks through it again
            write_outputs(evaluation.report_content(), folder, reports)
            write_saved(evaluation, folder, run, __version__)  # what `tore.open(DIR)` reopens (docs/cli.md#saved-evaluations)

        staging.save(write)
        if args.json:  # while the run holds --out: no other run's report.json in between
            with (args.out / "report.json").open(encoding="ascii") as written:
                shutil.copyfileobj(written, sys.stdout)
    if not args.json and not args.quiet:
        print(evaluation.summary(args.out))
        if args.out is not None:
            print(app_hint(args.out, [path for path in (args.reference, args.prediction, args.images, args.page_images) if path is not None]))
    return 0


def app_hint(out: Path, inputs: list[Path]) -> str:
    """The command that opens a saved folder in TORE Studio, which reads paths only inside its data
    root (the folder it is started in, or `$TORE_STUDIO_DATA_ROOT`): that folder when it holds the
    run and its `inputs` (which Overlays reads again), else the folder holding them all."""
    folder = out.resolve()
    current = root = data_root()
    files = [folder, *(path.resolve() for path in inputs)]
    apart = ""
    if not all(path.is_relative_to(root) for path in files):
        common = Path(os.path.commonpath(files))
        if common != Path(common.anchor):
            root = common
        else:  # no data root short of the whole file system holds them all: the folder's own, and why
            root = root if folder.is_relative_to(root) else folder.parent
            apart = (" (its inputs lie outside that folder: Overlays reads the boxes from them, so put them under it, "
                     "or the run and its inputs under one folder)")
    command = f"tore app {shlex.quote(str(folder.relative_to(root)))}"
    if root != current:
        command = f"TORE_STUDIO_DATA_ROOT={shlex.quote(str(root))} {command}"
    return terminal_text(f"Open it in TORE Studio: {command}{apart}")
