"""The one composition root: load -> label map -> run -> `Evaluation`.

`tore.evaluate` (the notebook API), `tore evaluate` (the CLI) and the app all come through here, so
that a file reads, maps and scores the same way wherever it is opened. `load`, `load_pair` and
`evaluate`, the notebook's functions, sum up the input warnings of what they return in one Python
warning (`ToreWarning`); the CLI lists them in report.json instead, the app in its own table. The registry of formats lives
here too: the formats whose files each hold one side, and those read as a pair from their own files
(a docling-eval dataset, the benchmarks' folders), which is why it sits above the scorers.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tore_engine.core.errors import InputError, InputWarning, ToreWarning, warnings_summary
from tore_engine.core.layout import LayoutSet
from tore_engine.core.taxonomy import apply_label_map, label_map_warnings
from tore_engine.formats.detect import detect_format
from tore_engine.formats.page_id_map import PageIdMapSpec
from tore_engine.formats.page_id_map import page_id_map as read_page_id_map
from tore_engine.results.evaluation import Evaluation

if TYPE_CHECKING:
    from tore_engine.results.tags import TagStore

# Formats whose files each hold one side, and the module that reads them.
SIDE_FORMATS: dict[str, str] = {
    "tore": "tore_engine.formats.native",
    "jsonl": "tore_engine.formats.jsonl",
    "parquet": "tore_engine.formats.parquet",
    "coco": "tore_engine.formats.coco",
    "docling": "tore_engine.formats.docling",
    "doctags": "tore_engine.formats.doctags",
    "yolo": "tore_engine.formats.yolo",
    "labelme": "tore_engine.formats.labelme",
    "page-xml": "tore_engine.formats.page_xml",
    "docbank": "tore_engine.formats.docbank",
}
# Formats read as a pair from their own files: (module, function(reference, prediction)).
PAIR_FORMATS: dict[str, tuple[str, str]] = {
    "docling-eval": ("tore_engine.formats.docling_eval", "read_pair"),
    "docile": ("tore_engine.scorers.docile.tore_sets", "load_docile_pair"),
    "funsd": ("tore_engine.scorers.funsd.tore_sets", "funsd_layout_sets"),
    "omnidocbench": ("tore_engine.scorers.omnidocbench.tore_sets", "omnidocbench_layout_sets"),
}
FORMATS = ("auto", *SIDE_FORMATS, *PAIR_FORMATS)
PARSED_FORMATS = ("tore", "jsonl")  # read by the compiled page parser (`formats.page_parser`)
Pair = tuple[LayoutSet, LayoutSet]
Progress = Callable[[int, int], None]


def _check_format(format_name: str) -> None:
    if format_name not in FORMATS:
        raise InputError(f"unknown format {format_name!r}; known: {', '.join(FORMATS[1:])}")


def _reader(format_name: str) -> Callable[..., LayoutSet]:
    reader: Callable[..., LayoutSet] = importlib.import_module(SIDE_FORMATS[format_name]).read
    return reader


def _sum_up(input_warnings: Sequence[InputWarning], where: str) -> None:
    """The notebook's one warning for all of a result's input warnings (none when it has none),
    pointing at the caller's line."""
    if input_warnings:
        warnings.warn(warnings_summary(input_warnings, where), ToreWarning, stacklevel=3)


def load(path: str | Path, format: str = "auto", *, page_images: str | Path | None = None,
         coco_images: str | Path | None = None) -> LayoutSet:
    """One side's layout set from a file or folder in any section-6 format.

    `page_images`: the folder where the page images or PDFs named in the file are (default: beside
    the file). `coco_images`: the COCO images + categories file a COCO results list refers to.
    What was skipped or defaulted is in its `.warnings`, summed up in one `ToreWarning`.
    """
    layout = _read_side(path, format, page_images=page_images, coco_images=coco_images)
    _sum_up(layout.warnings, "the layout set's .warnings")
    return layout


