"""The operating point on Matrices: TORE's Foreground and per-class F1 at the minimum scores 0.05,
0.10, ..., 0.95 beside mAP's view of the same scores (`plots.sweep`), the best minimum score of each
curve, and a click on a point that evaluates at its minimum score.

It is a section opened on demand (`sweep_open`, in the URL): its chart alone, 36 curves, took the
browser a third to a half of a second in every new tab before the heatmap could be seen, and the
section draws nothing while closed.

The click goes through the sidebar's "Minimum score" (`min_score`, in the URL): the chart's
callback sets it before the run, so the whole run (sidebar, matrices, tables, Overlays) is the
evaluation at that score, exactly `tore evaluate --min-score t`. The sweep itself reads every box
whatever the minimum score, so it is made once a pair (`Evaluated.sweep`).
"""

from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from tore_engine.metrics.sweep import CLASS, MIN_SCORES
from tore_engine.plots.sweep import FOREGROUND_NAME, clicked_min_score, sweep_chart
from tore_engine.studio import sections, state, tables
from tore_engine.studio.evaluations import Evaluated
from tore_engine.studio.panels import plotly_chart

SECTION_OPEN = state.SECTION("sweep")  # whether the section is open (session state and URL)
SECTION_LABEL = "Operating point: the minimum score, TORE's F1 beside mAP's"
# Pages up to which the sweep is made with the page; a larger evaluation makes it when asked: it
# rasterises every page again (for all 19 minimum scores at once), and on a few cores that run would
# take the processor from the browser drawing the page the user is waiting for.
AUTO_SWEEP_PAGES = 5_000
BEST_COLUMNS = {"curve": "curve", "tore": "best minimum score (TORE F1)", "tore_f1": "TORE F1 there",
                "detection": "best minimum score (detection F1)", "detection_f1": "detection F1 there", "ap": "AP (no threshold)"}


def _evaluate_at(key: str) -> None:
    """Chart callback: a click on a point sets the sidebar's minimum score to the point's, so the
    run it starts evaluates there."""
    min_score = clicked_min_score(st.session_state[key])
    if min_score is not None:
        st.session_state[state.MIN_SCORE] = min_score


def best_points(sweep: pd.DataFrame) -> pd.DataFrame:
    """Each curve's best minimum score and its F1, TORE's and the detection view's (NaN: no defined
    point), with AP: one row the Foreground (all classes pooled on the detection side), then each class."""
    rows = []
    for (scope, name), curve in sweep.groupby(["scope", sweep["class"].fillna("")], sort=False):
        tore, detection = curve[curve["best"]], curve[curve["detection_best"]]
        rows.append({"curve": name if scope == CLASS else FOREGROUND_NAME,
                     "tore": tore["min_score"].iloc[0] if len(tore) else None, "tore_f1": tore["f1"].iloc[0] if len(tore) else None,
                     "detection": detection["min_score"].iloc[0] if len(detection) else None,
                     "detection_f1": detection["detection_f1"].iloc[0] if len(detection) else None, "ap": curve["ap"].iloc[0]})
    return pd.DataFrame(rows, columns=list(BEST_COLUMNS)).astype({name: float for name in list(BEST_COLUMNS)[1:]})


def _asked_for(evaluated: Evaluated, model: str) -> bool:
    """Whether to show the sweep on this run: a small evaluation's, or one made already, at once;
    a larger one's once its button is pressed (then it is kept for every session)."""
    pages = len(evaluated.evaluation.page_ids)
    if pages <= AUTO_SWEEP_PAGES or evaluated.sweep_made():
        return True
    st.caption(f"The operating point rasterises the {pages:,} pages again, for the {len(MIN_SCORES)} minimum scores "
               f"{MIN_SCORES[0]:.2f} to {MIN_SCORES[-1]:.2f} at once: less than the time of one evaluation. It is then kept "
               "for every tab and every minimum score of these files.")
    return st.button("Compute the operating point", key=state.SWEEP_MAKE(model), icon=":material/tune:")


def _unavailable(evaluated: Evaluated) -> str | None:
    """Why this evaluation has no operating point to show, if it has none."""
    if evaluated.scored_boxes == 0:
        return ("The predictions have no scores, so there is no threshold to choose: TORE scores them as they are, and the sweep "
                "of minimum scores needs a model's confidences.")
    evaluation = evaluated.evaluation
    if evaluation.sweep_state is None and evaluation.sweep_source is None:
        return "The operating point is the whole dataset's: choose (all documents) to see it."
    return None


def operating_point(evaluated: Evaluated, model: str) -> None:
    """The section of the sweep, drawn only while open: the sweep chart of the evaluation shown and
    each curve's best minimum score; a click on a point evaluates at its minimum score. Outside the
    matrix's fragment, so that the click's run is the whole app's (a click on its legend shows one curve alone)."""
    section = sections.opened(SECTION_LABEL, SECTION_OPEN, icon=":material/tune:")
    if section is not None:
        with section:
            _section(evaluated, model)


def _section(evaluated: Evaluated, model: str) -> None:
    reason = _unavailable(evaluated)
    if reason is not None:
        st.info(reason, icon=":material/tune:")
        return
    key = state.SWEEP_CHART(model)
    if not _asked_for(evaluated, model):
        return
    with st.spinner(f"Evaluating at the {len(MIN_SCORES)} minimum scores {MIN_SCORES[0]:.2f} to {MIN_SCORES[-1]:.2f}…"):
        sweep = evaluated.sweep()
    figure = sweep_chart(sweep, current=evaluated.min_score, title=evaluated.title)
    plotly_chart(figure, key, on_select=functools.partial(_evaluate_at, key), selection_mode="points")
    dropped = "on both sides" if evaluated.min_score_side == "both" else "of the predictions only (`--min-score-side prediction`)"
    st.caption(
        f"Each point is exactly what `tore evaluate --min-score t` gives: boxes scored below t dropped {dropped}, then TORE's F1 of "
        "the pixels (solid: the reduced view's Foreground and each class). Dashed, mAP's view of the same scores: the boxes scored at "
        "least t matched at IoU 0.50 as COCOeval matches them, and their F1; mAP itself ranks the boxes and needs no threshold. "
        "A star is a curve's best point (the lowest minimum score on a tie); the dotted line, the minimum score shown. "
        "**Click a point to evaluate at its minimum score** (it becomes the sidebar's Minimum score; set 0 to keep every box)."
    )
    st.markdown("**Best minimum score of each curve**")
    config = {name: tables.score_column(label) for name, label in BEST_COLUMNS.items() if name != "curve"}
    st.dataframe(best_points(sweep), hide_index=True, width="stretch", column_config=config)
