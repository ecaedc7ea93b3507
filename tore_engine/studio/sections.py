"""Sections whose content is drawn only while they are open.

A new tab renders every element the page sends before its first heatmap is drawn, a closed
expander's content included: each widget and table costs the browser tens of milliseconds
(benchmarks/RESULTS.md, "Closed sections drawn on opening"). A section made here is an expander
that reruns when it is opened or closed and sends its content only while open. Whether it is open
is a control like any other: kept in the session, in the URL, across pages. An expander has no
`persist_state`, and Streamlit drops its state with its page, so the section keeps it apart
(`state.SECTIONS_KEPT`) and seeds the expander from it on the way back.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from tore_engine.studio import state


def opened(label: str, key: str, *, expanded: bool = False, icon: str | None = None, where: Any = st) -> DeltaGenerator | None:
    """An expander (in `where`: the page, or `st.sidebar`) open or closed as `key` says (`expanded`
    on a session's first run, unless the URL says); its container while open, to draw the content
    in, else None."""
    kept = st.session_state.setdefault(state.SECTIONS_KEPT, {})
    if key not in st.session_state and key in kept:
        st.session_state[key] = kept[key]
    state.seed(key, expanded, [False, True])
    section = where.expander(label, key=key, on_change="rerun", icon=icon)
    open_now = kept[key] = bool(section.open)
    state.share(**{key: open_now if open_now != expanded else None})  # a section's own default: open or closed
    return section if open_now else None
