"""The JSON structure scan compiled with Numba: one pass over the bytes, memory bounded by the keys
of the objects open at any moment, whatever the file's size.

It checks the same rules as the NumPy scan in `tore_engine.io.json` (nesting depth, keys repeated in
one object) and finds the same spans (the top-level object's values, the items of the top-level
array or of the arrays directly in the top-level object), for files too large for the NumPy scan's
whole-file arrays. The NumPy scan stays the reference: tests check both agree on generated texts.

Keys written with escapes cannot be compared byte for byte; the kernel lists the objects that have
one and `io.json` compares their keys by their decoded text.
"""

from __future__ import annotations

import numpy as np

from tore_engine.core import jit
from tore_engine.core.jit import Kernels

OK, TOO_DEEP, REPEATED_KEY, MALFORMED = 0, 1, 2, 3
_FNV_OFFSET, _FNV_PRIME = np.uint64(14695981039346656037), np.uint64(1099511628211)
_SMALL_OBJECT = 16  # keys compared pairwise up to this many; through a hash table beyond
ITEM_DEPTH = 2  # arrays opened at this depth or less get their items' spans
kernels = Kernels()
COMPILE_SECONDS = 2  # about what the one compile takes (benchmarks/RESULTS.md)
COMPILE_MIN_BYTES = 64 * 2**20  # a cold cache is compiled for files from this size (else NumPy scans)
LOCK_NAME = "json-compile.lock"  # its own lock: the page kernel can compile at the same time
WHAT = "TORE's JSON scan"


def prepared(size: int) -> bool:
    """Whether to scan a text of `size` bytes with this kernel (`jit.prepared`): on a cold cache
    only a text so large that the NumPy scan's memory would hurt waits for the compile."""
    return jit.prepared(kernels, WHAT, COMPILE_SECONDS, size, COMPILE_MIN_BYTES, LOCK_NAME)


def warm() -> str:
    """Load the kernel from its cache folder, compiling it there first when the cache is cold."""
    return jit.warm(kernels, WHAT, COMPILE_SECONDS, without_numba="numba is not installed: TORE scans JSON with NumPy", lock_name=LOCK_NAME)


@kernels.helper
def _filled(length, value):
    """An int64 array of `length` times `value`. Only `np.empty`, in one shape, is used: each numpy
    function, dtype and shape compiles an implementation of its own (a cold compile is shorter)."""
    array = np.empty(length, dtype=np.int64)
    for k in range(length):
        array[k] = value
    return array


@kernels.helper
def _same_bytes(data, a0, a1, b0, b1):
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):
        if data[a0 + k] != data[b0 + k]:
            return False
    return True


@kernels.helper
def _first_repeat(data, keys, first, last):
    """The opening-quote offset of the first key (in file order) of keys[first:last] that repeats an
    earlier one of them (same hash and bytes), or -1. Keys are rows (start, end, hash, escaped):
    compared pairwise in small objects, through an open-addressing table in large ones."""
    count = last - first
    if count <= _SMALL_OBJECT:
        for b in range(first + 1, last):
            for a in range(first, b):
                if keys[a, 2] == keys[b, 2] and keys[a, 3] == 0 and keys[b, 3] == 0:
                    if _same_bytes(data, keys[a, 0], keys[a, 1], keys[b, 0], keys[b, 1]):
                        return keys[b, 0]
        return -1
    size = 1
    while size < 2 * count:
        size *= 2
    slots = _filled(size, np.int64(-1))
    for b in range(first, last):
        if keys[b, 3] == 1:
            continue
        slot = keys[b, 2] & (size - 1)
        while slots[slot] >= 0:
            a = slots[slot]
            if keys[a, 2] == keys[b, 2] and _same_bytes(data, keys[a, 0], keys[a, 1], keys[b, 0], keys[b, 1]):
                return keys[b, 0]
            slot = (slot + 1) & (size - 1)
        slots[slot] = b
    return -1


@kernels.helper
def _skip_string(data, i, n):
    """The offset of the closing quote of the string that opens at `i` (n when it never closes)."""
    i += 1
    while i < n and data[i] != 34:
        if data[i] == 92:
            i += 1
        i += 1
    return i


@kernels.helper
def _capacities(data, max_depth):
    """A first, allocation-free pass: how many keys are ever open at once, how many items, top-level
    keys and escaped keys there are, so that the second pass fills arrays it never has to grow (a
    Numba loop that may reassign an array pays reference counting on every iteration)."""
    n = data.shape[0]
    depth = 0
    keys_open = 0
    most_keys = 0
    keys_at = _filled(max_depth + 2, np.int64(0))
    items = 0
    tops = 0
    escaped = 0
    i = np.int64(0)  # not a literal: one compiled helper for every call
    while i < n:
        c = data[i]
        if c == 34:
            start = i
            i = _skip_string(data, i, n)
            for k in range(start + 1, min(i, n)):
                if data[k] == 92:
                    escaped += 1
                    break
        elif c == 123 or c == 91:
            depth += 1
            if depth > max_depth:
                return TOO_DEEP, i, 0, 0, 0, 0
            keys_at[depth] = 0
            if depth <= ITEM_DEPTH + 1:
                items += 1
        elif c == 125 or c == 93:
            if depth == 0:
                return MALFORMED, i, 0, 0, 0, 0
            keys_open -= keys_at[depth]
            depth -= 1
        elif c == 58:
            keys_open += 1
            keys_at[depth] += 1
            most_keys = max(most_keys, keys_open)
            if depth == 1:
                tops += 1
        elif c == 44 and depth <= ITEM_DEPTH:
            items += 1
        i += 1
    return OK, n, most_keys, items, tops, escaped


