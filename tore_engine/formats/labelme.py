"""LabelMe JSON: one file an image (`shapes`, `imagePath`, `imageWidth`, `imageHeight`), or a folder
of them. A `polygon` shape is a polygon region, a `rectangle` (two corners) a box; the shape's
`label` is its class. Other shapes (circles, lines, points, masks) are no regions: each is skipped
with a warning naming the file, page and shape. The page id is the file's name without `.json`.

LabelMe writes its own extra keys (`flags`, `group_id`, `description`, `imageData`, ...), so
unknown keys are allowed; the keys read are typed strictly.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.image_refs import ImageFolder
from tore_engine.io.files import input_files, read_json_bytes
from tore_engine.io.json import decode_json


class Shape(msgspec.Struct):
    label: str
    points: list[tuple[float, float]]
    shape_type: str = "polygon"


class LabelmeFile(msgspec.Struct):
    shapes: list[Shape]
    imageWidth: float  # noqa: N815 - LabelMe's key
    imageHeight: float  # noqa: N815 - LabelMe's key
    imagePath: str | None = None  # noqa: N815 - LabelMe's key


def _add_file(builder: ColumnsBuilder, path: Path, page_images: Path | None, warnings: list[InputWarning]) -> None:
    source, page_id = str(path), path.stem
    try:
        document = decode_json(read_json_bytes(path), source, LabelmeFile)
    except InputError as error:
        raise error.located(page=page_id) from None
    labels: list[str] = []
    coordinates: list[float] = []
    polygons: list[list[tuple[float, float]] | None] = []
    for number, shape in enumerate(document.shapes):
        xs, ys = [x for x, _ in shape.points], [y for _, y in shape.points]
        if shape.shape_type == "rectangle" and len(shape.points) == 2:
            polygons.append(None)
        elif shape.shape_type == "polygon" and len(shape.points) >= 3:
            polygons.append(shape.points)
        else:
            warnings.append(InputWarning(page_id, None, None, f"{path.name}, shape {number} ({shape.label!r}): a {shape.shape_type} of "
                                         f"{len(shape.points)} points is no region (a polygon has 3 or more, a rectangle 2); skipped"))
            continue
        labels.append(shape.label)
        coordinates += (min(xs), min(ys), max(xs), max(ys))
    image = None
    if document.imagePath:
        image = ImageFolder.beside(path, page_images).locate(document.imagePath, page_id, "", warnings)
    builder.add(page_id, document.imageWidth, document.imageHeight, labels, coordinates, None, image,
                polygons if any(polygon is not None for polygon in polygons) else None)


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A LabelMe file, or a folder of them (one page a file, in name order)."""
    path = Path(path)
    files = input_files(path, (".json",), "LabelMe JSON files")
    builder = ColumnsBuilder()
    warnings: list[InputWarning] = []
    for file in sorted(files):
        _add_file(builder, file, page_images, warnings)
    return LayoutSet(path.stem if path.is_file() else path.name, builder.build(), None, str(path), warnings)
