"""Reading layout sets from files: the native layout JSON (formats.md section 1) and COCO.

Every problem with the input becomes an `InputError` naming the file, the page id, the box index
and what is wrong; nothing here lets a `KeyError` or `ValueError` escape to the user.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tore_engine.errors import InputError
from tore_engine.jsonstream import LazyArray, is_large, read_large_json
from tore_engine.layout import LayoutSet, Page, PageColumns, PageColumnsBuilder, PageImage


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, turning every way it can fail into an `InputError`."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            return json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a JSON file", file=str(path)) from None
    except PermissionError:
        raise InputError("cannot be read (permission denied)", file=str(path)) from None
    except UnicodeDecodeError as error:
        raise InputError(f"is not UTF-8 text (byte {error.start})", file=str(path)) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
            file=str(path),
        ) from None
    except RecursionError:
        raise InputError("is not valid JSON: nested too deeply", file=str(path)) from None


# --- validation helpers -------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive_size(value: Any, key: str, source: str, page_id: str) -> float:
    if value is None:
        raise InputError(f"missing key {key!r}", file=source, page=page_id)
    if not _is_number(value) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{key} must be a positive finite number, got {value!r}", file=source, page=page_id)
    if value > 2**31:
        raise InputError(f"{key} = {value!r} is larger than 2^31 pixels", file=source, page=page_id)
    return float(value)


def _bbox_problem(bbox: Any) -> str | None:
    """Why `bbox` is not four finite numbers, or None when it is."""
    if not isinstance(bbox, (list, tuple)):
        return f"bbox must be a list of 4 numbers [x1, y1, x2, y2], got {bbox!r}"
    if len(bbox) != 4:
        return f"bbox must have 4 numbers [x1, y1, x2, y2], got {len(bbox)}: {bbox!r}"
    if not all(_is_number(v) for v in bbox):
        return f"bbox must hold numbers only, got {bbox!r}"
    if not all(math.isfinite(v) for v in bbox):
        return f"bbox has a NaN or infinite coordinate: {bbox!r}"
    return None


def _check_taxonomy(taxonomy: Any, source: str) -> list[str] | None:
    if taxonomy is None:
        return None
    if not isinstance(taxonomy, list) or not all(isinstance(t, str) for t in taxonomy):
        raise InputError("'taxonomy' must be a list of class names (strings)", file=source)
    duplicates = sorted({t for t in taxonomy if taxonomy.count(t) > 1})
    if duplicates:
        raise InputError(f"'taxonomy' lists a class twice: {', '.join(map(repr, duplicates))}", file=source)
    if "Background" in taxonomy:
        raise InputError("'taxonomy' must not list 'Background': it is always class 0", file=source)
    return taxonomy


def check_labels_in_taxonomy(layout: LayoutSet) -> None:
    """Every label used must be in the declared taxonomy; all offenders are named at once."""
    if layout.taxonomy is None:
        return
    known = set(layout.taxonomy)
    if known.issuperset(layout.labels_in_use()):
        return
    unknown: dict[str, tuple[str, int]] = {}
    for page in layout.pages:
        for index, label in enumerate(page.labels):
            if label not in known and label not in unknown:
                unknown[label] = (page.id, index)
    if unknown:
        listed = "; ".join(f"{label!r} (first at page {page!r}, box {box})" for label, (page, box) in unknown.items())
        raise InputError(f"labels not in the declared taxonomy: {listed}", file=layout.source)


def check_unique_page_ids(pages: Sequence[Page], source: str) -> None:
    seen: set[str] = set()
    for page_id in pages.ids if isinstance(pages, PageColumns) else (page.id for page in pages):
        if page_id in seen:
            raise InputError("duplicate page id", file=source, page=page_id)
        seen.add(page_id)


# --- native layout JSON --------------------------------------------------------------------------


def _page_image(raw: dict, base: Path, source: str, page_id: str) -> PageImage | None:
    if raw.get("pdf") is not None:
        page_no = raw.get("page_no", 0)
        if not isinstance(raw["pdf"], str) or not isinstance(page_no, int) or page_no < 0:
            raise InputError("'pdf' must be a path and 'page_no' a 0-based page number", file=source, page=page_id)
        return PageImage(base / raw["pdf"], page_no)
    if raw.get("image") is not None:
        if not isinstance(raw["image"], str):
            raise InputError(f"'image' must be a path, got {raw['image']!r}", file=source, page=page_id)
        return PageImage(base / raw["image"])
    return None


def _score_array(scores: list[float]) -> np.ndarray | None:
    """Scores as an array (NaN for a box without one), or None when no box has a score."""
    return np.array(scores, dtype=np.float64) if any(not math.isnan(s) for s in scores) else None


def _native_boxes(boxes: Any, source: str, page_id: str) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    if not isinstance(boxes, list):
        raise InputError("'boxes' must be a list", file=source, page=page_id)
    labels: list[str] = []
    coordinates: list = []
    scores: list[float] = []
    for index, box in enumerate(boxes):
        if not isinstance(box, dict):
            raise InputError(f"a box must be an object, got {box!r}", file=source, page=page_id, box=index)
        for key in ("label", "bbox"):
            if key not in box:
                raise InputError(f"missing key {key!r}", file=source, page=page_id, box=index)
        if not isinstance(box["label"], str) or not box["label"]:
            raise InputError(f"label must be a non-empty string, got {box['label']!r}", file=source, page=page_id, box=index)
        problem = _bbox_problem(box["bbox"])
        if problem:
            raise InputError(problem, file=source, page=page_id, box=index)
        score = box.get("score")
        if score is not None and (not _is_number(score) or not math.isfinite(score)):
            raise InputError(f"score must be a finite number, got {score!r}", file=source, page=page_id, box=index)
        labels.append(sys.intern(box["label"]))
        coordinates.append(box["bbox"])
        scores.append(math.nan if score is None else float(score))
    return labels, np.array(coordinates, dtype=np.float64).reshape(-1, 4), _score_array(scores)


def _native_page(raw: Any, index: int, base: Path, source: str) -> Page:
    if not isinstance(raw, dict):
        raise InputError(f"pages[{index}] must be an object", file=source)
    page_id = raw.get("id")
    if page_id is None:
        raise InputError(f"pages[{index}] has no 'id'", file=source)
    if not isinstance(page_id, (str, int)) or isinstance(page_id, bool):
        raise InputError(f"pages[{index}] 'id' must be a string, got {page_id!r}", file=source)
    page_id = str(page_id)
    width = _positive_size(raw.get("width"), "width", source, page_id)
    height = _positive_size(raw.get("height"), "height", source, page_id)
    labels, bboxes, scores = _native_boxes(raw.get("boxes", []), source, page_id)
    return Page(page_id, width, height, labels, bboxes, scores, _page_image(raw, base, source, page_id))


def _read_pages(raw_pages: list | LazyArray, base: Path, source: str) -> Sequence[Page]:
    """Pages of a parsed file as a list; those of a large, lazily read file as `PageColumns`."""
    if isinstance(raw_pages, list):
        return [_native_page(raw, index, base, source) for index, raw in enumerate(raw_pages)]
    builder = PageColumnsBuilder()
    for index, raw in enumerate(raw_pages):
        builder.add(_native_page(raw, index, base, source))
    return builder.build()


def from_native(data: Any, source: str, base: Path | None = None) -> LayoutSet:
    """A layout set from parsed native layout JSON (formats.md section 1)."""
    if not isinstance(data, dict) or not isinstance(data.get("pages"), (list, LazyArray)):
        raise InputError("not a layout JSON: expected an object with a 'pages' list", file=source)
    name = data.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise InputError(f"'name' must be a non-empty string, got {name!r}", file=source)
    base = base if base is not None else Path(source).parent
    pages = _read_pages(data["pages"], base, source)
    check_unique_page_ids(pages, source)
    layout = LayoutSet(name or Path(source).stem, pages, _check_taxonomy(data.get("taxonomy"), source), source)
    check_labels_in_taxonomy(layout)
    return layout


# --- COCO ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CocoIndex:
    """What a COCO results list needs from its instances file: images and category names by id."""

    page_ids: dict[int, str]
    categories: dict[int, str]


def _id_or_none(value: Any) -> int | str | None:
    """A COCO id (an integer or a string), or None for anything else."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _coco_categories(data: dict, source: str) -> dict[int, str]:
    categories = data.get("categories")
    if not isinstance(categories, list) or not categories:
        raise InputError("COCO 'categories' must be a non-empty list", file=source)
    names: dict[int, str] = {}
    for index, category in enumerate(categories):
        if not isinstance(category, dict) or not isinstance(category.get("id"), int) or not isinstance(category.get("name"), str):
            raise InputError(f"categories[{index}] must have an integer 'id' and a string 'name'", file=source)
        if category["id"] in names:
            raise InputError(f"category id {category['id']} is listed twice", file=source)
        names[category["id"]] = category["name"]
    return dict(sorted(names.items()))


