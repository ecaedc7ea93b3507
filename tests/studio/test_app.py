"""The app's entry point (tore_engine.studio.app): its error guard shows an unexpected error as one short
sentence, never a traceback or what the server holds."""

from __future__ import annotations

import pytest

from tests.studio.helpers import _app, _no_exception, _shown_text
from tore_engine.plots import heatmaps
from tore_engine.studio import evaluations


@pytest.mark.parametrize("where", ["page", "fragment"])
def test_an_unexpected_error_is_a_short_message_without_a_traceback(monkeypatch, where):
    def broken(*_args, **_kwargs):
        raise RuntimeError("/very/secret/server/path exploded")

    store = evaluations.EvaluationStore()
    monkeypatch.setattr(evaluations, "evaluation_store", lambda: store)
    if where == "page":  # loading fails: the page's own guard
        monkeypatch.setattr(evaluations, "evaluate_pair", broken)
    else:  # drawing the matrix fails: the guard of the matrix fragment
        monkeypatch.setattr(heatmaps, "matrix_heatmap", broken)
    at = _app()
    _no_exception(at)
    assert [error.value for error in at.error] == [
        "This view stopped on an unexpected error (RuntimeError); the server's log has the details. Other pages still work."
    ]
    assert "secret" not in _shown_text(at)
