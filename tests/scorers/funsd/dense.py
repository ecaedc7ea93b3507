"""The dense matching path the engine had before it went sparse, kept as the tests' brute force:
the IoU of every reference box with every predicted box (in plain Python, from docs/benchmarks.md#boxes-and-iou),
scipy's Hungarian solver on that whole matrix (docs/benchmarks.md#matching) and the ICDAR greedy loop over it."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from tore_engine.scorers.funsd.matching import BoxMatching

MARGIN = 1e-9  # totals closer than this are a tie: the spec leaves the choice to the solver


def iou(a, b) -> float:
    """docs/benchmarks.md#boxes-and-iou for one pair; 0 when the union is 0 or not a finite number."""
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 and union != float("inf") else 0.0


def iou_matrix(reference: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    return np.array([[iou(a, b) for b in prediction.tolist()] for a in reference.tolist()]).reshape(len(reference), len(prediction))


def assignment(matrix: np.ndarray) -> list[tuple[int, int]]:
    """Every pair of the Hungarian assignment of maximum total IoU over the whole matrix."""
    if matrix.size == 0:
        return []
    rows, columns = linear_sum_assignment(matrix, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, columns)]


def total(matrix: np.ndarray, pairs) -> float:
    return float(sum(matrix[r, c] for r, c in pairs))


def unique_optimum(matrix: np.ndarray) -> bool:
    """Whether every other assignment's total is lower by more than `MARGIN` (then every correct
    solver keeps the same pairs): forbidding any positive pair of the optimum must cost more."""
    best = assignment(matrix)
    for r, c in best:
        if matrix[r, c] > 0:
            without = matrix.copy()
            without[r, c] = 0.0
            if total(matrix, best) - total(without, assignment(without)) <= MARGIN:
                return False
    return True


def greedy_icdar(matrix: np.ndarray) -> list[tuple[int, int]]:
    """ICDAR-2015: for each GT in order, the first unused prediction with IoU > 0.5."""
    used, matches = set(), []
    for r in range(matrix.shape[0]):
        for c in range(matrix.shape[1]):
            if c not in used and matrix[r, c] > 0.5:
                used.add(c)
                matches.append((r, c))
                break
    return matches


def dense_matching(matrix: np.ndarray) -> BoxMatching:
    kept = [(r, c) for r, c in assignment(matrix) if matrix[r, c] >= 0.5]
    return BoxMatching(matrix.shape, kept, [float(matrix[r, c]) for r, c in kept], len(greedy_icdar(matrix)))
