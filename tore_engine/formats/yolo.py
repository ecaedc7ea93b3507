"""YOLO label folders (Ultralytics; DocLayout-YOLO's packages): one `.txt` file a page image, one
line a region, coordinates normalised to the image (0..1):

- a box: `class cx cy w h`, and a confidence after it in predictions (`save_txt`, `save_conf`);
- a polygon (YOLO-seg, YOLO-OBB): `class x1 y1 x2 y2 x3 y3 ...`, a confidence after it when the
  count of numbers is odd.

Class names come from `data.yaml` (any `*.yaml` with `names`, a list or a {number: name} map) or a
names file (`classes.txt`, `*.names`: one name a line), in the label folder or one of its two
parents. The page frame is its image's size: the image of the same name beside the label file, in
Ultralytics' `images` folder (`.../labels/...` -> `.../images/...`), or in `--page-images`. Page
ids are the label files' names without `.txt`; an image of the images folder without a label file
is a page without regions.
"""

from __future__ import annotations

import re
from pathlib import Path

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, PageImage
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.io.files import image_size, peek_bytes, read_text, regular_files

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
NAMES_FILES = ("classes.txt", "names.txt")
NAMES_SUFFIXES = (".names",)
YAML_SUFFIXES = (".yaml", ".yml")
MAX_NAMES_BYTES = 2**20
ROW = re.compile(rb"^\s*\d+(\s+[-+0-9.eE]+){4,}\s*$")  # a label line: a class number and at least four numbers


def looks_like(files: list[Path]) -> bool:
    """Whether a folder's files are YOLO labels: `.txt` files whose first line is a label row."""
    for path in sorted(f for f in files if f.suffix == ".txt" and f.name not in NAMES_FILES)[:3]:
        first = peek_bytes(path, 4096).lstrip().split(b"\n", 1)[0]
        if first:
            return bool(ROW.match(first))
    return False


def _yaml(text: str, source: str) -> object:
    """A YAML document read safely, refusing anchors and aliases (a few lines of aliases can
    expand to gigabytes)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise InputError("YAML aliases are not accepted in a dataset file", file=source)
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader, without aliases
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML: {error}", file=source) from None


def _names_from_yaml(path: Path) -> list[str] | None:
    document = _yaml(read_text(path, max_bytes=MAX_NAMES_BYTES), str(path))
    names = document.get("names") if isinstance(document, dict) else None
    if names is None:
        return None
    if isinstance(names, dict):
        if sorted(names) != list(range(len(names))):
            raise InputError("'names' must number the classes 0, 1, 2, ... without gaps", file=str(path))
        names = [names[k] for k in range(len(names))]
    if not isinstance(names, list) or not all(isinstance(name, str) and name for name in names):
        raise InputError("'names' must be a list of class names (non-empty strings) or a {number: name} map", file=str(path))
    return names


def class_names(folder: Path) -> list[str]:
    """The class names of a label folder (see the module)."""
    for place in (folder, folder.parent, folder.parent.parent):
        files = sorted(regular_files(place)) if place.is_dir() else []
        for path in files:
            if path.suffix in YAML_SUFFIXES and (names := _names_from_yaml(path)) is not None:
                return names
        for path in files:
            if path.name in NAMES_FILES or path.suffix in NAMES_SUFFIXES:
                names = [line.strip() for line in read_text(path, max_bytes=MAX_NAMES_BYTES).splitlines() if line.strip()]
                if names:
                    return names
    raise InputError("no class names for these YOLO labels: put a data.yaml with 'names' or a classes.txt (one name a line) "
                     "in the label folder or one of its two parents", file=str(folder))


def _image_folders(folder: Path, page_images: Path | None) -> list[Path]:
    """Where the page images may be: --page-images, the label folder, and Ultralytics' images folder."""
    places = [page_images] if page_images is not None else []
    places.append(folder)
    parts = folder.parts
    if "labels" in parts:
        last = len(parts) - 1 - parts[::-1].index("labels")
        places.append(Path(*parts[:last], "images", *parts[last + 1 :]))
    return [place for place in places if place.is_dir()]


