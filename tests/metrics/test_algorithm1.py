"""Algorithm 1: the paper's seven samples, the invariants, and the fast path against brute force."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.brute_force import contribution
from tore_engine.metrics.algorithm1 import ExactCounts, contributions, reduced_counts
from tore_engine.metrics.matrices import ExactMatrix

CLASSES = "ABCD"


def as_sets(bits: str) -> set[int]:
    return {CLASSES.index(c) + 1 for c, bit in zip(CLASSES, bits) if bit == "1"}


def fast(pairs: list[tuple[set[int], set[int]]], weights: list[int], class_count: int) -> list[list[Fraction]]:
    truth = np.zeros((len(pairs), class_count), bool)
    predicted = np.zeros((len(pairs), class_count), bool)
    for p, (t, q) in enumerate(pairs):
        truth[p, list(t)] = True
        predicted[p, list(q)] = True
    counts = contributions(truth, predicted, np.array(weights, dtype=np.int64))
    return ExactMatrix.from_counts(counts).fractions()


# The contributions table of docs/algorithm.md#the-papers-example, sample by sample.
PAPER = [
    ("1100", "1100", {"AA": "1", "BB": "1"}),
    ("0110", "1110", {"BB": "2/3", "CC": "2/3", "BA": "1/3", "CA": "1/3"}),
    ("0001", "1001", {"DD": "1/2", "DA": "1/2"}),
    ("1111", "0111", {"BB": "1", "CC": "1", "DD": "1", "AB": "1/3", "AC": "1/3", "AD": "1/3"}),
    ("0110", "0100", {"BB": "1", "CB": "1"}),
    ("0110", "1100", {"BB": "1", "CA": "1"}),
    ("0101", "1010", {"BA": "1/2", "BC": "1/2", "DA": "1/2", "DC": "1/2"}),
]


def test_each_paper_sample_matches_the_published_contributions():
    for truth, predicted, expected in PAPER:
        matrix = fast([(as_sets(truth), as_sets(predicted))], [1], 5)
        wanted = [[Fraction(0)] * 5 for _ in range(5)]
        for cell, value in expected.items():
            wanted[CLASSES.index(cell[0]) + 1][CLASSES.index(cell[1]) + 1] = Fraction(value)
        assert matrix == wanted, (truth, predicted)


def test_paper_example_sums_to_the_published_exact_matrix():
    pairs = [(as_sets(t), as_sets(p)) for t, p, _ in PAPER]
    matrix = fast(pairs, [1] * 7, 5)
    exact = [["1", "1/3", "1/3", "1/3"], ["5/6", "14/3", "1/2", "0"], ["4/3", "1", "5/3", "0"], ["1", "0", "1/2", "3/2"]]
    assert [row[1:] for row in matrix[1:]] == [[Fraction(v) for v in row] for row in exact]


label_set = st.sets(st.integers(0, 6), min_size=1, max_size=4).map(lambda s: {0} if 0 in s else s)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(label_set, label_set, st.integers(1, 10**6)), min_size=1, max_size=12))
def test_fast_path_equals_the_plain_definition(pairs):
    expected = [[Fraction(0)] * 7 for _ in range(7)]
    for truth, predicted, weight in pairs:
        for (i, j), value in contribution(truth, predicted).items():
            expected[i][j] += weight * value
    assert fast([(t, p) for t, p, _ in pairs], [w for _, _, w in pairs], 7) == expected


@settings(max_examples=200, deadline=None)
@given(label_set, label_set)
def test_invariants_of_one_pixel(truth, predicted):
    matrix = fast([(truth, predicted)], [1], 7)
    for i in range(7):
        assert sum(matrix[i]) == (1 if i in truth else 0)
        for j in range(7):
            assert matrix[i][j] >= 0
            if j not in predicted:
                assert matrix[i][j] == 0
            denominator = len(predicted - truth) if (truth - predicted and predicted - truth) else len(predicted)
            assert (matrix[i][j] * denominator).denominator == 1
    assert sum(map(sum, matrix)) == len(truth)


def test_reduced_counts_equal_the_block_sums_of_the_full_matrix():
    pairs = [({0}, {0}), ({0}, {1, 2}), ({1, 3}, {0}), ({1, 2}, {2, 4}), ({2}, {2})]
    truth = np.zeros((5, 5), bool)
    predicted = np.zeros((5, 5), bool)
    for p, (t, q) in enumerate(pairs):
        truth[p, list(t)] = True
        predicted[p, list(q)] = True
    weights = np.array([7, 3, 5, 11, 2])
    full = np.array(ExactMatrix.from_counts(contributions(truth, predicted, weights)).fractions(), dtype=object)
    blocks = [[full[0, 0], full[0, 1:].sum()], [full[1:, 0].sum(), full[1:, 1:].sum()]]
    assert reduced_counts(truth, predicted, weights, np.zeros(5, np.int64), 1)[0].tolist() == blocks == [[7, 3], [10, 24]]


def test_merging_exact_counts_is_order_independent():
    a = ExactCounts.summed(3, [1, 2, 2], [0, 1, 1], [0, 2, 2], [5, 1, 1])
    b = ExactCounts.summed(3, [2, 3], [1, 2], [2, 0], [4, 9])
    ab, ba = ExactCounts.merge([a, b], 3), ExactCounts.merge([b, a], 3)
    for field in ("denominator", "row", "column", "numerator"):
        assert getattr(ab, field).tolist() == getattr(ba, field).tolist()
    assert ExactMatrix.from_counts(ab).fractions()[1][2] == Fraction(6, 2)
