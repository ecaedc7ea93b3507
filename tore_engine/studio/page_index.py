"""Finding a page among many: the orders pages are browsed in, a page's place in each, and a search
by id that returns a bounded list of matches.

Built once an evaluation and kept with it in the shared store (`evaluations.Evaluated.index`), so
that a step, a jump to a position or a search costs milliseconds at 100,000 pages, and the browser
is sent the page it shows and a few matches, never every page id. No Streamlit here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

import numpy as np

FILE, WORST, LOWEST_MAP, CELL = "file", "worst", "map", "cell"
MOST = "most:"  # an order by a count of pages.csv, most first: "most:fp", "most:Loc"
MAX_CELL_ORDERS = 16  # cell orders kept an evaluation (two arrays of page indices each)


@dataclass(frozen=True)
class Ordering:
    """Pages in one order: `pages[r]` is the page index at rank r, `ranks[p]` the rank of page p."""

    pages: np.ndarray
    ranks: np.ndarray

    @classmethod
    def sorted_by(cls, keys: np.ndarray) -> Ordering:
        """Pages by ascending `keys`, ties in file order."""
        pages = np.argsort(keys, kind="stable")
        ranks = np.empty_like(pages)
        ranks[pages] = np.arange(len(pages))
        return cls(pages, ranks)

    def __len__(self) -> int:
        return len(self.pages)

    def at(self, rank: int) -> int:
        """The page index at `rank`, clamped to the first and last page."""
        return int(self.pages[min(max(rank, 0), len(self.pages) - 1)])

    def rank(self, page: int) -> int:
        return int(self.ranks[page])


@dataclass
class PageIndex:
    """An evaluation's page ids, each page's reduced Foreground F1 and mAP (None: the evaluation has
    no mAP; NaN for a page without reference box), and its orders."""

    page_ids: list[str]
    f1: np.ndarray
    map: np.ndarray | None = None
    counts: dict[str, np.ndarray] | None = None  # each page's box counts by pages.csv's column (tp, fp, fn, Cls ...)
    _positions: dict[str, int] = field(init=False, repr=False)
    _orders: OrderedDict[Hashable, Ordering] = field(init=False, repr=False, default_factory=OrderedDict)
    _lowered: list[str] = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._positions = {page_id: position for position, page_id in enumerate(self.page_ids)}
        self._lowered = [page_id.casefold() for page_id in self.page_ids]

    def __len__(self) -> int:
        return len(self.page_ids)

    def __contains__(self, page_id: object) -> bool:
        return page_id in self._positions

    def __iter__(self) -> Iterator[str]:
        return iter(self.page_ids)

    def position(self, page_id: str) -> int | None:
        """The page's index in file order, or None when the evaluation has no such page."""
        return self._positions.get(page_id)

    def orders(self) -> list[str]:
        """The orders this index can make (a cell order needs a cell)."""
        counted = [f"{MOST}{name}" for name in self.counts or {} if name != "tp"]
        return [FILE, WORST, *([LOWEST_MAP] if self.map is not None else []), *counted, CELL]

    def ordering(self, order: str, cell_key: Hashable = None, cell_values: Callable[[], np.ndarray] | None = None) -> Ordering:
        """File order, worst reduced F1 first, lowest mAP first (pages without a reference box, whose
        mAP is undefined, last), most boxes of a count first (`MOST`; ties in file order), or most pixels in a cell first (`cell_values()`: every page's
        pixels in the cell, asked for once a `cell_key`; the order is kept)."""
        key = (order, cell_key) if order == CELL else order
        with self._lock:
            if key in self._orders:
                self._orders.move_to_end(key)
                return self._orders[key]
        if order == FILE:
            made = Ordering.sorted_by(np.zeros(len(self.page_ids)))
        elif order == WORST:
            made = Ordering.sorted_by(self.f1)
        elif order == LOWEST_MAP and self.map is not None:
            made = Ordering.sorted_by(self.map)  # NaN sorts last
        elif order.startswith(MOST) and self.counts is not None and order[len(MOST):] in self.counts:
            made = Ordering.sorted_by(-self.counts[order[len(MOST):]].astype(np.int64))
        elif order == CELL and cell_values is not None:
            made = Ordering.sorted_by(-np.asarray(cell_values(), dtype=float))
        else:
            raise ValueError(f"unknown order {order!r}, a cell order without its values, or a mAP order without mAP")
        with self._lock:
            self._orders[key] = made
            cell_orders = [kept for kept in self._orders if isinstance(kept, tuple)]
            for oldest in cell_orders[: max(0, len(cell_orders) - MAX_CELL_ORDERS)]:
                del self._orders[oldest]
        return made

    def search(self, text: str, limit: int) -> tuple[list[str], int]:
        """At most `limit` page ids containing `text` (case aside), an exact match first and the
        rest in file order, and how many match in all."""
        needle = text.strip().casefold()
        if not needle:
            return [], 0
        hits = [position for position, lowered in enumerate(self._lowered) if needle in lowered]
        exact = self._positions.get(text.strip())
        if exact is not None:
            hits.remove(exact)
            hits.insert(0, exact)
        return [self.page_ids[position] for position in hits[:limit]], len(hits)