@kernels.entry(lambda t: (t.Array(t.uint8, 1, "C", readonly=True), t.int64))
def scan(data, max_depth):
    """(status, offset, top-level spans, item spans, objects with escaped keys).

    Top-level spans are rows (key start, key end, value start, value end): key start/end are the
    quotes. Item spans are rows (array opening bracket, item start, item end). Objects with escaped
    keys are rows (opening brace, closing brace).
    """
    status, offset, most_keys, item_room, top_room, escaped_room = _capacities(data, max_depth)
    key_stack = np.empty((most_keys + 1, 4), dtype=np.int64)  # keys of the open objects, innermost last
    top = np.empty((top_room + 1, 4), dtype=np.int64)
    items = np.empty((item_room + 1, 3), dtype=np.int64)
    escaped_objects = np.empty((escaped_room + 1, 2), dtype=np.int64)
    tops = item_count = escaped_count = 0
    if status == OK:
        status, offset, tops, item_count, escaped_count = _fill(data, max_depth, key_stack, top, items, escaped_objects)
    return status, offset, top[:tops], items[:item_count], escaped_objects[:escaped_count]


@kernels.helper
def _fill(data, max_depth, key_stack, top, items, escaped_objects):
    """The second pass, into arrays sized by `_capacities`: (status, offset, and how many rows of
    each it filled; the entry slices them once, which compiles shorter than a slice a return)."""
    n = data.shape[0]
    depth = 0
    keys_used = np.int64(0)
    open_kind = _filled(max_depth + 2, np.int64(0))  # 1 object, 2 array, per depth
    open_at = _filled(max_depth + 2, np.int64(0))
    first_key = _filled(max_depth + 2, np.int64(0))  # where each open object's keys start
    item_start = _filled(max_depth + 2, np.int64(-1))
    tops = 0
    item_count = 0
    escaped_count = 0
    last_string = _filled(np.int64(4), np.int64(0))  # start, end, hash, escaped of the string just read
    value_start = -1
    first_repeat = -1
    i = np.int64(0)  # not a literal: one compiled helper for every call
    while i < n:
        c = data[i]
        if c == 34:  # a string: read to its closing quote, hashing its bytes
            start = i
            hashed = _FNV_OFFSET
            escaped = 0
            i += 1
            while i < n and data[i] != 34:
                if data[i] == 92:
                    escaped = 1
                    hashed = (hashed ^ np.uint64(data[i])) * _FNV_PRIME
                    i += 1
                if i < n:
                    hashed = (hashed ^ np.uint64(data[i])) * _FNV_PRIME
                i += 1
            if i >= n:
                return MALFORMED, start, tops, item_count, escaped_count
            last_string[0], last_string[1], last_string[3] = start, i, escaped
            last_string[2] = np.int64(hashed)
            if depth <= ITEM_DEPTH and depth >= 1 and open_kind[depth] == 2 and item_start[depth] < 0:
                item_start[depth] = start
        elif c == 123 or c == 91:  # { or [
            if depth >= 1 and depth <= ITEM_DEPTH and open_kind[depth] == 2 and item_start[depth] < 0:
                item_start[depth] = i
            depth += 1
            open_kind[depth] = 1 if c == 123 else 2
            open_at[depth] = i
            first_key[depth] = keys_used
            item_start[depth] = -1
        elif c == 125 or c == 93:  # } or ]
            if open_kind[depth] != (1 if c == 125 else 2):
                return MALFORMED, i, tops, item_count, escaped_count
            if c == 125:
                repeat = _first_repeat(data, key_stack, first_key[depth], keys_used)
                if repeat >= 0 and (first_repeat < 0 or repeat < first_repeat):
                    first_repeat = repeat  # go on: an earlier repeat may be in an outer object
                for k in range(first_key[depth], keys_used):
                    if key_stack[k, 3] == 1:
                        escaped_objects[escaped_count, 0], escaped_objects[escaped_count, 1] = open_at[depth], i
                        escaped_count += 1
                        break
                keys_used = first_key[depth]
                if depth == 1 and value_start >= 0:
                    top[tops - 1, 3] = i
                    value_start = -1
            elif depth <= ITEM_DEPTH and item_start[depth] >= 0:
                items[item_count, 0], items[item_count, 1], items[item_count, 2] = open_at[depth], item_start[depth], i
                item_count += 1
            depth -= 1
        elif c == 58:  # : ends a key
            for field in range(4):  # element by element: a row assignment compiles numba's shape checks
                key_stack[keys_used, field] = last_string[field]
            keys_used += 1
            if depth == 1:
                top[tops, 0], top[tops, 1], top[tops, 2], top[tops, 3] = last_string[0], last_string[1], i + 1, n
                tops += 1
                value_start = i + 1
        elif c == 44:  # , ends a value or an item
            if depth == 1 and open_kind[1] == 1 and value_start >= 0:
                top[tops - 1, 3] = i
                value_start = -1
            if depth >= 1 and depth <= ITEM_DEPTH and open_kind[depth] == 2:
                if item_start[depth] >= 0:
                    items[item_count, 0], items[item_count, 1], items[item_count, 2] = open_at[depth], item_start[depth], i
                    item_count += 1
                item_start[depth] = -1
        elif c != 32 and c != 9 and c != 10 and c != 13:  # a number, true, false or null
            if depth >= 1 and depth <= ITEM_DEPTH and open_kind[depth] == 2 and item_start[depth] < 0:
                item_start[depth] = i
        i += 1
    if depth != 0:
        return MALFORMED, n, tops, item_count, escaped_count
    if first_repeat >= 0:
        return REPEATED_KEY, first_repeat, tops, item_count, escaped_count
    return OK, n, tops, item_count, escaped_count
