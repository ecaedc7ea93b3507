"""Reading layouts in the formats users have (formats.md section 6): one module a format, each
producing the same `LayoutSet`, so everything after loading is shared.

- `load(path, format="auto")` reads one side; `load_pair(reference, prediction)` reads both,
  which some formats need: a COCO results list is read against an images + categories file, a
  docling-eval dataset holds both sides, and the benchmarks' own folders pair their files.
- `--format auto` looks at the content (`detect`), never at the file name.
- Every reader goes through `tore_engine.inputs`: bounded files, depth-checked JSON without
  duplicate keys, strict schemas, page images confined to their folder.
"""

from __future__ import annotations

import contextvars
import importlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

from tore_engine.errors import InputError
from tore_engine.formats.detect import detect_format
from tore_engine.layout import LayoutSet

# Formats whose files each hold one side, and the module that reads them.
SIDE_FORMATS: dict[str, str] = {
    "tore": "tore_engine.formats.native",
    "jsonl": "tore_engine.formats.jsonl",
    "parquet": "tore_engine.formats.parquet",
    "coco": "tore_engine.formats.coco",
    "docling": "tore_engine.formats.docling",
    "doctags": "tore_engine.formats.doctags",
}
# Formats read as a pair from their own files: (module, function(reference, prediction)).
PAIR_FORMATS: dict[str, tuple[str, str]] = {
    "docling-eval": ("tore_engine.formats.docling_eval", "read_pair"),
    "docile": ("tore_engine.docile.tore_sets", "load_docile_pair"),
    "funsd": ("tore_engine.funsd.tore_sets", "funsd_layout_sets"),
    "omnidocbench": ("tore_engine.omnidocbench.tore_sets", "omnidocbench_layout_sets"),
}
FORMATS = ("auto", *SIDE_FORMATS, *PAIR_FORMATS)
PARSED_FORMATS = ("tore", "jsonl")  # read by the compiled page parser (`native_kernel`)
Pair = tuple[LayoutSet, LayoutSet]

__all__ = ["FORMATS", "detect_format", "load", "load_pair"]


def optional_module(name: str, extra: str, package: str | None = None) -> ModuleType:
    """A module of a library only some readers need (pyarrow, docling-core), or an `InputError`
    that says which extra installs it (`package`: the library's name, when not the module's): the
    user asked for a format, so a missing library is their input's problem, not a traceback."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise InputError(f"reading this format needs {package or name}, which is not installed: "
                         f"pip install 'tore-studio[{extra}]'") from None


def _check_format(format_name: str) -> None:
    if format_name not in FORMATS:
        raise InputError(f"unknown format {format_name!r}; known: {', '.join(FORMATS[1:])}")


def _reader(format_name: str) -> Callable[..., LayoutSet]:
    return importlib.import_module(SIDE_FORMATS[format_name]).read


def load(path: str | Path, format: str = "auto", *, page_images: str | Path | None = None,
         coco_images: str | Path | None = None) -> LayoutSet:
    """One side's layout set from a file or folder in any section-6 format.

    `page_images`: the folder where the page images or PDFs named in the file are (default: beside
    the file). `coco_images`: the COCO images + categories file a COCO results list refers to.
    """
    _check_format(format)
    path = Path(path)
    format = detect_format(path) if format == "auto" else format
    if format in PAIR_FORMATS:
        raise InputError(f"a {format} input holds both sides: read it with load_pair", file=str(path))
    folder = Path(page_images) if page_images is not None else None
    if format == "coco":
        from tore_engine.formats import coco

        return coco.read_any(path, page_images=folder, coco_images=Path(coco_images) if coco_images else None)
    return _reader(format)(path, page_images=folder)


def load_pair(reference: str | Path, prediction: str | Path | None = None, format: str = "auto", *,
              page_images: str | Path | None = None, coco_images: str | Path | None = None) -> Pair:
    """The reference and prediction layout sets, in any format `tore evaluate` reads.

    With `format="auto"` each side is recognised from its content; a COCO results list is read
    against `coco_images`, or against the reference when it is a COCO instances or images file.
    """
    _check_format(format)
    reference = Path(reference)
    reference_format = detect_format(reference) if format == "auto" else format
    if reference_format in PAIR_FORMATS:
        module, function = PAIR_FORMATS[reference_format]
        return getattr(importlib.import_module(module), function)(reference, Path(prediction) if prediction else None)
    if prediction is None:
        raise InputError("a prediction is needed (only a docling-eval dataset holds both sides)", file=str(reference))
    prediction = Path(prediction)
    prediction_format = detect_format(prediction) if format == "auto" else format
    if prediction_format in PAIR_FORMATS:
        raise InputError(f"a {prediction_format} input cannot be the prediction of a {reference_format} reference", file=str(prediction))
    if "coco" in (reference_format, prediction_format):
        from tore_engine.formats import coco

        if coco_images is None and reference_format == "coco" and coco.is_images_file(reference):
            coco_images = reference
    options = {"page_images": page_images, "coco_images": coco_images}
    if _read_at_once(reference, reference_format) and _read_at_once(prediction, prediction_format):
        return _load_both(reference, prediction, reference_format, prediction_format, options)
    return load(reference, reference_format, **options), load(prediction, prediction_format, **options)


def _read_at_once(path: Path, format: str) -> bool:
    """Whether this side is read by code that releases the GIL (the compiled page parser, pyarrow)
    and is large enough to gain from it: then both sides are read at once, in two threads."""
    from tore_engine.formats import native_kernel
    from tore_engine.inputs import KERNEL_MIN_BYTES

    size = path.stat().st_size if path.is_file() else 0
    if size < KERNEL_MIN_BYTES:
        return False
    return format == "parquet" or (format in PARSED_FORMATS and native_kernel.wanted(size))


def _load_both(reference: Path, prediction: Path, reference_format: str, prediction_format: str, options: dict) -> Pair:
    """Both sides read in two threads, each with the caller's context (its progress callback); the
    reference's error first when both fail, as when they are read one after the other. When one
    side fails, or Ctrl-C reaches this thread, the other stops within a chunk (`progress.stoppable`)."""
    from tore_engine.formats.progress import stoppable

    with stoppable() as stop, ThreadPoolExecutor(max_workers=2, thread_name_prefix="tore-read") as pool:
        sides = [pool.submit(contextvars.copy_context().run, load, path, format, **options)
                 for path, format in ((reference, reference_format), (prediction, prediction_format))]
        try:
            return sides[0].result(), sides[1].result()
        except BaseException:
            stop.set()
            raise