def _read_side(path: str | Path, format: str = "auto", *, page_images: str | Path | None = None,
               coco_images: str | Path | None = None, detected: bool = False) -> LayoutSet:
    """`load` without the notebook's warning. `detected`: `format` was told from the content (by
    `_read_pair`), as `auto` here tells it: a file of two formats at once is then refused."""
    _check_format(format)
    path = Path(path)
    detected = detected or format == "auto"
    format = detect_format(path) if format == "auto" else format
    if format in PAIR_FORMATS:
        raise InputError(f"a {format} input holds both sides: read it with load_pair", file=str(path))
    folder = Path(page_images) if page_images is not None else None
    if format == "coco":
        from tore_engine.formats import coco

        return coco.read_any(path, page_images=folder, coco_images=Path(coco_images) if coco_images else None, detected=detected)
    return _reader(format)(path, page_images=folder)


def load_pair(reference: str | Path, prediction: str | Path | None = None, format: str | tuple[str, str] = "auto", *,
              page_images: str | Path | None = None, coco_images: str | Path | None = None) -> Pair:
    """The reference and prediction layout sets, in any format `tore evaluate` reads (`_read_pair`);
    what was skipped or defaulted is in their `.warnings`, summed up in one `ToreWarning`."""
    pair = _read_pair(reference, prediction, format, page_images=page_images, coco_images=coco_images)
    _sum_up([*pair[0].warnings, *pair[1].warnings], "the layout sets' .warnings")
    return pair


def _read_pair(reference: str | Path, prediction: str | Path | None = None, format: str | tuple[str, str] = "auto", *,
               page_images: str | Path | None = None, coco_images: str | Path | None = None) -> Pair:
    """The reference and prediction layout sets, in any format `tore evaluate` reads.

    `format` is one format for both sides or one a side; `auto` recognises a side from its content.
    A format that holds both sides (a docling-eval dataset, the benchmarks' folders) reads them
    from the reference (and the prediction path, where it has one of its own; the same path
    given twice is one dataset). A COCO results list is read against `coco_images`, or against the
    reference when it is a COCO instances or images file.
    """
    reference_format, prediction_format = (format, format) if isinstance(format, str) else format
    _check_format(reference_format)
    _check_format(prediction_format)
    reference = Path(reference)
    detected = (reference_format == "auto", prediction_format == "auto")
    reference_format = detect_format(reference) if reference_format == "auto" else reference_format
    if reference_format in PAIR_FORMATS:
        module, function = PAIR_FORMATS[reference_format]
        other = Path(prediction) if prediction is not None else None
        if reference_format == "docling-eval" and other == reference:
            other = None  # the dataset given as both paths holds both sides
        return getattr(importlib.import_module(module), function)(reference, other)
    if prediction is None:
        raise InputError("a prediction is needed (only a docling-eval dataset holds both sides)", file=str(reference))
    prediction = Path(prediction)
    prediction_format = detect_format(prediction) if prediction_format == "auto" else prediction_format
    if prediction_format in PAIR_FORMATS:
        raise InputError(f"a {prediction_format} input cannot be the prediction of a {reference_format} reference", file=str(prediction))
    if "coco" in (reference_format, prediction_format):
        from tore_engine.formats import coco

        if coco_images is None and reference_format == "coco" and coco.is_images_file(reference):
            coco_images = reference
    options: dict[str, Any] = {"page_images": page_images, "coco_images": coco_images}
    if _read_at_once(reference, reference_format) and _read_at_once(prediction, prediction_format):
        return _load_both(reference, prediction, reference_format, prediction_format, options)
    return (_read_side(reference, reference_format, detected=detected[0], **options),
            _read_side(prediction, prediction_format, detected=detected[1], **options))


def _read_at_once(path: Path, format: str) -> bool:
    """Whether this side is read by code that releases the GIL (the compiled page parser, pyarrow)
    and is large enough to gain from it: then both sides are read at once, in two threads."""
    from tore_engine.formats import page_parser
    from tore_engine.io.json import KERNEL_MIN_BYTES

    size = path.stat().st_size if path.is_file() else 0
    if size < KERNEL_MIN_BYTES:
        return False
    return format == "parquet" or (format in PARSED_FORMATS and page_parser.wanted(size))


def _load_both(reference: Path, prediction: Path, reference_format: str, prediction_format: str, options: dict[str, Any]) -> Pair:
    """Both sides read in two threads, each with the caller's context (its progress callback); the
    reference's error first when both fail, as when they are read one after the other. When one
    side fails, or Ctrl-C reaches this thread, the other stops within a chunk (`progress.stoppable`)."""
    from tore_engine.formats.progress import stoppable

    with stoppable() as stop, ThreadPoolExecutor(max_workers=2, thread_name_prefix="tore-read") as pool:
        sides = [pool.submit(contextvars.copy_context().run, functools.partial(_read_side, path, format, **options))
                 for path, format in ((reference, reference_format), (prediction, prediction_format))]
        try:
            return sides[0].result(), sides[1].result()
        except BaseException:
            stop.set()
            raise