def _coco_images(data: dict, source: str, base: Path) -> tuple[list[Page], dict[int, str]]:
    images = data.get("images")
    if not isinstance(images, list):
        raise InputError("COCO 'images' must be a list", file=source)
    pages: list[Page] = []
    page_ids: dict[int, str] = {}
    for index, image in enumerate(images):
        if not isinstance(image, dict) or _id_or_none(image.get("id")) is None:
            raise InputError(f"images[{index}] must be an object with an integer or string 'id'", file=source)
        page_id = str(image.get("file_name") or image["id"])
        width = _positive_size(image.get("width"), "width", source, page_id)
        height = _positive_size(image.get("height"), "height", source, page_id)
        picture = PageImage(base / image["file_name"]) if isinstance(image.get("file_name"), str) else None
        pages.append(Page(page_id, width, height, [], np.zeros((0, 4)), np.zeros(0), picture))
        page_ids[image["id"]] = page_id
    check_unique_page_ids(pages, source)
    return pages, page_ids


def _add_coco_annotations(annotations: Any, pages: list[Page], index: CocoIndex, source: str) -> None:
    """Append `[x, y, w, h]` annotations to their pages as `[x1, y1, x2, y2]` boxes."""
    if not isinstance(annotations, (list, LazyArray)):
        raise InputError("COCO annotations must be a list", file=source)
    by_id = {page.id: page for page in pages}
    grouped: dict[str, tuple[list[str], list, list[float]]] = {page.id: ([], [], []) for page in pages}
    for number, annotation in enumerate(annotations):
        if not isinstance(annotation, dict):
            raise InputError(f"annotation {number} must be an object", file=source)
        page_id = index.page_ids.get(_id_or_none(annotation.get("image_id")))
        if page_id is None:
            raise InputError(f"annotation {number} refers to unknown image_id {annotation.get('image_id')!r}", file=source)
        labels, boxes, scores = grouped[page_id]
        box = len(labels)
        label = index.categories.get(_id_or_none(annotation.get("category_id")))
        if label is None:
            raise InputError(f"unknown category_id {annotation.get('category_id')!r} (annotation {number})", file=source, page=page_id, box=box)
        problem = _bbox_problem(annotation.get("bbox"))
        if problem:
            raise InputError(problem.replace("[x1, y1, x2, y2]", "[x, y, width, height]") + f" (annotation {number})", file=source, page=page_id, box=box)
        x, y, w, h = annotation["bbox"]
        score = annotation.get("score")
        if score is not None and (not _is_number(score) or not math.isfinite(score)):
            raise InputError(f"score must be a finite number, got {score!r} (annotation {number})", file=source, page=page_id, box=box)
        labels.append(label)
        boxes.append((x, y, x + w, y + h))
        scores.append(math.nan if score is None else float(score))
    for page_id, (labels, boxes, scores) in grouped.items():
        page = by_id[page_id]
        page.labels = labels
        page.bboxes = np.array(boxes, dtype=np.float64).reshape(-1, 4)
        page.scores = _score_array(scores)


