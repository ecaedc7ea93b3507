"""Records by score, highest first, ties in a given order: mAP's ranking and TIDE's score orders,
of millions of records at scale (4 million at 100,000 pages), compiled.

NumPy sorts floats only by comparing them (its stable sort is a timsort, 0.3-0.6 s for 4 million
scores, most of them ties); `_descending` sorts them by their bits instead, a stable radix sort
(least significant digit first, 16 bits a pass, a pass left out where every record has the same
digit), in linear time. A float's bits order as the float does once the sign is taken care of:
positive floats' bits ascend with them, negative floats' descend, so each score becomes a 64-bit
key whose unsigned order is the scores' descending order (-0.0 as 0.0, which compare equal; NaN
last, as NumPy's sort leaves it). Written here because NumPy has no stable sort of floats but its
comparison sort, and no library we depend on has one either. mAP's ranking (by class, then score)
is one more pass, by class; TIDE's second order (its true positives after its errors among equal
scores) one pass over the first (`descending_twice`). NumPy's sort stays: for small jobs,
without numba, and as the tests' cross-check (`tests/metrics/test_score_order.py`). When the
kernel pays off is mAP's rule (`map_kernel.use_kernels`), which also warms it.
"""

from __future__ import annotations

import numpy as np

from tore_engine.core import jit

WHAT = "the score order kernel"
COMPILE_SECONDS = 1.0
COMPILED_FROM_RECORDS = 200_000  # NumPy sorts 200,000 scores in about 20 ms; loading the kernel takes 10 ms once numba is up

_SIGN = np.uint64(1 << 63)
_EXPONENT, _FRACTION = np.uint64(0x7FF0000000000000), np.uint64(0x000FFFFFFFFFFFFF)
_LAST = np.uint64(0xFFFFFFFFFFFFFFFF)  # NaN's key: after every number
_DIGIT_BITS = 16
_DIGITS = 64 // _DIGIT_BITS
_DIGIT_MASK = np.uint64((1 << _DIGIT_BITS) - 1)

ordering = jit.Kernels(borrowing=True)


@ordering.helper
def _key(bits):
    """The descending key of a float64 given as its bits: unsigned keys ascend as the scores descend."""
    if bits == _SIGN:  # -0.0, equal to 0.0
        bits = np.uint64(0)
    if bits & _EXPONENT == _EXPONENT and bits & _FRACTION != np.uint64(0):
        return _LAST
    if bits & _SIGN != np.uint64(0):
        return bits  # a negative score: the larger its magnitude, the later
    return ~(bits | _SIGN)


@ordering.entry(lambda t: (t.uint64[::1], t.int32[::1], t.int16[::1], t.uint8[::1]))
def _descending(bits, first, classes, last_in_ties):
    """The positions `first` lists, stably sorted by their scores (given as float64 bits),
    highest first, then (unless `classes` is empty) stably by their class, ascending (classes from
    0 to 2^15 - 1); `first` is one of the two arrays the passes write (its order is lost). Each pass
    reads a position's key again from its bits rather than moving the keys along: one array of
    positions is all it makes (4 million records: 16 MB, not 80). Returned with the other array,
    which holds, when `last_in_ties` marks positions, the order with each run of equal scores'
    marked positions after the rest (else nothing of use)."""
    n = len(first)
    passes = _DIGITS + 1 if len(classes) else _DIGITS  # the score's digits, least significant first, then the class
    counts = np.zeros((_DIGITS + 1, 1 << _DIGIT_BITS), np.int64)
    for i in range(n):  # every pass's counts at once: they do not depend on the order
        position = first[i]
        key = _key(bits[position])
        for digit in range(_DIGITS):
            counts[digit, np.int64((key >> np.uint64(digit * _DIGIT_BITS)) & _DIGIT_MASK)] += 1
        if passes > _DIGITS:
            counts[_DIGITS, np.int64(classes[position])] += 1
    positions, other = first, np.empty(n, np.int32)
    for digit in range(passes):
        count = counts[digit]
        shared = False  # every record has the same digit here: the pass would change nothing
        for value in range(1 << _DIGIT_BITS):
            shared = shared or count[value] == n
        if shared:
            continue
        start = 0
        for value in range(1 << _DIGIT_BITS):
            count[value], start = start, start + count[value]
        shift = np.uint64(digit * _DIGIT_BITS)
        for i in range(n):
            position = positions[i]
            value = np.int64(classes[position]) if digit == _DIGITS else np.int64((_key(bits[position]) >> shift) & _DIGIT_MASK)
            at = count[value]
            other[at] = position
            count[value] = at + 1
        positions, other = other, positions
    if len(last_in_ties):  # the same order, each run of equal scores with its marked records last, into the spare array
        start = 0
        while start < n:
            key, end = _key(bits[positions[start]]), start + 1
            while end < n and _key(bits[positions[end]]) == key:
                end += 1
            at = start
            for mark in range(2):
                for i in range(start, end):
                    if (last_in_ties[positions[i]] != 0) == (mark == 1):
                        other[at] = positions[i]
                        at += 1
            start = end
    return positions, other


