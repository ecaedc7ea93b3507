"""A deterministic synthetic DocLayNet-like dataset: reference layouts and a model's predictions.

Used by the TORE benchmark (`benchmarks/bench_tore.py`), the app's 1,000-page test and streaming
measurements, so it must be reproducible and cheap: every page comes from its own seeded generator
`default_rng([seed, page index])`, so page k is the same whether 10 or 100,000 pages are made, and
pages can be streamed without holding the dataset in memory.

A reference page is a column layout (one to three columns of stacked blocks, a page header and
footer) with a few nested boxes (checkboxes, key-value regions, code inside text) that make
multi-label pixels. The prediction is that page with jitter, label swaps, misses, split blocks,
extra boxes and a few boxes crossing the right or bottom edge. Layouts are drawn in page-relative
units and only then scaled to `size` pixels (rounded to 2 decimals), so `size=2050` gives the same
pages as `size=1025` at 4x the pixel count.

    python -m benchmarks.synthetic --pages 200 --out /tmp/synthetic
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tore_engine.core.layout import LayoutSet, Page

DOCLAYNET_CLASSES = [
    "Caption", "Footnote", "Formula", "List-item", "Page-footer", "Page-header", "Picture",
    "Section-header", "Table", "Text", "Title", "Document Index", "Code", "Checkbox-Selected",
    "Checkbox-Unselected", "Form", "Key-Value Region",
]  # fmt: skip
REFERENCE_NAME, PREDICTION_NAME = "synthetic_gt", "synthetic_model"

# Blocks stacked in a column: relative frequency and height range (fraction of the page height).
BLOCKS: dict[str, tuple[float, float, float]] = {
    "Text": (30, 0.03, 0.10),
    "List-item": (12, 0.015, 0.035),
    "Section-header": (7, 0.012, 0.02),
    "Caption": (4, 0.015, 0.03),
    "Picture": (4, 0.08, 0.22),
    "Table": (4, 0.08, 0.22),
    "Formula": (3, 0.02, 0.05),
    "Footnote": (2, 0.012, 0.03),
    "Code": (2, 0.04, 0.10),
    "Key-Value Region": (2, 0.02, 0.05),
    "Document Index": (1, 0.10, 0.25),
    "Form": (1, 0.10, 0.22),
    "Title": (0.5, 0.02, 0.04),
}
BLOCK_KINDS = list(BLOCKS)
BLOCK_WEIGHTS = np.array([weight for weight, _, _ in BLOCKS.values()]) / sum(w for w, _, _ in BLOCKS.values())
NESTED_KINDS = ["Checkbox-Selected", "Checkbox-Unselected", "Key-Value Region", "Code"]
CENTRED_KINDS = {"Picture", "Table", "Formula", "Caption", "Title"}
MARGIN = (0.07, 0.11)  # page margins, relative

# Prediction noise.
MISS, SWAP, SPLIT = 0.05, 0.08, 0.03  # probabilities per reference box
JITTER = 0.003  # standard deviation of each coordinate, relative (3 px on a 1025 px page)
EXTRAS = 0.05  # mean number of false-positive boxes per reference box
EDGE_CROSSING = 0.25  # probability that a false positive crosses the right or bottom edge


def synthetic_page_pairs(
    pages: int,
    seed: int = 0,
    size: int = 1025,
    boxes: int = 40,
    classes: list[str] | None = None,
) -> Iterator[tuple[Page, Page]]:
    """(reference page, predicted page) for page 0..pages-1, one at a time.

    The reference page has exactly `boxes` boxes; the prediction about as many. Labels come from
    `classes` (default: the 17 DocLayNet classes); with another list, DocLayNet kind k is written
    as `classes[k % len(classes)]`.
    """
    classes = list(classes or DOCLAYNET_CLASSES)
    for index in range(pages):
        rng = np.random.default_rng([seed, index])
        reference = _reference_boxes(rng, boxes)
        prediction, scores = _predicted_boxes(rng, reference)
        page_id = f"page_{index:06d}"
        yield (
            _page(page_id, size, reference, classes),
            _page(page_id, size, prediction, classes, scores),
        )


def synthetic_layouts(
    pages: int,
    seed: int = 0,
    size: int = 1025,
    boxes: int = 40,
    classes: list[str] | None = None,
) -> tuple[LayoutSet, LayoutSet]:
    """The reference and prediction layout sets of `synthetic_page_pairs`, held in memory."""
    taxonomy = list(classes or DOCLAYNET_CLASSES)
    pairs = list(synthetic_page_pairs(pages, seed, size, boxes, taxonomy))
    return (
        LayoutSet(REFERENCE_NAME, [reference for reference, _ in pairs], taxonomy),
        LayoutSet(PREDICTION_NAME, [prediction for _, prediction in pairs], taxonomy),
    )


# --- one reference page ----------------------------------------------------------------------------
# A box is (kind, x1, y1, x2, y2) in page-relative units.

Box = tuple[str, float, float, float, float]


def _reference_boxes(rng: np.random.Generator, count: int) -> list[Box]:
    left, right = rng.uniform(*MARGIN), 1 - rng.uniform(*MARGIN)
    top, bottom = rng.uniform(*MARGIN), 1 - rng.uniform(*MARGIN)
    frame: list[Box] = []
    if count >= 1 and rng.random() < 0.8:
        frame.append(("Page-footer", left + rng.uniform(0, 0.3), bottom + 0.02, left + rng.uniform(0.35, 0.6), bottom + 0.04))
    if len(frame) < count and rng.random() < 0.6:
        frame.append(("Page-header", left, top - 0.045, right - rng.uniform(0, 0.4), top - 0.025))
    nested = min(count - len(frame), int(rng.integers(0, 5)) if count >= 8 else 0)
    body = _columns(rng, count - len(frame) - nested, left, right, top, bottom)
    if body and rng.random() < 0.08:  # a full-bleed block running over the right edge
        k = int(rng.integers(len(body)))
        kind, x1, y1, _, y2 = body[k]
        body[k] = (kind, x1, y1, 1 + rng.uniform(0.001, 0.02), y2)
    return frame + body + [_nested_box(rng, body) for _ in range(nested if body else 0)]


def _columns(rng: np.random.Generator, count: int, left: float, right: float, top: float, bottom: float) -> list[Box]:
    """`count` blocks stacked in one to three columns that fill the text area."""
    columns = int(rng.choice([1, 2, 3], p=[0.35, 0.55, 0.10]))
    gutter = 0.03
    width = (right - left - gutter * (columns - 1)) / columns
    per_column = np.full(columns, count // columns) + (np.arange(columns) < count % columns)
    blocks: list[Box] = []
    for column, n in enumerate(per_column.tolist()):
        x_left = left + column * (width + gutter)
        blocks += _stack(rng, n, x_left, x_left + width, top, bottom)
    return blocks


def _stack(rng: np.random.Generator, count: int, left: float, right: float, top: float, bottom: float) -> list[Box]:
    """`count` blocks one under the other, scaled to fill 85-100 % of the column's height."""
    if count == 0:
        return []
    kinds = rng.choice(len(BLOCK_KINDS), size=count, p=BLOCK_WEIGHTS)
    heights = np.array([rng.uniform(BLOCKS[BLOCK_KINDS[k]][1], BLOCKS[BLOCK_KINDS[k]][2]) for k in kinds])
    gaps = rng.uniform(0.004, 0.012, size=count)
    scale = (bottom - top) * rng.uniform(0.85, 1.0) / (heights.sum() + gaps.sum())
    y = top
    blocks = []
    for k, height, gap in zip(kinds.tolist(), (heights * scale).tolist(), (gaps * scale).tolist()):
        kind = BLOCK_KINDS[k]
        x1, x2 = _horizontal_extent(rng, kind, left, right)
        blocks.append((kind, x1, y, x2, y + height))
        y += height + gap
    return blocks