def from_coco(data: Any, source: str) -> tuple[LayoutSet, CocoIndex]:
    """A layout set from a COCO instances JSON; page ids are the images' file names."""
    if not isinstance(data, dict) or "images" not in data or "annotations" not in data:
        raise InputError("not a COCO instances JSON: expected 'images', 'annotations' and 'categories'", file=source)
    categories = _coco_categories(data, source)
    pages, page_ids = _coco_images(data, source, Path(source).parent)
    index = CocoIndex(page_ids, categories)
    _add_coco_annotations(data["annotations"], pages, index, source)
    return LayoutSet(Path(source).stem, pages, list(categories.values()), source), index


def from_coco_results(results: Any, source: str, reference: CocoIndex, reference_pages: list[Page]) -> LayoutSet:
    """A prediction from a COCO results list `[{image_id, category_id, bbox, score}]`, read with
    the images and categories of the COCO reference it was made for."""
    pages = [Page(p.id, p.width, p.height, [], np.zeros((0, 4)), np.zeros(0), p.image) for p in reference_pages]
    _add_coco_annotations(results, pages, reference, source)
    return LayoutSet(Path(source).stem, pages, list(reference.categories.values()), source)


# --- format detection and the reference/prediction pair ----------------------------------------

PairLoader = Callable[[Path, Path], tuple[LayoutSet, LayoutSet]]