@dataclass(frozen=True)
class EvaluatedPair:
    """An evaluation with the two layout sets it was made from, as evaluated (after the label
    map): what the app draws its overlays from."""

    reference: LayoutSet
    prediction: LayoutSet
    evaluation: Evaluation


def _label_map(label_map: Mapping[str, str] | str | Path | None) -> dict[str, str]:
    from tore_engine.formats.label_map import read_label_map

    return read_label_map(label_map) if isinstance(label_map, (str, Path)) else dict(label_map or {})


def evaluate_pair(
    reference: LayoutSet | str | Path,
    prediction: LayoutSet | str | Path | None = None,
    *,
    format: str | tuple[str, str] = "auto",
    taxonomy: str = "auto",
    label_map: Mapping[str, str] | str | Path | None = None,
    min_score: float | None = None,
    workers: int = 1,
    executor: Executor | None = None,
    progress: Progress | None = None,
    page_images: str | Path | None = None,
    coco_images: str | Path | None = None,
    map: str = "coco",
    sweep: bool = False,
    page_id_map: PageIdMapSpec | Sequence[PageIdMapSpec] | None = None,
    min_score_side: str = "both",
) -> EvaluatedPair:
    """Load (unless given layout sets), apply the label map to both sides, run the evaluation
    (with mAP in convention `map`, the sweep when `sweep`, the prediction's page ids mapped by
    `page_id_map`: see `evaluate`)."""
    from tore_engine.run.runner import evaluate_dataset

    if isinstance(reference, LayoutSet) and isinstance(prediction, LayoutSet):
        pair = reference, prediction
    elif not isinstance(reference, LayoutSet) and not isinstance(prediction, LayoutSet):
        pair = _read_pair(reference, prediction, format, page_images=page_images, coco_images=coco_images)
    elif prediction is None:
        raise InputError("a prediction is needed")
    else:
        formats = (format, format) if isinstance(format, str) else format
        sides = [side if isinstance(side, LayoutSet) else _read_side(side, side_format, page_images=page_images, coco_images=coco_images)
                 for side, side_format in zip((reference, prediction), formats)]
        pair = sides[0], sides[1]
    mapping = _label_map(label_map)
    unused_keys: list[InputWarning] = label_map_warnings(mapping, *pair)
    mapped_reference, mapped_prediction = (apply_label_map(side, mapping) for side in pair)
    evaluation = evaluate_dataset(mapped_reference, mapped_prediction, taxonomy=taxonomy, min_score=min_score, workers=workers,
                                  executor=executor, progress=progress, warnings=unused_keys, map=map, sweep=sweep,
                                  page_id_map=read_page_id_map(page_id_map), min_score_side=min_score_side)
    return EvaluatedPair(mapped_reference, mapped_prediction, evaluation)


