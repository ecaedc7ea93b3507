"""TORE Studio: browse TORE matrices, click through to pages, compare two models.

Run with `tore app`, `./run.sh app` or, from a checkout, `streamlit run app.py`. This entry point holds the choices shared by every page
(dataset, predictions, taxonomy mode, label map, compute) in the sidebar, so they persist across
pages, and keeps the view in the URL. The pages live in `app_pages/` (not `pages/`: Streamlit
1.67 still runs a folder named `pages/` in its legacy multipage mode before `st.navigation` has run
once in the process, which breaks deep links and AppTest's page switching). Whatever a page
raises becomes a short message (`messages.shown_errors`), never a traceback.
"""

from pathlib import Path

import streamlit as st

from tore_engine.studio import tag_panels, url_state, warm_up
from tore_engine.studio.messages import shown_errors
from tore_engine.studio.sidebar import SIDEBAR_WIDTH, sidebar

PAGES = Path(__file__).with_name("app_pages")  # absolute, so that a launcher anywhere (the checkout's app.py) finds them


def main() -> None:
    """One run of the app: the page set, the sidebar shared by every page, the current page."""
    st.set_page_config(page_title="TORE Studio", layout="wide", initial_sidebar_state=SIDEBAR_WIDTH)
    warm_up.start()  # when the server was not started by `tore app`, which starts it first
    st.set_option("client.showErrorDetails", "none")  # should anything escape `shown_errors`
    url_state.begin_run()
    # Streamlit serves the default page at `/` only; the hidden page runs the same file at `/matrices`,
    # so that a typed or shared /matrices link works like the other pages' (the default's own url_path
    # only has to be unique).
    pages = [
        st.Page(PAGES / "matrices.py", title="Matrices", url_path="start", default=True),
        st.Page(PAGES / "matrices.py", title="Matrices", url_path="matrices", visibility="hidden"),
        st.Page(PAGES / "overlays.py", title="Overlays", url_path="overlays"),
        st.Page(PAGES / "models.py", title="Models", url_path="models"),
        st.Page(PAGES / "compare.py", title="Compare", url_path="compare"),
        st.Page(PAGES / "runs.py", title="Runs", url_path="runs"),
        st.Page(PAGES / "scores.py", title="Scores", url_path="scores"),
    ]
    current = st.navigation(pages)
    # A callback asked for another page (a table's row opened in Overlays, a model to Compare): go
    # there before drawing anything, the sidebar included. Fragments' callbacks rerun only their
    # fragment, which follows the request itself.
    url_state.follow_page_request()
    with shown_errors():
        st.session_state["_dataset"] = sidebar()
        tag_panels.saved_views()
        current.run()
    url_state.publish_url()


if __name__ == "__main__":
    main()