NATIVE_KEYS = {"arrays": ("pages",), "values": ("name", "taxonomy")}
COCO_KEYS = {"arrays": ("annotations",), "values": ("images", "categories")}


def read_document(path: Path, arrays: tuple[str, ...], values: tuple[str, ...]) -> Any:
    """A JSON file, parsed whole when small; a large one lazily (`jsonstream`): its `arrays` are
    read item by item and only its `values` are parsed up front."""
    path = Path(path)
    return read_large_json(path, arrays, values) if is_large(path) else read_json(path)


def _first_item(data: Any) -> Any:
    return next(iter(data), None)


def detect_format(path: Path) -> str:
    """Guess the format of a reference or prediction path."""
    if path.is_dir():
        return "docile" if (path / "annotations").is_dir() else "funsd"
    data = read_document(path, ("pages", "annotations"), ("images",))
    if isinstance(data, dict) and "pages" in data:
        return "tore"
    if isinstance(data, dict) and "images" in data and "annotations" in data:
        return "coco"
    if isinstance(data, (list, LazyArray)):
        first = _first_item(data)
        if isinstance(first, dict) and "layout_dets" in first:
            return "omnidocbench"
        if first is None or isinstance(first, dict) and "image_id" in first:
            return "coco"
    raise InputError(
        "cannot tell its format: expected a layout JSON (an object with 'pages'), a COCO instances "
        "JSON, or a COCO results list; use --format to say which",
        file=str(path),
    )


def load_layout(path: str | Path) -> LayoutSet:
    """One native layout JSON file (read page by page when it is large)."""
    return from_native(read_document(Path(path), **NATIVE_KEYS), str(path))


def load_coco(path: str | Path) -> tuple[LayoutSet, CocoIndex]:
    """One COCO instances file (its annotations read one by one when it is large)."""
    return from_coco(read_document(Path(path), **COCO_KEYS), str(path))


def load_prediction(path: Path, coco_reference: tuple[CocoIndex, list[Page]] | None = None) -> LayoutSet:
    """A prediction in the native format, as COCO instances with its own categories, or as a COCO
    results list (which needs the COCO reference it was made for)."""
    kind = detect_format(path)
    if kind == "tore":
        return load_layout(path)
    if kind != "coco":
        raise InputError(f"a {kind} file cannot be a prediction here; use --format {kind}", file=str(path))
    data = read_document(path, **COCO_KEYS)
    if isinstance(data, dict):
        return from_coco(data, str(path))[0]
    if coco_reference is None:
        raise InputError("a COCO results list needs a COCO instances file as the reference", file=str(path))
    return from_coco_results(data, str(path), *coco_reference)


def _load_coco_pair(reference_path: Path, prediction_path: Path) -> tuple[LayoutSet, LayoutSet]:
    reference, index = load_coco(reference_path)
    return reference, load_prediction(prediction_path, (index, reference.pages))


def _load_native_pair(reference_path: Path, prediction_path: Path) -> tuple[LayoutSet, LayoutSet]:
    return load_layout(reference_path), load_prediction(prediction_path)


def _benchmark_pair(module: str, function: str) -> PairLoader:
    """A benchmark's own loader, imported only when its format is asked for."""

    def load(reference_path: Path, prediction_path: Path) -> tuple[LayoutSet, LayoutSet]:
        return getattr(importlib.import_module(module), function)(reference_path, prediction_path)

    return load


PAIR_LOADERS: dict[str, PairLoader] = {
    "tore": _load_native_pair,
    "coco": _load_coco_pair,
    "docile": _benchmark_pair("tore_engine.docile.layout", "load_docile_pair"),
    "funsd": _benchmark_pair("tore_engine.funsd.layout_sets", "funsd_layout_sets"),
    "omnidocbench": _benchmark_pair("tore_engine.omnidocbench.tore_sets", "omnidocbench_layout_sets"),
}


def load_pair(reference: str | Path, prediction: str | Path, format_name: str = "auto") -> tuple[LayoutSet, LayoutSet]:
    """The reference and prediction layout sets, in any format `tore evaluate` reads."""
    reference, prediction = Path(reference), Path(prediction)
    if format_name == "auto":
        format_name = detect_format(reference)
    loader = PAIR_LOADERS.get(format_name)
    if loader is None:
        raise InputError(f"unknown format {format_name!r}; known: {', '.join(sorted(PAIR_LOADERS))}")
    return loader(reference, prediction)