def _horizontal_extent(rng: np.random.Generator, kind: str, left: float, right: float) -> tuple[float, float]:
    width = right - left
    if kind in CENTRED_KINDS:
        share = rng.uniform(0.5, 1.0)
        middle = (left + right) / 2 + rng.normal(0, 0.01)
        return middle - share * width / 2, middle + share * width / 2
    if kind == "List-item":
        return left + rng.uniform(0.02, 0.05) * width, right - rng.uniform(0, 0.02) * width
    if kind == "Section-header":
        return left, left + rng.uniform(0.3, 0.8) * width
    return left + rng.uniform(-0.005, 0.01), right - rng.uniform(-0.005, 0.01)


def _nested_box(rng: np.random.Generator, parents: list[Box]) -> Box:
    """A small box inside (and overlapping) a block: a checkbox, a key-value region, some code."""
    _, x1, y1, x2, y2 = parents[int(rng.integers(len(parents)))]
    kind = NESTED_KINDS[int(rng.integers(len(NESTED_KINDS)))]
    if kind.startswith("Checkbox"):
        side = rng.uniform(0.006, 0.015)
        x, y = rng.uniform(x1, max(x1, x2 - side)), rng.uniform(y1, max(y1, y2 - side))
        return kind, x, y, x + side, y + side
    a, b = np.sort(rng.uniform(y1, y2, size=2))
    return kind, x1 + rng.uniform(0, 0.2) * (x2 - x1), a, x2 - rng.uniform(0, 0.1) * (x2 - x1), b + 0.005


# --- the model's prediction ---------------------------------------------------------------------