def _images(places: list[Path]) -> dict[str, Path]:
    """Each image stem's first image, by folder order."""
    found: dict[str, Path] = {}
    for place in places:
        for path in sorted(regular_files(place)):
            if path.suffix.lower() in IMAGE_SUFFIXES:
                found.setdefault(path.stem, path)
    return found


def _regions(path: Path, page_id: str, names: list[str], width: int, height: int, warnings: list[InputWarning]):
    """A label file's regions: labels, boxes (x1, y1, x2, y2 in pixels), scores and polygons."""
    labels: list[str] = []
    coordinates: list[float] = []
    scores: list[float | None] = []
    polygons: list[list[float] | None] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"line {number}"
        try:
            values = [float(value) for value in fields[1:]]
            label = int(fields[0])
        except ValueError:
            raise InputError(f"{where}: expected 'class cx cy w h [conf]' or 'class x1 y1 x2 y2 ...' numbers, got {line.strip()[:80]!r}",
                             file=str(path), page=page_id, box=len(labels)) from None
        if not 0 <= label < len(names):
            raise InputError(f"{where}: class {label} is not one of the {len(names)} classes (0 .. {len(names) - 1})",
                             file=str(path), page=page_id, box=len(labels))
        if len(values) in (4, 5):
            cx, cy, w, h = values[:4]
            box = [(cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height]
            polygon = None
        elif len(values) >= 6:
            points = values[: len(values) - len(values) % 2]
            polygon = [value * (width if k % 2 == 0 else height) for k, value in enumerate(points)]
            box = [min(polygon[0::2]), min(polygon[1::2]), max(polygon[0::2]), max(polygon[1::2])]
        else:
            raise InputError(f"{where}: {len(values)} numbers after the class; a box has 4 (and a confidence), a polygon at least 6",
                             file=str(path), page=page_id, box=len(labels))
        score = values[-1] if len(values) == 5 or (len(values) >= 7 and len(values) % 2) else None
        if any(not -1 <= value <= 2 for value in values[: len(values) - (score is not None)]):
            warnings.append(InputWarning(page_id, len(labels), None, f"{path.name} {where}: a coordinate is far outside 0..1 (are they normalised?)"))
        labels.append(names[label])
        coordinates += box
        scores.append(score)
        polygons.append(polygon)
    return labels, coordinates, scores, polygons


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A folder of YOLO label files (see the module)."""
    folder = Path(path)
    if not folder.is_dir():
        raise InputError("YOLO labels are a folder of .txt files", file=str(folder))
    names = class_names(folder)
    labels_files = {f.stem: f for f in sorted(regular_files(folder)) if f.suffix == ".txt" and f.name not in NAMES_FILES}
    images = _images(_image_folders(folder, page_images))
    warnings: list[InputWarning] = []
    builder = ColumnsBuilder()
    distinct_folder = {p.parent for p in images.values()} - {folder}
    page_ids = sorted(set(labels_files) | (set(images) if distinct_folder else set()))
    for page_id in page_ids:
        image = images.get(page_id)
        if image is None:
            raise InputError("no image of this page to take its size from: put the images beside the labels, in the "
                             "'images' folder beside 'labels', or name their folder with --page-images", file=str(labels_files[page_id]), page=page_id)
        width, height = image_size(image)
        label_file = labels_files.get(page_id)
        regions = _regions(label_file, page_id, names, width, height, warnings) if label_file else ([], [], [], [])
        labels, coordinates, scores, polygons = regions
        builder.add(page_id, width, height, labels, coordinates, scores if any(s is not None for s in scores) else None,
                    PageImage(image), polygons if any(p is not None for p in polygons) else None)
    if not page_ids:
        raise InputError("no YOLO label files (.txt) in this folder", file=str(folder))
    return LayoutSet(folder.name, builder.build(), names, str(folder), warnings)
