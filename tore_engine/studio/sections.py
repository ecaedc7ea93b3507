"""Sections whose content is drawn only while they are open.

A new tab renders every element the page sends before its first heatmap is drawn, a closed
expander's content included: each widget and table costs the browser tens of milliseconds
(benchmarks/RESULTS.md, "Closed sections drawn on opening"). A section made here is an expander
that reruns when it is opened or closed and sends its content only while open. Whether it is open
is a control like any other: kept in the session, in the URL, across pages.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from tore_engine.studio import url_state


def opened(label: str, key: str, *, expanded: bool = False, icon: str | None = None, where: Any = st) -> DeltaGenerator | None:
    """An expander (in `where`: the page, or `st.sidebar`) open or closed as `key` says (`expanded`
    on a session's first run, unless the URL says); its container while open, to draw the content
    in, else None."""
    url_state.seed(key, expanded, [False, True])
    section = where.expander(label, key=key, on_change="rerun", icon=icon)
    open_now = bool(section.open)
    url_state.share(**{key: open_now if open_now != expanded else None})
    return section if open_now else None
