"""TORE engine: taxonomy-invariant, pixel-level evaluation of document layouts.

The engine never imports Streamlit or Plotly: the command line and the app build on it.
"""

__version__ = "0.1.0"
