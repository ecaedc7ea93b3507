"""Small still pictures of a page with one matrix cell lit: the gallery's thumbnails.

Drawn with Pillow (docs/app.md#thumbnails), not Plotly, so that a dozen of
them cost a few milliseconds each and travel as small JPEGs. The lighting is the Overlays page's:
everything is veiled except the grid rectangles behind the cell (`engine.cell_regions`), each
lit by the share of its pixels the cell gets; a thumbnail pixel that covers several rectangles
gets their area-weighted mean, so a region thinner than a thumbnail pixel still shows.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from tore_engine.engine.cell_regions import CellRegions

THUMBNAIL_SIDE = 360  # pixels of a thumbnail's longer side
VEIL_COLOUR = (20, 20, 20)  # as the Overlays page's veil
VEIL_OPACITY = 0.55
NO_IMAGE_COLOUR = (240, 240, 240)  # the page's ground when it has no drawable image
OUTLINE_WIDTH = 2
JPEG_QUALITY = 80


@dataclass(frozen=True)
class Outlines:
    """Boxes to outline on the thumbnail, in page units `(x1, y1, x2, y2)`, in one colour."""

    boxes: np.ndarray  # (n, 4)
    colour: str  # "#rrggbb"
    polygons: tuple[np.ndarray | None, ...] = ()  # per box, its outline's (x, y) points when it is a polygon


def thumbnail_size(width: float, height: float, max_side: int = THUMBNAIL_SIDE) -> tuple[int, int]:
    """The thumbnail's pixels of a page of this size (page units): its proportions, `max_side` long."""
    scale = max_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def _overlap(edges: np.ndarray, pixels: int, extent: float) -> np.ndarray:
    """(pixels, intervals): the share of each thumbnail pixel along one axis covered by each
    interval between consecutive `edges` (page units; the thumbnail spans 0..extent)."""
    bounds = np.linspace(0.0, extent, pixels + 1)
    low = np.maximum(bounds[:-1, None], edges[None, :-1])
    high = np.minimum(bounds[1:, None], edges[None, 1:])
    return np.clip(high - low, 0.0, None) / (extent / pixels)


def lit_share(regions: CellRegions, width: float, height: float, size: tuple[int, int]) -> np.ndarray:
    """(rows, columns) of the thumbnail: how much of each of its pixels the cell gets, 0..1 (the
    regions' shares, averaged over each thumbnail pixel by area)."""
    xs = np.unique(np.concatenate([[0.0, width], regions.x0, regions.x1]).astype(float))
    ys = np.unique(np.concatenate([[0.0, height], regions.y0, regions.y1]).astype(float))
    grid = np.zeros((len(ys) - 1, len(xs) - 1))
    grid[np.searchsorted(ys, regions.y0), np.searchsorted(xs, regions.x0)] = regions.shares
    return np.clip(_overlap(ys, size[1], height) @ grid @ _overlap(xs, size[0], width).T, 0.0, 1.0)


def _veil(share: np.ndarray) -> Image.Image:
    """The veil as an RGBA layer: full where the cell gets nothing, clear where it gets all."""
    alpha = np.rint(VEIL_OPACITY * 255 * (1.0 - share)).astype(np.uint8)
    layer = Image.new("RGBA", (share.shape[1], share.shape[0]), (*VEIL_COLOUR, 0))
    layer.putalpha(Image.fromarray(alpha, mode="L"))
    return layer


def _ground(image: bytes | None, size: tuple[int, int]) -> Image.Image:
    """The page image stretched over the page's frame, as the Overlays page lays it, or a plain
    ground without one."""
    if image is None:
        return Image.new("RGBA", size, (*NO_IMAGE_COLOUR, 255))
    with Image.open(io.BytesIO(image)) as picture:
        return picture.convert("RGBA").resize(size, Image.Resampling.BILINEAR)


def cell_thumbnail(image: bytes | None, width: float, height: float, regions: CellRegions, outlines: Sequence[Outlines] = (),
                   max_side: int = THUMBNAIL_SIDE) -> bytes:
    """A JPEG of a `width` x `height` page (page units) on its image (bytes Pillow reads; None: a
    plain ground), veiled but where the cell's regions are, with `outlines` drawn on top."""
    size = thumbnail_size(width, height, max_side)
    picture = Image.alpha_composite(_ground(image, size), _veil(lit_share(regions, width, height, size))).convert("RGB")
    draw = ImageDraw.Draw(picture)
    scale = np.array([size[0] / width, size[1] / height] * 2)
    for outline in outlines:
        for k, box in enumerate(np.asarray(outline.boxes, dtype=float).reshape(-1, 4) * scale):
            points = outline.polygons[k] if k < len(outline.polygons) else None
            if points is not None:  # a polygon drawn as itself
                draw.polygon([tuple(point) for point in (np.asarray(points, dtype=float) * scale[:2]).tolist()], outline=outline.colour,
                             width=OUTLINE_WIDTH)
            else:
                draw.rectangle(box.tolist(), outline=outline.colour, width=OUTLINE_WIDTH)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()
