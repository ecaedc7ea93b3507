"""`tore app` and the checkout's `streamlit run app.py` serve the same app with the same settings."""

from __future__ import annotations

import tomllib

from streamlit.testing.v1 import AppTest

from tests.helpers import REPOSITORY
from tore_engine.cli.app import APP_SCRIPT, STREAMLIT_SETTINGS


def _flattened(table: dict, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            flat.update(_flattened(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return flat


def test_the_checkouts_streamlit_settings_are_the_ones_tore_app_passes():
    with (REPOSITORY / ".streamlit" / "config.toml").open("rb") as handle:
        assert _flattened(tomllib.load(handle)) == STREAMLIT_SETTINGS


def _shown(script) -> tuple[list[str], list[str], list[str]]:
    at = AppTest.from_file(str(script), default_timeout=120).run()
    assert not at.exception, [error.value for error in at.exception]
    return [title.value for title in at.title], [header.value for header in at.header], [info.value for info in at.info]


def test_app_py_at_the_top_serves_the_packaged_app():
    launcher = REPOSITORY / "app.py"
    assert launcher.is_file()
    shown = _shown(launcher)
    assert shown == _shown(APP_SCRIPT) and any(shown), "the demo's Matrices page shows something"
