"""A reference's history as a Plotly figure: a line a figure (or class) over the saved runs, in the
order given, each run a tick named by its run's name.

Runs are placed by position, not by name: two runs may share a name (`--run-name`, or folders
of the same name under different parents), and a categorical axis would draw them as one point.
Names come from saved manifests (untrusted) and are escaped here; an undefined figure (a run
without mAP, a class the run lacks) is a gap in its line, not a zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from tore_engine.plots.plain_text import plain_for_plotly, shortened

HEIGHT = 380


def run_history_figure(run_names: Sequence[str], folders: Sequence[str], lines: Mapping[str, Sequence[float | None]], title: str) -> go.Figure:
    """`lines`: a line's name -> its value for each run of `run_names` (None or NaN where undefined:
    NumPy makes None NaN, which Plotly draws as a gap);
    a point's hover names its run and the run's folder, which tells runs of one name apart."""
    positions = list(range(len(run_names)))
    hover_names = [f"{plain_for_plotly(name)} ({plain_for_plotly(folder)})" for name, folder in zip(run_names, folders, strict=True)]
    traces = [dict(type="scatter", x=positions, y=np.array(values, dtype=float),
                   customdata=hover_names, mode="lines+markers", name=plain_for_plotly(name),
                   hovertemplate="%{customdata}<br>" + plain_for_plotly(name).replace("%", "%%") + ": %{y:.4f}<extra></extra>")
              for name, values in lines.items()]
    run_axis = {"title": "run", "zeroline": False, "tickmode": "array", "tickvals": positions, "ticktext": [plain_for_plotly(shortened(name)) for name in run_names],
                "range": [-0.5, max(len(run_names) - 0.5, 0.5)]}
    return go.Figure(traces, layout=dict(title=plain_for_plotly(title), yaxis={"range": [0, 1], "title": "score"}, xaxis=run_axis,
                                         height=HEIGHT, margin={"l": 40, "r": 20, "t": 50, "b": 40}))
