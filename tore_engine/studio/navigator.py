"""The page navigator: the order pages are browsed in (file order, worst reduced F1 first, lowest
mAP first, most boxes of one of TIDE's error types (or FP, FN) first, most pixels in the chosen cell first), Previous / Next, a position, and a search by
page id.

Everything is computed on the server from the evaluation's `PageIndex`: the browser gets the
current page, its position and at most `MATCHES` search results, never the list of page ids, so
that a step or a jump stays as fast at 100,000 pages as at 26. The page lives in
`st.session_state[state.PAGE]` (the URL's `page`) whichever control chose it.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from tore_engine.metrics.box_kernel import ERROR_KINDS
from tore_engine.plots.plain_text import pixels, plain_for_markdown
from tore_engine.results.drilldown import cell_page_values, page_cell
from tore_engine.studio import state
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.page_index import CELL, FILE, LOWEST_MAP, MOST, WORST, Ordering, PageIndex

ORDERS = {FILE: "file order", WORST: "worst reduced F1 first", LOWEST_MAP: "lowest mAP first",
          CELL: "most pixels in the highlighted cell first",
          **{f"{MOST}{name}": f"most {label} first" for name, label in {"fp": "false positives (FP)", "fn": "false negatives (FN)",
                                                                       **{kind: f"{kind} errors" for kind in ERROR_KINDS}}.items()}}
MATCHES = 20  # search results sent to the browser
PAGE, ORDER, POSITION, FIND, MATCH = state.PAGE, state.ORDER, state.POSITION, state.FIND, state.MATCH


def ordering(evaluated: Evaluated, order: str, cell: tuple[str, str] | None, view: str) -> Ordering:
    """The pages in `order` (the cell order needs `cell`), made once and kept with the evaluation."""
    if order != CELL or cell is None:
        return evaluated.index.ordering(order)
    return evaluated.index.ordering(CELL, (view, *cell), lambda: cell_page_values(evaluated.evaluation, view, *cell))


def _go_to(index: PageIndex, page: int) -> None:
    st.session_state[PAGE] = index.page_ids[page]


def _step(index: PageIndex, pages: Ordering, delta: int) -> None:
    """Button callback: the page `delta` places from the current one in this order."""
    current = index.position(st.session_state.get(PAGE, ""))
    _go_to(index, pages.at(delta + (pages.rank(current) if current is not None else 0)))


def _to_position(index: PageIndex, pages: Ordering) -> None:
    _go_to(index, pages.at(int(st.session_state[POSITION]) - 1))


def _first_in_new_order(evaluated: Evaluated, cell: tuple[str, str] | None, view: str) -> None:
    """Order callback: a new order starts at its first page (the worst one, for worst first)."""
    _go_to(evaluated.index, ordering(evaluated, st.session_state[ORDER], cell, view).at(0))


def _found(index: PageIndex) -> None:
    """Search callback: a typed id that is a page id, or matches one page alone, opens it."""
    matches, total = index.search(st.session_state[FIND], 1)
    if matches and (total == 1 or matches[0] == st.session_state[FIND].strip()):
        st.session_state[PAGE] = matches[0]


def _picked() -> None:
    if st.session_state.get(MATCH):
        st.session_state[PAGE] = st.session_state[MATCH]


def _search(index: PageIndex, place: DeltaGenerator | None = None) -> None:
    """A text field and, below it, at most `MATCHES` matching ids to pick from."""
    find_column, match_column = (place or st).columns([2, 3], vertical_alignment="bottom")
    text = find_column.text_input("Find a page by id", key=FIND, on_change=_found, args=(index,),
                                  placeholder="part of a page id, then Enter", help="an exact id or a single match opens at once")
    matches, total = index.search(text, MATCHES)
    if not text.strip():
        return
    if not matches:
        match_column.caption("No page id contains this text.")
        return
    shown = f"{total:,} pages match" + (f"; the first {MATCHES} are listed, type more to narrow them" if total > MATCHES else "")
    match_column.selectbox(shown, matches, index=None, key=MATCH, on_change=_picked, placeholder="choose a match")


def _seeded_page(index: PageIndex, pages: Ordering) -> str:
    """The session's page (the URL's on a first run), else the first page of the order."""
    state.bind(PAGE, index.page_ids[pages.at(0)], index)
    return st.session_state[PAGE]


def _page_map(index: PageIndex, position: int) -> str:
    """The page's mAP for the navigator's line, when the evaluation has mAP."""
    if index.map is None:
        return ""
    value = index.map[position]
    return ", mAP undefined: no reference box" if np.isnan(value) else f", mAP {value:.3f}"


def _box_counts(index: PageIndex, position: int) -> str:
    """The page's box counts: TP, FP, FN and each error type present ("" without box outcomes)."""
    if index.counts is None:
        return ""
    counts = {name: int(values[position]) for name, values in index.counts.items()}
    errors = ", ".join(f"{kind} {counts[kind]:,}" for kind in ERROR_KINDS if counts.get(kind))
    return f"; boxes: TP {counts['tp']:,}, FP {counts['fp']:,}, FN {counts['fn']:,}" + (f" ({errors})" if errors else "")


def page_navigator(evaluated: Evaluated, cell: tuple[str, str] | None = None, view: str = "full",
                   search_place: DeltaGenerator | None = None) -> str:
    """Order, Previous / Next, position and search (below them, or in `search_place`); the page chosen."""
    index = evaluated.index
    orders = [order for order in index.orders() if order != CELL or cell is not None]
    state.bind(ORDER, FILE, orders)
    order_column, previous_column, position_column, next_column = st.columns([4, 2, 3, 2], vertical_alignment="bottom")
    order = order_column.selectbox("Order", orders, key=ORDER, format_func=ORDERS.__getitem__, persist_state="session",
                                   on_change=_first_in_new_order, args=(evaluated, cell, view))
    pages = ordering(evaluated, order, cell, view)
    page_id = _seeded_page(index, pages)
    position = index.position(page_id)
    assert position is not None  # seeded among the index's pages
    rank = pages.rank(position)
    previous_column.button("◀ Previous", on_click=_step, args=(index, pages, -1), width="stretch", disabled=rank == 0)
    next_column.button("Next ▶", on_click=_step, args=(index, pages, 1), width="stretch", disabled=rank == len(pages) - 1)
    st.session_state[POSITION] = rank + 1
    position_column.number_input(f"Position (of {len(pages):,})", 1, len(pages), key=POSITION, on_change=_to_position, args=(index, pages))
    _search(index, search_place)
    in_cell = f", {pixels(page_cell(evaluated.evaluation, view, position, *cell)[0])} px in the cell" if cell is not None else ""
    st.markdown(f"Page **{plain_for_markdown(page_id)}**: {rank + 1:,} of {len(pages):,} in {ORDERS[order]} "
                f"(reduced Foreground F1 {index.f1[position]:.3f}{_page_map(index, position)}{_box_counts(index, position)}{in_cell})")
    return page_id
