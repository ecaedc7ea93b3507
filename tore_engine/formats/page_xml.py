"""PAGE-XML (PRImA's page content format, 2010 to 2019 schemas: Transkribus, eScriptorium, Kraken,
OCR-D): one file a page image, or a folder of them.

Every region of the page is a region: any element whose name ends in `Region` (TextRegion,
ImageRegion, TableRegion, GraphicRegion, SeparatorRegion, MathsRegion, ..., nested ones too), its
`Coords` as a polygon (`points="x1,y1 x2,y2 ..."`, or the 2010 schema's `Point` children). Its class
is its `@type` when it has one (`paragraph`, `heading`, `caption`, ...), else the element's name
(`ImageRegion`). Regions are listed in the page's reading order (`ReadingOrder`'s indexed and
ordered references), then the others in document order. The frame is the page's `imageWidth` x
`imageHeight`; the page id the file's name without `.xml`.

Parsed with lxml, as untrusted input: no DTD loaded, no entity expanded, no network, no huge trees.
lxml comes with `pip install 'tore-studio[scores]'`.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet
from tore_engine.formats.columns import ColumnsBuilder
from tore_engine.formats.image_refs import ImageFolder
from tore_engine.io.files import input_files, read_bytes

ROOT = "PcGts"


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _parse(path: Path):
    try:
        from lxml import etree
    except ImportError:
        raise InputError("reading PAGE-XML needs lxml: pip install 'tore-studio[scores]'", file=str(path)) from None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False)
    try:
        return etree.fromstring(read_bytes(path), parser)
    except etree.XMLSyntaxError as error:
        raise InputError(f"not well-formed XML: {error}", file=str(path)) from None


def _points(region, source: str, page_id: str, where: str) -> list[tuple[float, float]]:
    coords = next((child for child in region if _local(child.tag) == "Coords"), None)
    if coords is None:
        raise InputError(f"{where} has no Coords", file=source, page=page_id)
    try:
        if coords.get("points") is not None:
            return [(float(x), float(y)) for x, y in (pair.split(",") for pair in coords.get("points").split())]
        return [(float(point.get("x")), float(point.get("y"))) for point in coords if _local(point.tag) == "Point"]
    except (TypeError, ValueError):
        raise InputError(f"{where}: Coords must be 'x1,y1 x2,y2 ...' numbers", file=source, page=page_id) from None


def _reading_order(page) -> list[str]:
    """The region ids in reading order: `index` order within each ordered group, groups in order."""
    order = next((child for child in page if _local(child.tag) == "ReadingOrder"), None)
    if order is None:
        return []
    ids: list[str] = []
    for group in order.iter():
        references = [child for child in group if _local(child.tag) in ("RegionRefIndexed", "RegionRef")]
        indexed = sorted(references, key=lambda ref: int(ref.get("index", "0")) if ref.get("index", "0").isdigit() else 0)
        ids += [ref.get("regionRef") for ref in indexed if ref.get("regionRef")]
    return ids


def _add_file(builder: ColumnsBuilder, path: Path, page_images: Path | None, warnings: list[InputWarning]) -> None:
    source, page_id = str(path), path.stem
    root = _parse(path)
    if _local(root.tag) != ROOT:
        raise InputError(f"not PAGE-XML: the root element is <{_local(root.tag)}>, not <{ROOT}>", file=source)
    page = next((child for child in root if _local(child.tag) == "Page"), None)
    if page is None:
        raise InputError("PAGE-XML without a <Page> element", file=source)
    try:
        width, height = float(page.get("imageWidth")), float(page.get("imageHeight"))
    except (TypeError, ValueError):
        raise InputError("<Page> needs numeric imageWidth and imageHeight", file=source, page=page_id) from None
    regions = [element for element in page.iter() if _local(element.tag).endswith("Region") and _local(element.tag) != "Region"]
    rank = {region_id: k for k, region_id in enumerate(_reading_order(page))}
    regions.sort(key=lambda region: rank.get(region.get("id"), len(rank)))  # stable: the rest in document order
    labels: list[str] = []
    coordinates: list[float] = []
    polygons: list[list[tuple[float, float]] | None] = []
    for region in regions:
        kind = _local(region.tag)
        where = f"{kind} {region.get('id')!r}"
        points = _points(region, source, page_id, where)
        if len(points) < 3:
            warnings.append(InputWarning(page_id, None, None, f"{path.name}, {where}: Coords of {len(points)} points is no region; skipped"))
            continue
        labels.append(region.get("type") or kind)
        xs, ys = [x for x, _ in points], [y for _, y in points]
        coordinates += (min(xs), min(ys), max(xs), max(ys))
        polygons.append(points)
    image = None
    if page.get("imageFilename"):
        image = ImageFolder.beside(path, page_images).locate(page.get("imageFilename"), page_id, "", warnings)
    builder.add(page_id, width, height, labels, coordinates, None, image, polygons if polygons else None)


def read(path: Path, *, page_images: Path | None = None) -> LayoutSet:
    """A PAGE-XML file, or a folder of them (one page a file, in name order)."""
    path = Path(path)
    builder = ColumnsBuilder()
    warnings: list[InputWarning] = []
    for file in sorted(input_files(path, (".xml",), "PAGE-XML files")):
        _add_file(builder, file, page_images, warnings)
    return LayoutSet(path.stem if path.is_file() else path.name, builder.build(), None, str(path), warnings)
