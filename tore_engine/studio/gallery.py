"""The gallery: the pages behind a matrix cell as thumbnails with the cell's pixels lit, largest
contribution first, a dozen at a time, each opening in Overlays with the cell or tagged where it is.

A thumbnail is the page image drawn small in the bounded drawing processes
(`page_images.rendered`), lit where the engine says the cell's pixels are
(`engine.cell_regions.page_regions`) by `plots.thumbnails`. Finished thumbnails are cached by
what they show (the image, the two pages' boxes, the taxonomy and the cell), so paging back and
forth, or another session on the same pages, draws nothing again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import streamlit as st

from tore_engine.core.layout import Page
from tore_engine.core.taxonomy import Taxonomy
from tore_engine.engine.cell_regions import page_regions
from tore_engine.plots.palette import class_color
from tore_engine.plots.plain_text import percent, pixels, plain_for_markdown
from tore_engine.plots.thumbnails import THUMBNAIL_SIDE, Outlines, cell_thumbnail
from tore_engine.results.drilldown import cell_page_values
from tore_engine.studio import page_images, state, tag_panels
from tore_engine.studio.documents import page_pair
from tore_engine.studio.evaluations import Evaluated

PER_PAGE = 12  # thumbnails a gallery page
COLUMNS = 4
GALLERY, GALLERY_PAGE = state.GALLERY, state.GALLERY_PAGE  # session state keys and URL parameters


def _outlines(page: Page, boxes: np.ndarray) -> list[Outlines]:
    """The page's boxes at these indices, one outline set a label, in the label's colour."""
    labels = [page.labels[k] for k in boxes.tolist()]
    chosen = {label: [k for k, name in zip(boxes.tolist(), labels) if name == label] for label in dict.fromkeys(labels)}
    polygons = page.polygons
    return [Outlines(page.bboxes[indices], class_color(label), tuple(polygons.outline(k) for k in indices) if polygons is not None else ())
            for label, indices in chosen.items()]


@st.cache_data(max_entries=512, show_spinner=False)
def _thumbnail(image: bytes | None, reference: Page, prediction: Page | None, taxonomy: Taxonomy, view: str, cell: tuple[str, str]) -> bytes:
    """One page's thumbnail with the cell lit and the boxes that make it outlined."""
    regions = page_regions(reference, prediction, taxonomy, view, *cell)
    drawn = prediction.scaled_to(reference.width, reference.height) if prediction is not None else None  # the frame the matrix counts in
    outlines = _outlines(reference, regions.reference_boxes) + (_outlines(drawn, regions.prediction_boxes) if drawn is not None else [])
    return cell_thumbnail(image, reference.width, reference.height, regions, outlines)


def thumbnail(evaluated: Evaluated, page_id: str, view: str, cell: tuple[str, str], image_root: Path) -> bytes:
    """The thumbnail of one page of the evaluation, with `cell` of the matrix view `view` lit."""
    reference, prediction = page_pair(evaluated, page_id)
    picture = page_images.rendered(reference.image, image_root, THUMBNAIL_SIDE)
    image = None if isinstance(picture, str) else picture.jpeg
    return _thumbnail(image, reference, prediction, evaluated.evaluation.taxonomy, view, cell)


def _step(delta: int, count: int) -> None:
    st.session_state[GALLERY_PAGE] = min(max(st.session_state[GALLERY_PAGE] + delta, 1), count)


def _gallery_page(count: int, shown_for: str) -> int:
    """The gallery page to show (1-based): the URL's on a first run, the first for a new cell."""
    if st.session_state.get(state.GALLERY_FOR, shown_for) != shown_for:
        st.session_state[GALLERY_PAGE] = 1
    st.session_state[state.GALLERY_FOR] = shown_for
    state.bind(GALLERY_PAGE, 1, range(1, count + 1))
    return st.session_state[GALLERY_PAGE]


def _pager(number: int, count: int, total: int, key: str) -> None:
    first = (number - 1) * PER_PAGE
    previous, where, following = st.columns([1, 4, 1], vertical_alignment="center")
    previous.button("◀ Previous", key=state.GALLERY_BUTTON("previous", key), on_click=_step, args=(-1, count), disabled=number == 1, width="stretch")
    following.button("Next ▶", key=state.GALLERY_BUTTON("next", key), on_click=_step, args=(1, count), disabled=number == count, width="stretch")
    where.caption(f"Pages {first + 1:,}-{min(first + PER_PAGE, total):,} of {total:,} (gallery page {number:,} of {count:,}), "
                  "largest contribution first. Each thumbnail veils the page but where the cell's pixels are, and outlines "
                  "the boxes that make them in their class's colour.")


def _tiles(evaluated: Evaluated, ranked: Sequence[tuple[str, float, float]], first: int, view: str, cell: tuple[str, str],
           model: str, key: str, image_root: Path) -> None:
    for position, (page_id, value, share) in enumerate(ranked):
        if position % COLUMNS == 0:
            columns = st.columns(COLUMNS)  # a row at a time, so that each row's tops align
        with columns[position % COLUMNS]:
            st.image(thumbnail(evaluated, page_id, view, cell, image_root), width="stretch", alt=f"page {page_id}")
            st.caption(f"**{first + position + 1:,}.** {plain_for_markdown(page_id)}: {pixels(value)} px ({percent(share)} of the cell)")
            st.button("Open in Overlays", key=state.GALLERY_BUTTON("open", key, first + position), width="stretch",
                      on_click=state.request_page, args=(page_id, model, cell, view))
            tag_panels.tag_listed_pages(evaluated, [page_id], f"gallery-{key}-{first + position}")  # "reference wrong", at a glance


def _gallery(evaluated: Evaluated, view: str, cell: tuple[str, str], model: str, key: str, image_root: Path) -> None:
    """The pager and one gallery page of thumbnails (run as a fragment of its own, so that turning
    a page, or opening one, reruns nothing else)."""
    state.follow_page_request()  # a thumbnail's button asked for Overlays
    total = int(np.count_nonzero(cell_page_values(evaluated.evaluation, view, *cell)))
    if not total:
        return
    count = math.ceil(total / PER_PAGE)
    number = _gallery_page(count, f"{key}|{view}|{state.cell_text(cell)}")
    _pager(number, count, total, key)
    first = (number - 1) * PER_PAGE
    ranked = evaluated.evaluation.pages_for_cell(*cell, view=view, limit=first + PER_PAGE)  # only as many as shown
    _tiles(evaluated, list(ranked.iloc[first:].itertuples(index=False, name=None)), first, view, cell, model, key, image_root)
    state.publish_url()


def cell_gallery(evaluated: Evaluated, view: str, cell: tuple[str, str], model: str, key: str, image_root: Path) -> None:
    """A toggle, and when on, the gallery of the pages behind `cell` of the matrix view `view`
    (their images found under `image_root`)."""
    shown = st.toggle("Show these pages as a gallery", **state.bind(GALLERY),
                      help=f"thumbnails of the pages behind the cell, {PER_PAGE} at a time, with the cell's pixels lit")
    if shown:
        st.fragment(_gallery)(evaluated, view, cell, model, key, image_root)