def descending(scores: np.ndarray, first: np.ndarray | None = None, *, compiled: bool, classes: np.ndarray | None = None) -> np.ndarray:
    """The positions `first` lists (distinct positions of `scores`; default all, ascending) by
    score, highest first, ties in their order in `first`: NumPy's stable argsort of
    `-scores[first]`, as positions of `scores`; then, given `classes` (each position's, from 0 to
    2^15 - 1), stably by class. `compiled`: by `_descending` (up to 2^31 - 1 records), which
    overwrites a copy of `first`."""
    if first is not None and len(first) > len(scores):
        raise ValueError(f"`first` lists {len(first)} positions of {len(scores)} scores: it must list each at most once")
    if classes is not None and (classes.min(initial=0) < 0 or classes.max(initial=0) > np.iinfo(np.int16).max):
        raise ValueError("classes must lie in 0 to 2^15 - 1")  # the kernel indexes its count table by them, unchecked
    positions = np.int32 if len(scores) <= np.iinfo(np.int32).max else np.int64
    if compiled and positions is np.int32:
        start = np.arange(len(scores), dtype=np.int32) if first is None else np.array(first, np.int32)
        keys = np.zeros(0, np.int16) if classes is None else np.ascontiguousarray(classes, np.int16)
        return ordering.load()(np.ascontiguousarray(scores, np.float64).view(np.uint64), start, keys, np.zeros(0, np.uint8))[0]
    order = np.argsort(-(scores if first is None else scores[first]), kind="stable").astype(positions, copy=False)
    order = order if first is None else np.asarray(first, positions)[order]
    return order if classes is None else order[np.argsort(classes[order], kind="stable")]


def descending_twice(scores: np.ndarray, first: np.ndarray, last_in_ties: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`descending(scores, first, compiled=True)`, and the same order with, in each run of equal
    scores, the positions `last_in_ties` marks (a bool a position of `scores`) after the others:
    TIDE's two orders (its errors before its true positives in ties) from one sort, the second
    made from the first in one pass. Scores hold no NaN here (NaN is never equal to itself: NumPy's
    runs of equal scores would split where these do not)."""
    if len(first) > len(scores) or len(scores) > np.iinfo(np.int32).max:
        raise ValueError(f"`first` lists {len(first)} positions of {len(scores)} scores: at most each once, of at most 2^31 - 1")
    marks = np.ascontiguousarray(last_in_ties, np.bool_).view(np.uint8)
    if len(marks) != len(scores):
        raise ValueError("last_in_ties must mark each position of scores")  # the kernel reads it by position, unchecked
    if not len(first):
        return np.zeros(0, np.int32), np.zeros(0, np.int32)
    return ordering.load()(np.ascontiguousarray(scores, np.float64).view(np.uint64), np.array(first, np.int32), np.zeros(0, np.int16), marks)
