"""TORE Studio from this checkout: `streamlit run app.py` serves the same app as `tore app`
(its settings are in .streamlit/config.toml, as `tore app` passes them)."""

from tore_engine.studio.app import main

main()
