"""TORE Studio's user interface: Plotly figure builders and page-image rendering (pure functions,
unit-tested without Streamlit), plus the Streamlit glue (`state`, `panels`) that the pages use.

Nothing here computes a metric: numbers come from `tore_engine`.
"""
