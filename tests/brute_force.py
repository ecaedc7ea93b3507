"""An independent, deliberately plain TORE: per pixel, in pure Python, with exact fractions.

It follows docs/algorithm.md#rasterisation and docs/algorithm.md#algorithm-1 word for word and shares no code with the engine, so the tests
can compare the fast path against it on random pages.
"""

from __future__ import annotations

import math
from fractions import Fraction


def pixel_sets(width: int, height: int, boxes: list[tuple[int, list[float]]]) -> list[list[set[int]]]:
    """Label set of every pixel; `boxes` are (class index >= 1, [x1, y1, x2, y2])."""
    sets = [[set() for _ in range(width)] for _ in range(height)]
    for label, (x1, y1, x2, y2) in boxes:
        for row in range(max(0, math.floor(y1)), min(height, math.ceil(y2))):
            for col in range(max(0, math.floor(x1)), min(width, math.ceil(x2))):
                sets[row][col].add(label)
    for row in sets:
        for pixel in row:
            if not pixel:
                pixel.add(0)
    return sets


def contribution(truth: set[int], predicted: set[int]) -> dict[tuple[int, int], Fraction]:
    """Algorithm 1 for one pixel, cases tested in the order 1, 2, 3, 4."""
    c: dict[tuple[int, int], Fraction] = {}

    def add(i: int, j: int, value: Fraction) -> None:
        c[(i, j)] = c.get((i, j), Fraction(0)) + value

    if truth == predicted:
        for i in truth:
            add(i, i, Fraction(1))
    elif truth < predicted:
        for i in truth:
            add(i, i, Fraction(len(truth), len(predicted)))
            for j in predicted - truth:
                add(i, j, Fraction(1, len(predicted)))
    elif predicted < truth:
        for j in predicted:
            add(j, j, Fraction(1))
        for i in truth - predicted:
            for j in predicted:
                add(i, j, Fraction(1, len(predicted)))
    else:
        for i in truth & predicted:
            add(i, i, Fraction(1))
        for i in truth - predicted:
            for j in predicted - truth:
                add(i, j, Fraction(1, len(predicted - truth)))
    return c


def confusion(width, height, reference_boxes, prediction_boxes, class_count) -> list[list[Fraction]]:
    matrix = [[Fraction(0)] * class_count for _ in range(class_count)]
    truth = pixel_sets(width, height, reference_boxes)
    predicted = pixel_sets(width, height, prediction_boxes)
    for row in range(height):
        for col in range(width):
            for (i, j), value in contribution(truth[row][col], predicted[row][col]).items():
                matrix[i][j] += value
    return matrix
