"""Opening the Scores page in AppTest, shared by the score panels' tests."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "tore_engine" / "studio" / "app.py")


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def open_scores_page(benchmark: str, timeout: int = 120, **query: str) -> AppTest:
    """The Scores page with `benchmark` chosen, opened first as a deep link opens it."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["bench"] = benchmark
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page("app_pages/scores.py").run()
    assert_no_exception(at)
    return at
