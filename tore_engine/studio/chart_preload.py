"""The Overlays page's chart component (plotly.js), loaded by the browser once a tab's first
page has drawn its own charts.

The matrices are drawn with Vega-Lite so that a new tab shows them without waiting for plotly.js
(about 0.7 s of script on this machine, during which the browser draws nothing), but the Overlays
page draws Plotly figures: opened from a table's row, its first page would wait that 0.7 s. So a
tab's first page draws, a moment after it was shown (a fragment's timed rerun), a blank Plotly
chart the browser loads the component for (once a session: the tab keeps the component).
"""

from __future__ import annotations

import datetime

import plotly.graph_objects as go
import streamlit as st
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.scriptrunner import get_script_run_ctx

AFTER = datetime.timedelta(seconds=1.0)  # after the page arrives: its heatmap is about drawn (RESULTS.md, "App at scale")
_STATE = "_chart_preload"  # session state: "waiting" (the timer runs), "drawn" (the session's tab has the component)
BLANK = go.Figure(layout={"height": 10, "margin": {"l": 0, "r": 0, "t": 0, "b": 0}, "xaxis": {"visible": False}, "yaxis": {"visible": False}})


def preload_later() -> None:
    """The blank chart, `AFTER` the session's first page has arrived (a fragment's timed rerun);
    nothing once the tab has the component."""
    if st.session_state.get(_STATE) != "drawn":
        st.fragment(run_every=AFTER)(_timed)()


def _timed() -> None:
    """The fragment: nothing on the page's own run; on its timed rerun, the blank chart, and the
    timer ended."""
    if _STATE not in st.session_state:
        st.session_state[_STATE] = "waiting"
        return
    st.session_state[_STATE] = "drawn"
    st.plotly_chart(BLANK, config={"staticPlot": True}, key="chart-preload")
    _end_timer()


def _end_timer() -> None:
    """Stop this fragment's timed reruns. Streamlit has no public call for it (a full rerun would,
    but it would also drop what only a link's first run says); this sends the message Streamlit
    itself sends when a timed fragment is no longer drawn. Where that message is unknown, the timer
    goes on, its runs drawing nothing."""
    context = get_script_run_ctx()
    message = ForwardMsg()
    if context is None or not context.fragment_ids_this_run or not hasattr(message, "stop_auto_rerun"):
        return
    message.stop_auto_rerun.fragment_ids.extend(context.fragment_ids_this_run)  # the timed run: this fragment's alone
    context.enqueue(message)
