"""The Scores page (app_pages/scores.py): whatever a visitor sees there, messages, captions and help
texts, names no folder of the server: neither the data root nor the temporary folder (where the
simulated FUNSD predictions are written)."""

from __future__ import annotations

import tempfile

import pytest

from tests.helpers import SHARED
from tests.studio.conftest import BESIDE_THE_REPOSITORY
from tests.studio.helpers import _shown_text, open_scores_page

BENCHMARKS = ("docile", "funsd", "omnidocbench")


def _everything_shown(at) -> str:
    """The page's texts and every widget's label and help text."""
    widgets = [element.proto for kind in ("text_input", "number_input", "radio", "selectbox", "checkbox", "button")
               for element in at.get(kind)]
    return _shown_text(at) + " ".join(f"{widget.label} {widget.help}" for widget in widgets)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_without_the_samples_the_page_says_so_without_the_data_root(benchmark, root):
    shown = _everything_shown(open_scores_page(benchmark))
    assert "sample is not at shared/data/" in shown and "in the server's data root" in shown
    assert str(root) not in shown and tempfile.gettempdir() not in shown


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_with_the_samples_the_page_names_no_server_folder(benchmark):
    if not (SHARED / "data" / benchmark).is_dir():
        pytest.skip(f"shared data not found at {SHARED / 'data' / benchmark}; skipping")
    at = open_scores_page(benchmark, timeout=300)
    shown = _everything_shown(at)
    assert at.metric and str(BESIDE_THE_REPOSITORY) not in shown and tempfile.gettempdir() not in shown
