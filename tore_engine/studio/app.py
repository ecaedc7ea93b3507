"""TORE Studio: browse TORE matrices, click through to pages, compare two models.

Run with `tore app`, `./run.sh app` or, from a checkout, `streamlit run app.py`. This entry point,
the app's composition root, holds the choices shared by every page (dataset, predictions, taxonomy
mode, label map, compute) in the sidebar, so they persist across pages, and keeps the view in the
URL (`state`). Each page is a function of `app_pages/` that receives the dataset the sidebar chose
(`st.Page(callable)`): no page reads it from a global. Whatever a page raises becomes a short
message (`messages.shown_errors`), never a traceback.
"""

from collections.abc import Callable

import streamlit as st

from tore_engine.studio import background, panels, state, tag_panels, warm_up
from tore_engine.studio.app_pages import compare, matrices, models, overlays, runs, scores
from tore_engine.studio.messages import shown_errors
from tore_engine.studio.sidebar import SIDEBAR_WIDTH, Dataset, sidebar

# name (its URL path) -> title and the function that draws it; Streamlit serves the default page at
# `/` only, so Matrices is also served at `/matrices` (hidden), so that a typed or shared link works
PAGES: dict[str, tuple[str, Callable[[Dataset], None]]] = {
    "matrices": ("Matrices", matrices.page), "overlays": ("Overlays", overlays.page), "models": ("Models", models.page),
    "compare": ("Compare", compare.page), "runs": ("Runs", runs.page), "scores": ("Scores", scores.page),
}
DEFAULT_PATH = "start"


def main() -> None:
    """One run of the app: the page set, the sidebar shared by every page, the current page."""
    st.set_page_config(page_title="TORE Studio", layout="wide", initial_sidebar_state=SIDEBAR_WIDTH)
    warm_up.start()  # when the server was not started by `tore app`, which starts it first
    st.set_option("client.showErrorDetails", "none")  # should anything escape `shown_errors`
    state.begin_run()
    chosen: list[Dataset] = []  # the sidebar's dataset, made after the page set (a page runs only once it is there)

    def page_of(draw: Callable[[Dataset], None]) -> Callable[[], None]:
        return lambda: draw(chosen[0])

    title, draw = PAGES["matrices"]
    pages = {DEFAULT_PATH: st.Page(page_of(draw), title=title, url_path=DEFAULT_PATH, default=True)}
    pages |= {name: st.Page(page_of(draw), title=title, url_path=name, visibility="hidden" if name == "matrices" else "visible")
              for name, (title, draw) in PAGES.items()}
    current = st.navigation(list(pages.values()))
    state.set_pages(pages)
    # A callback asked for another page (a table's row opened in Overlays, a model to Compare): go
    # there before drawing anything, the sidebar included. Fragments' callbacks rerun only their
    # fragment, which follows the request itself.
    state.follow_page_request()
    with shown_errors(), panels.plotly_loading():
        chosen.append(sidebar())
        st.session_state[state.DATASET] = chosen[0]
        tag_panels.saved_views()
        try:
            current.run()
        finally:
            background.start_queued()
    state.publish_url()


if __name__ == "__main__":
    main()
