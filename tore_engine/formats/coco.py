"""COCO: instances files (`images`, `annotations`, `categories`), images + categories files without
annotations (a side with no boxes), and results lists `[{image_id, category_id, bbox, score}]`
read against the images and categories of another file (docs/formats.md#your-data).

COCO files carry extension keys (`license`, `attributes`, a dataset's own metadata), so unknown
keys are allowed; the keys the format defines are typed strictly. Page ids are the images'
`file_name`s; boxes `[x, y, width, height]` become `[x1, y1, x2, y2]`. A `segmentation` of one
polygon that is not an axis-aligned rectangle makes the box that polygon (its bbox then the
polygon's bounding box); an RLE mask or a segmentation of several polygons leaves the box its
`bbox`, with a warning naming the page and box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import msgspec

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, Page, PageImage
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.detect import ambiguous_keys
from tore_engine.formats.image_refs import ImageFolder
from tore_engine.io.files import BOM, peek_bytes, read_json_bytes
from tore_engine.io.json import (
    JsonSpans,
    SchemaError,
    decode_json,
    first_char,
    scan_json,
)

ANNOTATIONS_PER_BATCH = 65536
RESULTS_PEEK_BYTES = 4096  # enough to see past leading whitespace to the first bracket


class CocoImage(msgspec.Struct):
    id: int | str
    width: float
    height: float
    file_name: str | None = None


class CocoCategory(msgspec.Struct):
    id: int
    name: str


class CocoAnnotation(msgspec.Struct):
    image_id: int | str
    category_id: int
    bbox: tuple[float, float, float, float]
    score: float | None = None
    segmentation: msgspec.Raw = msgspec.Raw(b"null")  # polygons (a list of flat point lists) or an RLE mask


RLE_AS_BOX = "its segmentation is an RLE mask, which TORE does not rasterise: painted as its bbox"
PARTS_AS_BOX = "its segmentation has {parts} polygons; a box is one polygon: painted as its bbox"


def _outline(annotation: CocoAnnotation, source: str, where: str) -> tuple[list[float] | None, str | None]:
    """The annotation's polygon (flat x1, y1, ...) when its segmentation is one polygon that is not
    an axis-aligned rectangle (a rectangle paints as its bbox, bit for bit: files of boxes keep
    their matrices), or None; and why a segmentation is not used, if it is not."""
    raw = bytes(annotation.segmentation)
    if raw in (b"null", b"[]"):
        return None, None
    try:
        segmentation = msgspec.json.decode(raw, type=list[list[float]] | dict)
    except msgspec.ValidationError as error:
        raise InputError(f"{where}: 'segmentation' must be polygons [[x1, y1, x2, y2, ...], ...] or an RLE mask: {error}", file=source) from None
    if isinstance(segmentation, dict):
        return None, RLE_AS_BOX
    parts = [part for part in segmentation if part]
    if len(parts) != 1:
        return None, PARTS_AS_BOX.format(parts=len(parts)) if parts else None
    points = parts[0]
    xs, ys = set(points[0::2]), set(points[1::2])
    rectangle = len(points) in (8, 10) and len(xs) == 2 and len(ys) == 2 and all(
        (points[k] == points[k + 2]) != (points[k + 1] == points[k + 3]) for k in range(0, len(points) - 2, 2))
    return (None if rectangle else points), None


class CocoHeader(msgspec.Struct):
    """An instances (or images + categories) file, its annotations left undecoded."""

    images: list[CocoImage]
    categories: list[CocoCategory]
    annotations: msgspec.Raw = msgspec.Raw(b"")  # empty: no annotations key


@dataclass(frozen=True)
class CocoImages:
    """What a results list needs from its images file: the pages, their ids and the classes."""

    source: str
    images: list[CocoImage]
    categories: dict[int, str]
    page_images: dict[str, PageImage]
    warnings: list[InputWarning]

    @property
    def taxonomy(self) -> list[str]:
        return list(self.categories.values())

    def page_id(self, image: CocoImage) -> str:
        return str(image.file_name or image.id)


def _categories(categories: list[CocoCategory], source: str) -> dict[int, str]:
    if not categories:
        raise InputError("COCO 'categories' must be a non-empty list", file=source)
    names: dict[int, str] = {}
    by_name: dict[str, int] = {}
    for category in categories:
        if category.id in names:
            raise InputError(f"category id {category.id} is listed twice", file=source)
        if category.name in by_name:
            raise InputError(
                f"categories {by_name[category.name]} and {category.id} have the same name {category.name!r}; "
                "a class must have one id (merge them, or rename one)",
                file=source,
            )
        by_name[category.name] = category.id
        names[category.id] = category.name
    return dict(sorted(names.items()))


def _images(header: CocoHeader, path: Path, page_images: Path | None) -> CocoImages:
    source = str(path)
    folder = ImageFolder.beside(path, page_images)
    warnings: list[InputWarning] = []
    pictures: dict[str, PageImage] = {}
    seen: set = set()
    for image in header.images:
        if image.id in seen:
            raise InputError(f"image id {image.id!r} is listed twice", file=source)
        seen.add(image.id)
        if image.file_name is not None:
            page_id = str(image.file_name)
            picture = folder.locate(image.file_name, page_id, "", warnings)
            if picture is not None:
                pictures[page_id] = picture
    return CocoImages(source, header.images, _categories(header.categories, source), pictures, warnings)


def read_images(path: Path, *, page_images: Path | None = None) -> tuple[CocoImages, bytes, JsonSpans, CocoHeader]:
    source = str(path)
    data = read_json_bytes(path)
    structure = scan_json(data, source)
    if first_char(data) != b"{":
        raise InputError("not a COCO instances file: expected an object with 'images' and 'categories'", file=source)
    header = decode_json(data, source, CocoHeader)
    return _images(header, path, page_images), data, structure, header


def _annotation_error(error: SchemaError, first: int, label: str) -> InputError:
    index, _, problem = error.in_item()
    return error if index is None else InputError(f"{label} {first + index}: {problem}", file=error.file)


def _read_annotations(data: bytes, structure: JsonSpans, span: tuple[int, int], source: str, label: str):
    """The annotations (or results) at `span`, decoded in batches."""
    items = structure.array_items(*span)
    for first in range(0, len(items), ANNOTATIONS_PER_BATCH):
        batch = items[first : first + ANNOTATIONS_PER_BATCH]
        try:
            yield first, decode_json(b"[" + data[batch[0][0] : batch[-1][1]] + b"]", source, list[CocoAnnotation])
        except SchemaError as error:
            raise _annotation_error(error, first, label) from None


def _layout(images: CocoImages, annotations, source: str, name: str, label: str) -> LayoutSet:
    """One layout set: every image a page, with the annotations that name it."""
    positions = {image.id: k for k, image in enumerate(images.images)}
    per_page: list[tuple[list[str], list[float], list[float | None]]] = [([], [], []) for _ in images.images]
    outlines: dict[int, dict[int, list[float]]] = {}  # page -> box -> polygon
    warnings = list(images.warnings)
    for first, batch in annotations:
        for number, annotation in enumerate(batch, start=first):
            page = positions.get(annotation.image_id)
            if page is None:
                raise InputError(f"{label} {number} refers to unknown image_id {annotation.image_id!r}", file=source)
            labels, coordinates, scores = per_page[page]
            category = images.categories.get(annotation.category_id)
            if category is None:
                raise InputError(f"unknown category_id {annotation.category_id!r} ({label} {number})", file=source,
                                 page=images.page_id(images.images[page]), box=len(labels))
            x, y, w, h = annotation.bbox
            outline, unused = _outline(annotation, source, f"{label} {number}")
            if unused is not None:
                warnings.append(InputWarning(images.page_id(images.images[page]), len(labels), None, f"{label} {number}: {unused}"))
            box = (x, y, x + w, y + h)
            if outline is not None:
                outlines.setdefault(page, {})[len(labels)] = outline
                box = (min(outline[0::2]), min(outline[1::2]), max(outline[0::2]), max(outline[1::2]))
            labels.append(category)
            coordinates += box
            scores.append(annotation.score)
    builder = ColumnsBuilder()
    for position, (image, (labels, coordinates, scores)) in enumerate(zip(images.images, per_page)):
        page_id = images.page_id(image)
        polygons = [outlines[position].get(box) for box in range(len(labels))] if position in outlines else None
        builder.add(page_id, image.width, image.height, labels, coordinates, scores, images.page_images.get(page_id), polygons)
    return LayoutSet(name, builder.build(), images.taxonomy, source, warnings)


def read(path: Path, *, page_images: Path | None = None, detected: bool = False) -> LayoutSet:
    """A COCO instances file, or an images + categories file (a side with no boxes). One that is
    a layout JSON too (with `pages`) is refused when its format was `detected` (`--format auto`),
    else read as COCO, as asked, with a warning that its pages are not."""
    images, data, structure, header = read_images(path, page_images=page_images)
    source = str(path)
    values = structure.top_level_values()
    if detected and (ambiguous := ambiguous_keys(values, source)) is not None:
        raise ambiguous
    annotations = []
    if len(header.annotations):
        span = values["annotations"]
        if first_char(data, span[0]) != b"[":
            raise InputError("COCO 'annotations' must be a list", file=source)
        annotations = _read_annotations(data, structure, span, source, "annotation")
    layout = _layout(images, annotations, source, Path(path).stem, "annotation")
    if "pages" in values:
        layout.warnings.append(InputWarning(None, None, "", "the file's top-level 'pages' (a layout JSON's) is not read: "
                                            "--format coco reads its COCO images and annotations"))
    return layout


def read_results(path: Path, images: CocoImages) -> LayoutSet:
    """A COCO results list, read with the images and categories it was made for."""
    source = str(path)
    data = read_json_bytes(path)
    structure = scan_json(data, source)
    if first_char(data) != b"[":
        raise InputError("a COCO results list must be a JSON array of {image_id, category_id, bbox, score}", file=source)
    span = (0, len(data))
    return _layout(images, _read_annotations(data, structure, span, source, "result"), source, Path(path).stem, "result")


def is_results_list(path: Path) -> bool:
    """Whether a COCO file is a results list (a JSON array) rather than an instances file."""
    return peek_bytes(path, RESULTS_PEEK_BYTES).removeprefix(BOM).lstrip()[:1] == b"["


def is_images_file(path: Path) -> bool:
    return not is_results_list(path)


def read_any(path: Path, *, page_images: Path | None = None, coco_images: Path | None = None, detected: bool = False) -> LayoutSet:
    """An instances file (`read`), or a results list read against `coco_images` (its images + categories)."""
    if not is_results_list(path):
        return read(path, page_images=page_images, detected=detected)
    if coco_images is None:
        raise InputError(
            "a COCO results list needs the images + categories file it was made for: pass it with "
            "--images IMAGES.json (or use a COCO instances file as the reference)",
            file=str(path),
        )
    return read_results(path, read_images(coco_images, page_images=page_images)[0])


def write(layout: LayoutSet, path: Path) -> None:
    """The layout as a COCO instances file: images numbered from 1 (`file_name` = page id),
    categories numbered from 1 in the layout's class order, boxes as [x, y, width, height]."""
    categories = {label: number for number, label in enumerate(layout.class_list(), start=1)}
    images: list[dict] = []
    annotations: list[dict] = []
    for number, page in enumerate(layout.pages, start=1):
        images.append({"id": number, "file_name": page.id, "width": page.width, "height": page.height})
        annotations += [{"id": len(annotations) + k + 1, "image_id": number, **box} for k, box in enumerate(_coco_boxes(page, categories))]
    document = {"images": images, "annotations": annotations,
                "categories": [{"id": number, "name": label} for label, number in categories.items()]}
    Path(path).write_bytes(msgspec.json.encode(document))


