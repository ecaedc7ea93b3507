"""Figure export (`tore_engine.writers.figure_export`): a matrix heatmap as a PNG of the figure's size, drawn
by kaleido in the system Chromium without network access (skips when either is missing); and the
errors that name what to install."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from tests import report_data
from tore_engine.core.errors import InputError
from tore_engine.writers.figure_export import (
    BROWSER_VARIABLE,
    KALEIDO_MISSING,
    browser_path,
    write_figure,
)

CHROMIUM = Path("/usr/bin/chromium")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which a PNG must start with."""
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def heatmap():
    figures = pytest.importorskip("tore_engine.plots.heatmaps", reason="plotly is not installed (the app extra)")
    return figures.matrix_heatmap(report_data.paper().matrices.full, "recall", outline_diagonal=True, title="recall")


@pytest.fixture(scope="module")
def exporter():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium); skipping figure export")
    kaleido = pytest.importorskip("kaleido", reason="kaleido is not installed (the app extra)")
    if not hasattr(kaleido, "calc_fig_sync"):
        pytest.skip("kaleido < 1.0 is installed; figure export needs kaleido >= 1.0")


@pytest.mark.parametrize("scale", [1, 2])
def test_png_of_the_figures_size(exporter, heatmap, tmp_path, monkeypatch, scale):
    monkeypatch.setenv(BROWSER_VARIABLE, str(CHROMIUM))
    write_figure(heatmap, tmp_path / "recall.png", scale=scale)
    assert _png_size((tmp_path / "recall.png").read_bytes()) == (heatmap.layout.width * scale, heatmap.layout.height * scale)


def test_svg_names_the_classes(exporter, heatmap, tmp_path):
    write_figure(heatmap, tmp_path / "recall.svg")
    text = (tmp_path / "recall.svg").read_text(encoding="utf-8")
    assert text.startswith("<svg") and all(f">{name}<" in text for name in ("A", "B", "C", "D"))


def test_unknown_suffix_is_refused_before_drawing(heatmap, tmp_path):
    with pytest.raises(InputError, match=r"\.png, \.svg or \.pdf"):
        write_figure(heatmap, tmp_path / "recall.gif")


def test_browser_path_names_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv(BROWSER_VARIABLE, str(tmp_path / "no-such-browser"))
    with pytest.raises(InputError, match="apt-get install chromium"):
        browser_path()
    monkeypatch.delenv(BROWSER_VARIABLE)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InputError, match="does not download a browser"):
        browser_path()


def test_without_kaleido_the_error_names_the_extra(heatmap, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "kaleido", None)
    with pytest.raises(InputError) as raised:
        write_figure(heatmap, tmp_path / "recall.png")
    assert str(raised.value) == KALEIDO_MISSING and "'app' extra" in KALEIDO_MISSING