def _predicted_boxes(rng: np.random.Generator, reference: list[Box]) -> tuple[list[Box], list[float]]:
    """The reference with misses, label swaps, split blocks and jitter, plus false positives;
    ordered by descending score, as detectors return them."""
    boxes: list[Box] = []
    scores: list[float] = []
    for kind, x1, y1, x2, y2 in reference:
        if rng.random() < MISS:
            continue
        if rng.random() < SWAP:
            kind = DOCLAYNET_CLASSES[int(rng.integers(len(DOCLAYNET_CLASSES)))]
        if rng.random() < SPLIT and y2 - y1 > 0.03:
            cut = rng.uniform(y1 + 0.01, y2 - 0.01)
            parts = [(kind, x1, y1, x2, cut), (kind, x1, cut, x2, y2)]
        else:
            parts = [(kind, x1, y1, x2, y2)]
        for part in parts:
            boxes.append(_jittered(rng, part))
            scores.append(rng.uniform(0.5, 1.0))
    for _ in range(int(rng.poisson(EXTRAS * len(reference)))):
        boxes.append(_false_positive(rng))
        scores.append(rng.uniform(0.2, 0.7))
    order = np.argsort(-np.array(scores), kind="stable")
    return [boxes[k] for k in order], [scores[k] for k in order]


def _jittered(rng: np.random.Generator, box: Box) -> Box:
    kind, *coordinates = box
    x1, y1, x2, y2 = (np.array(coordinates) + rng.normal(0, JITTER, size=4)).tolist()
    return kind, max(0.0, x1), max(0.0, y1), x2, y2  # never negative: the peer wraps those around


def _false_positive(rng: np.random.Generator) -> Box:
    kind = DOCLAYNET_CLASSES[int(rng.integers(len(DOCLAYNET_CLASSES)))]
    if kind.startswith("Checkbox"):
        width = height = rng.uniform(0.006, 0.015)
    else:
        width, height = rng.uniform(0.02, 0.4), rng.uniform(0.01, 0.15)
    x1, y1 = rng.uniform(0, 1 - width), rng.uniform(0, 1 - height)
    if rng.random() < EDGE_CROSSING:
        if rng.random() < 0.5:
            x1 = 1 - width * rng.uniform(0.2, 0.8)
        else:
            y1 = 1 - height * rng.uniform(0.2, 0.8)
    return kind, x1, y1, x1 + width, y1 + height


def _page(page_id: str, size: int, boxes: list[Box], classes: list[str], scores: list[float] | None = None) -> Page:
    labels = [classes[DOCLAYNET_CLASSES.index(kind) % len(classes)] for kind, *_ in boxes]
    bboxes = np.round(np.array([coordinates for _, *coordinates in boxes], dtype=np.float64).reshape(-1, 4) * size, 2)
    return Page(page_id, size, size, labels, bboxes, None if scores is None else np.round(np.array(scores), 4))


# --- native layout JSON ----------------------------------------------------------------------------


def page_json(page: Page) -> dict:
    """One page as native layout JSON (docs/formats.md#layout-json)."""
    boxes = []
    for k, (label, bbox) in enumerate(zip(page.labels, page.bboxes.tolist())):
        box = {"label": label, "bbox": bbox}
        if page.scores is not None and np.isfinite(page.scores[k]):
            box["score"] = float(page.scores[k])
        boxes.append(box)
    return {"id": page.id, "width": page.width, "height": page.height, "boxes": boxes}


def write_layout_files(
    out: str | Path,
    pages: int,
    seed: int = 0,
    size: int = 1025,
    boxes: int = 40,
    classes: list[str] | None = None,
) -> tuple[Path, Path]:
    """Write `reference.json` and `prediction.json` into `out`, streaming page by page so that
    100,000 pages need no more memory than one."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    taxonomy = list(classes or DOCLAYNET_CLASSES)
    paths = out / "reference.json", out / "prediction.json"
    with paths[0].open("w", encoding="utf-8") as reference, paths[1].open("w", encoding="utf-8") as prediction:
        for handle, name in ((reference, REFERENCE_NAME), (prediction, PREDICTION_NAME)):
            handle.write(json.dumps({"name": name, "taxonomy": taxonomy})[:-1] + ', "pages": [\n')
        for index, pair in enumerate(synthetic_page_pairs(pages, seed, size, boxes, taxonomy)):
            for handle, page in zip((reference, prediction), pair):
                handle.write(("" if index == 0 else ",\n") + json.dumps(page_json(page)))
        for handle in (reference, prediction):
            handle.write("\n]}\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.synthetic",
        description="Write a deterministic synthetic DocLayNet-like dataset as two native layout JSON "
        "files, OUT/reference.json and OUT/prediction.json.",
    )
    parser.add_argument("--pages", type=int, required=True, help="number of pages")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder, created when missing")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--size", type=int, default=1025, help="page width and height in pixels (default 1025)")
    parser.add_argument("--boxes", type=int, default=40, help="reference boxes per page (default 40)")
    args = parser.parse_args(argv)
    for path in write_layout_files(args.out, args.pages, args.seed, args.size, args.boxes):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