def write_pair(reference: LayoutSet, prediction: LayoutSet, instances: Path, results: Path) -> None:
    """Both sides of the same pages as an annotation tool takes them (CVAT, Label Studio): `instances`
    a COCO instances file (images numbered from 1, `file_name` = page id; the categories of both
    sides, the reference's first; the reference's boxes as annotations), `results` a COCO results
    list of the prediction's boxes against it (`score` where a box has one). `tore evaluate
    INSTANCES RESULTS` reads them back as the same pages and boxes. Pages only in the prediction are
    left out, as an evaluation leaves them."""
    categories = {label: number for number, label in enumerate(dict.fromkeys([*reference.class_list(), *prediction.class_list()]), start=1)}
    predicted = {page_id: k for k, page_id in enumerate(prediction.page_ids())}
    images: list[dict] = []
    annotations: list[dict] = []
    detections: list[dict] = []
    for number, page in enumerate(reference.pages, start=1):
        images.append({"id": number, "file_name": page.id, "width": page.width, "height": page.height})
        annotations += [{"id": len(annotations) + k + 1, "image_id": number, **box} for k, box in enumerate(_coco_boxes(page, categories))]
        if (position := predicted.get(page.id)) is not None:
            detections += [{"image_id": number, **box} for box in _coco_boxes(prediction.pages[position], categories)]
    document = {"images": images, "annotations": annotations,
                "categories": [{"id": number, "name": label} for label, number in categories.items()]}
    Path(instances).write_bytes(msgspec.json.encode(document))
    Path(results).write_bytes(msgspec.json.encode(detections))


def _coco_boxes(page: Page, categories: dict[str, int]) -> list[dict]:
    """A page's boxes as COCO objects: category, [x, y, width, height], area, a polygon box's outline
    as its one-polygon `segmentation`, and the score when it has one."""
    scores = page.scores.tolist() if page.scores is not None else [math.nan] * page.box_count
    boxes = []
    for k, (label, (x1, y1, x2, y2), score) in enumerate(zip(page.labels, page.bboxes.tolist(), scores)):
        box = {"category_id": categories[label], "bbox": [x1, y1, x2 - x1, y2 - y1], "area": (x2 - x1) * (y2 - y1), "iscrowd": 0}
        if page.polygons is not None and (outline := page.polygons.outline(k)) is not None:
            box["segmentation"] = [outline.ravel().tolist()]
        if not math.isnan(score):  # NaN: the box has no score
            box["score"] = score
        boxes.append(box)
    return boxes
