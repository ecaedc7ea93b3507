"""TORE Studio's user interface: page-image rendering (pure functions, unit-tested without
Streamlit; the charts are `tore_engine.plots`' Plotly figures), plus the Streamlit glue the pages use: the app's state and the URL
(`state`: every session key, named once), the
sidebar and its data sources (`sidebar`, `uploads`, `compute`), the evaluation store
(`evaluations`), page images (`page_images`), plain-text display (`plain_text`), error display
(`messages`) and the shared widgets (`panels`).

Nothing here computes a metric: numbers come from `tore_engine`.
"""
