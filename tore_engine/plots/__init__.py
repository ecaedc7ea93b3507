"""Figures: computed arrays in, Plotly figures out; one function a figure, used by the app, the
reports and the API alike.

Every figure is made at once, `go.Figure(traces, layout=...)`, from plain dicts (`type="scatter"`
and the like): Plotly validates them once. A `go.Scatter` is validated, then deep-copied and
validated again by `go.Figure`, and `update_layout` after construction is 8x slower than the same
layout given to it (a matrix's heatmap: 45 -> 14 ms, benchmarks/RESULTS.md)."""
