"""The simulated models of the demo (tore_engine.demo.models): model A confuses, misses and splits;
model B, in its own coarse classes, merges lists and running heads."""

from __future__ import annotations

from collections import Counter

from tore_engine.demo.compose import ComposedPage
from tore_engine.demo.ink import Element
from tore_engine.demo.models import CONFUSIONS_A, model_a, model_b


def _page(elements: list[Element]) -> ComposedPage:
    return ComposedPage("test/p1", 612, 792, 0, 1, elements)


def _line_boxes(x: float, y: float, lines: int) -> list[tuple]:
    return [(x, y + 12 * i, x + 200, y + 12 * i + 10) for i in range(lines)]


def test_model_a_confuses_misses_and_splits() -> None:
    titles = _page([Element("Title", (50, 50 + i, 300, 70 + i), "title") for i in range(400)])
    labels = Counter(p.label for p in model_a(titles))
    assert 0.25 < labels["Section-header"] / 400 < 0.45 and labels["Title"] > 200
    paragraphs = [Element("Text", (50, 100, 250, 160), "paragraph", 0, i, _line_boxes(50, 100, 6)) for i in range(400)]
    predicted = model_a(_page(paragraphs))
    texts = [p for p in predicted if p.label == "Text"]
    confused = sum(chance for _, chance in CONFUSIONS_A["Text"])
    assert len(texts) > 400 * (1 - confused) + 0.05 * 400  # splits (18%) outnumber confusions
    heights = sorted(p.bbox[3] - p.bbox[1] for p in texts)
    assert heights[0] < 40 < heights[-1]  # some halves, some whole paragraphs


def test_model_b_merges_lists_and_running_heads() -> None:
    items = [Element("List-item", b, "bullet", 0, 7, [b]) for b in _line_boxes(60, 100, 5)]
    heads = [Element("Page-header", (72, 40, 160, 48), "left"), Element("Page-header", (480, 40, 540, 48), "right")]
    predicted = model_b(_page(heads + items))
    texts = [p for p in predicted if p.label == "text"]
    headers = [p for p in predicted if p.label == "header_footer"]
    assert len(texts) == 1 and len(headers) == 1
    x1, y1, x2, y2 = texts[0].bbox
    assert x1 < 60 and y1 < 100 and x2 > 260 and y2 > 158  # one oversized box over all five items
    assert headers[0].bbox[0] < 72 and headers[0].bbox[2] > 540