def evaluate(
    reference: LayoutSet | str | Path,
    prediction: LayoutSet | str | Path | None = None,
    *,
    format: str | tuple[str, str] = "auto",
    taxonomy: str = "auto",
    label_map: Mapping[str, str] | str | Path | None = None,
    min_score: float | None = None,
    workers: int = 1,
    executor: Executor | None = None,
    progress: Progress | None = None,
    page_images: str | Path | None = None,
    coco_images: str | Path | None = None,
    map: str = "coco",
    sweep: bool = False,
    page_id_map: PageIdMapSpec | Sequence[PageIdMapSpec] | None = None,
    min_score_side: str = "both",
) -> Evaluation:
    """TORE matrices of `prediction` against `reference` (layout sets, or paths in any format).

    `taxonomy`: auto, single or dual. `label_map`: {old label: new label} (or a JSON file of one),
    applied to both sides. `min_score`: drop boxes scored below it, on both sides, or the
    prediction's only with `min_score_side="prediction"` (a scored pseudo-reference kept whole). `workers` local processes, or
    any `concurrent.futures.Executor` (a Dask client's `get_executor()`); the result is the same,
    bit for bit. A docling-eval dataset holds both sides: `evaluate(DATASET, format="docling-eval")`.
    What was clipped, skipped or defaulted is in its `.warnings`, summed up in one `ToreWarning`.
    `map`: COCO-style mAP beside TORE (`ev.map`), "coco" (pycocotools' COCOeval), "docling"
    (docling-metrics-layout 0.17.0's numbers) or "off"; single taxonomy only. `sweep=True` makes
    `ev.sweep()` with the evaluation (in the same worker batches) instead of by a second run.
    `page_id_map`: how the prediction's page ids become the reference's, when two tools name the
    same pages differently: a rule ("strip-prefix:doc_", "strip-suffix:", "add-prefix:",
    "add-suffix:"), a table ({prediction id: reference id}, or a JSON or CSV file of one), or
    [table, rule]. When no prediction page id matches a reference page id, evaluating is an
    `InputError` naming a few ids of each side and the rule that would map them.
    """
    evaluation = evaluate_pair(reference, prediction, format=format, taxonomy=taxonomy, label_map=label_map, min_score=min_score,
                               workers=workers, executor=executor, progress=progress, page_images=page_images,
                               coco_images=coco_images, map=map, sweep=sweep, page_id_map=page_id_map,
                               min_score_side=min_score_side).evaluation
    _sum_up(evaluation.input_warnings, "the evaluation's .warnings")
    return evaluation


def open(folder: str | Path) -> Evaluation:  # noqa: A001 - `tore.open`, the name docs/cli.md#saved-evaluations gives it
    """The evaluation that `tore evaluate ... --out DIR` saved in `folder` (or the folder of its
    report.json), without its inputs: the same report.json, pages, cells, per-class scores and mAP.
    A file of it truncated, edited, replaced or of another version is an `InputError` naming the
    file; nothing in it is ever run (no pickle)."""
    from tore_engine.results.saved import open_saved

    return open_saved(folder)


def tags(database: str | Path | None = None) -> TagStore:
    """The tags on pages and boxes and the saved views the app keeps (`results.tags.TagStore`): of
    the SQLAlchemy URL or SQLite file `database`, else `$TORE_STUDIO_DB`, else `.tore-studio.sqlite`
    in the current folder. `store.add(dataset, page, name, note=..., side=, box=)`, `store.pages(dataset, name)`."""
    from tore_engine.results.tags import tags as opened

    return opened(database)


def saved_inputs(folder: str | Path, *, checked: Callable[[str], Path] = Path) -> Pair:
    """The layout sets the evaluation saved in `folder` was made from, read again as its run read
    them (formats, COCO images, page images; the label map applied; not the minimum score), while
    they are still where the run found them; each path recorded goes through `checked` first (the
    app confines them to its data root). An `InputError` names what is missing."""
    from tore_engine.core.taxonomy import apply_label_map
    from tore_engine.results.saved import read_manifest

    run = read_manifest(folder).manifest.run
    paths = {name: None if value is None else checked(value) for name, value in
             (("reference", run.reference), ("prediction", run.prediction), ("images", run.images), ("page_images", run.page_images),
              ("label_map", run.label_map))}
    missing = [str(path) for name, path in paths.items() if path is not None and name != "page_images" and not path.exists()]
    if paths["reference"] is None or missing:
        raise InputError(f"the inputs of this evaluation are not there any more ({', '.join(missing) or 'unknown'}): its boxes and "
                         "pages are read from them", file=str(folder))
    pair = _read_pair(paths["reference"], paths["prediction"], run.format or "auto", coco_images=paths["images"],
                      page_images=paths["page_images"])
    mapping = _label_map(paths["label_map"])
    reference, prediction = apply_label_map(pair[0], mapping), apply_label_map(pair[1], mapping)
    if run.page_id_map:  # the prediction's pages under the reference's ids, as the run matched them
        from dataclasses import replace

        from tore_engine.formats.page_id_map import RULE_PATTERN

        if (id_map := read_page_id_map([value if RULE_PATTERN.match(value) else checked(value) for value in run.page_id_map])) is not None:
            renamed = id_map.mapped(prediction.page_ids())
            prediction = LayoutSet(prediction.name, [replace(page, id=new) for page, new in zip(prediction.pages, renamed)], prediction.taxonomy)
    return reference, prediction
