"""TORE Studio: browse TORE matrices, click through to pages, compare two models.

Run with `streamlit run app.py` (or `./run.sh app`). This entry point holds the choices shared by
every page (dataset, predictions, taxonomy mode, label map) in the sidebar, so they persist across
pages, and keeps the view in the URL. The pages live in `app_pages/` (not `pages/`: Streamlit
1.67 still runs a folder named `pages/` in its legacy multipage mode before `st.navigation` has run
once in the process, which breaks deep links and AppTest's page switching).
"""

import streamlit as st

from tore_engine.studio import state

st.set_page_config(page_title="TORE Studio", layout="wide")
state.begin_run()
pages = [
    st.Page("app_pages/matrices.py", title="Matrices", url_path="matrices", default=True),
    st.Page("app_pages/overlays.py", title="Overlays", url_path="overlays"),
    st.Page("app_pages/compare.py", title="Compare", url_path="compare"),
    st.Page("app_pages/scores.py", title="Scores", url_path="scores"),
]
current = st.navigation(pages)
st.session_state["_dataset"] = state.sidebar()
current.run()
state.publish_url()
