"""`tore export DIR`: the pages of a saved evaluation that a selection names (a tag, a matrix cell,
or all), as a CSV of page ids and as COCO files of both sides for an annotation tool (issue 39).

The page ids come from the saved evaluation alone (`tore.open`, the tags database); the boxes from
its inputs, read again as the run read them (the formats, label map and minimum score saved.json
records), so they must still be where the run found them.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet
from tore_engine.metrics.box_outcomes import PAGE_COUNT_COLUMNS

PREDICTIONS_SUFFIX = ".predictions.json"  # beside --coco OUT.json: the prediction's results list


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="the pages of a saved evaluation (a tag, a cell, all) as page ids and COCO files for an annotation tool",
        description=(
            "Select pages of the evaluation saved in DIR by tore evaluate --out DIR: those carrying a tag (tore.tags, the "
            "app's tags), those behind a matrix cell, those with a box of one of TIDE's error types, or all of them; write their ids as CSV (--pages) and both sides as COCO "
            "(--coco OUT.json: images, categories and the reference's annotations; OUT.predictions.json: the prediction's "
            "results with their scores), ready for CVAT or Label Studio. tore evaluate OUT.json OUT.predictions.json reads "
            "them back as the same pages and boxes. The boxes are read from the run's inputs, which must still be there."
        ),
    )
    parser.add_argument("folder", type=Path, metavar="DIR", help="a folder tore evaluate --out wrote")
    selection = parser.add_mutually_exclusive_group()
    selection.add_argument("--tag", metavar="NAME", help="the pages tagged NAME (on the page or one of its boxes) in the reference's dataset")
    selection.add_argument("--cell", metavar="REFERENCE/PREDICTED", help="the pages behind a cell of the full matrix, e.g. Text/Table")
    selection.add_argument("--error", metavar="TYPE", choices=PAGE_COUNT_COLUMNS[1:],
                           help=f"the pages with at least one box of TIDE's error type TYPE, or a false positive or negative "
                                f"({', '.join(PAGE_COUNT_COLUMNS[1:])}; pages.csv's counts)")
    parser.add_argument("--db", metavar="URL", help="the tags database: an SQLAlchemy URL or an SQLite file (default: $TORE_STUDIO_DB, "
                        "else .tore-studio.sqlite in the current folder)")
    parser.add_argument("--pages", type=Path, metavar="OUT.csv", help="write the page ids, one a row (column `page`)")
    parser.add_argument("--coco", type=Path, metavar="OUT.json", help=f"write both sides as COCO (OUT.json and OUT{PREDICTIONS_SUFFIX})")
    parser.set_defaults(func=run)


def selected_pages(folder: Path, tag: str | None, cell: str | None, database: str | None, error: str | None = None) -> list[str]:
    """The page ids of the selection, in the evaluation's page order."""
    from tore_engine.api import open as open_saved
    from tore_engine.results.saved import read_manifest

    evaluation = open_saved(folder)
    if tag is not None:
        from tore_engine.results.tags import tags

        dataset = read_manifest(folder).manifest.run.reference_name or "reference"
        wanted = set(tags(database).pages(dataset, tag))
    elif cell is not None:
        row, slash, column = cell.partition("/")
        if not slash:
            raise InputError(f"--cell takes REFERENCE/PREDICTED (two class names and a slash), got {cell!r}")
        try:
            wanted = set(evaluation.pages_for_cell(row, column)["page"])
        except KeyError as error:
            raise InputError(f"--cell {cell}: {error.args[0]}") from None
    elif error is not None:
        counts = evaluation.page_counts()
        if counts is None:
            raise InputError(f"--error {error}: this evaluation has no box outcomes ({evaluation.errors_reason or 'not computed'})")
        has_error = counts[:, PAGE_COUNT_COLUMNS.index(error)] > 0
        wanted = {page for page, hit in zip(evaluation.page_ids, has_error.tolist()) if hit}
    else:
        return list(evaluation.page_ids)
    return [page for page in evaluation.page_ids if page in wanted]


def evaluated_sides(folder: Path, pages: list[str]) -> tuple[LayoutSet, LayoutSet]:
    """Both sides of `pages` as the run evaluated them: read from its inputs (`api.saved_inputs`), the
    minimum score applied to the sides it was (`--min-score-side`)."""
    from tore_engine.api import saved_inputs
    from tore_engine.results.saved import read_manifest

    run = read_manifest(folder).manifest.run
    wanted = set(pages)

    def kept(layout: LayoutSet, min_score: float | None) -> LayoutSet:
        chosen = [page for page in layout.pages if page.id in wanted]
        if min_score is not None:
            chosen = [page.above_score(min_score)[0] for page in chosen]
        return LayoutSet(layout.name, chosen, layout.taxonomy)

    reference, prediction = saved_inputs(folder)
    return kept(reference, None if run.min_score_side == "prediction" else run.min_score), kept(prediction, run.min_score)


@contextmanager
def _atomic(path: Path) -> Iterator[Path]:
    """A temporary file beside `path`, moved onto it once written whole."""
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(descriptor)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(name, 0o666 & ~umask)  # as any file written by open(), not mkstemp's 0600
    try:
        yield Path(name)
        os.replace(name, path)
    finally:
        Path(name).unlink(missing_ok=True)


def _write_pages(path: Path, pages: list[str]) -> None:
    from tore_engine.core.text_safety import write_csv

    with _atomic(path) as temporary, temporary.open("w", newline="", encoding="utf-8") as handle:
        write_csv(handle, chain([["page"]], ([page] for page in pages)))


def _write_coco(folder: Path, path: Path, pages: list[str]) -> None:
    from tore_engine.formats.coco import write_pair

    reference, prediction = evaluated_sides(folder, pages)
    results = path.with_name(path.name.removesuffix(".json") + PREDICTIONS_SUFFIX)
    with _atomic(path) as instances, _atomic(results) as detections:
        write_pair(reference, prediction, instances, detections)


def run(args: argparse.Namespace) -> int:
    if args.pages is None and args.coco is None:
        raise InputError("nothing to write: give --pages OUT.csv, --coco OUT.json or both")
    for path in (args.pages, args.coco):
        if path is not None and not path.parent.is_dir():
            raise InputError(f"the folder of {path} does not exist")
    pages = selected_pages(args.folder, args.tag, args.cell, args.db, args.error)
    if args.coco is not None:  # first: the one that can fail on the inputs
        _write_coco(args.folder, args.coco, pages)
    if args.pages is not None:
        _write_pages(args.pages, pages)
    return 0
