"""Finding a page among many (tore_engine.studio.page_index): orders, positions, and a bounded search,
checked against plain Python on pages made up here."""

from __future__ import annotations

import numpy as np
import pytest

from tore_engine.studio.page_index import CELL, FILE, LOWEST_MAP, MAX_CELL_ORDERS, WORST, Ordering, PageIndex


def _index(count: int = 1000) -> PageIndex:
    f1 = np.random.default_rng(3).integers(0, 5, count) / 4  # many ties
    return PageIndex([f"doc-{k // 10}/{k % 10 + 1}" for k in range(count)], f1)


def test_orders_are_stable_sorts_and_ranks_invert_them():
    index = _index()
    worst = index.ordering(WORST)
    expected = sorted(range(len(index)), key=lambda k: (index.f1[k], k))  # ascending F1, ties in file order
    assert worst.pages.tolist() == expected and all(worst.rank(page) == rank for rank, page in enumerate(expected))
    assert index.ordering(FILE).pages.tolist() == list(range(len(index)))
    assert worst.at(-5) == expected[0] and worst.at(10**9) == expected[-1]  # clamped at both ends
    assert index.ordering(WORST) is worst  # made once


def test_a_cell_order_is_most_pixels_first_and_only_a_few_are_kept():
    index = _index(50)
    values = np.arange(50.0) % 7
    asked = []

    def cell_values():
        asked.append(1)
        return values

    order = index.ordering(CELL, ("full", "Text", "Table"), cell_values)
    assert order.pages.tolist() == sorted(range(50), key=lambda k: (-values[k], k))
    assert index.ordering(CELL, ("full", "Text", "Table"), cell_values) is order and len(asked) == 1
    for k in range(MAX_CELL_ORDERS + 3):
        index.ordering(CELL, ("full", "row", str(k)), cell_values)
    kept = [key for key in index._orders if isinstance(key, tuple)]
    assert len(kept) == MAX_CELL_ORDERS and ("cell", ("full", "Text", "Table")) not in kept  # the oldest went first


def test_a_search_returns_a_bounded_list_an_exact_id_first_and_the_count():
    index = _index()
    matches, total = index.search("DOC-1/", 20)  # case aside: doc-1/, doc-10/ ... doc-19/, doc-100/ ...
    everything = [page for page in index.page_ids if "doc-1/" in page]
    assert total == len(everything) and matches == everything[:20]
    assert index.search("doc-42/3", 5) == (["doc-42/3"], 1)
    matches, total = index.search("doc-4/1", 3)  # the exact id before doc-4/10, the rest in file order
    assert matches[0] == "doc-4/1" and total == 2 and matches == ["doc-4/1", "doc-4/10"]
    assert index.search("  ", 5) == ([], 0) and index.search("nowhere", 5) == ([], 0)


def test_positions_and_membership():
    index = _index(30)
    assert index.position("doc-2/4") == 23 and index.position("doc-9/9") is None
    assert "doc-0/1" in index and "doc-0/0" not in index and list(index)[:2] == ["doc-0/1", "doc-0/2"]
    assert Ordering.sorted_by(np.array([2.0, 1.0, 2.0])).pages.tolist() == [1, 0, 2]


def test_lowest_map_first_puts_pages_without_a_reference_box_last():
    page_map = np.array([0.5, np.nan, 0.25, 0.5, np.nan, 0.0])
    index = PageIndex([f"p{k}" for k in range(6)], np.zeros(6), page_map)
    assert index.ordering(LOWEST_MAP).pages.tolist() == [5, 2, 0, 3, 1, 4]  # ascending, ties and undefined ones in file order
    assert LOWEST_MAP in index.orders() and LOWEST_MAP not in PageIndex(["p"], np.zeros(1)).orders()
    with pytest.raises(ValueError, match="mAP order without mAP"):
        PageIndex(["p"], np.zeros(1)).ordering(LOWEST_MAP)
