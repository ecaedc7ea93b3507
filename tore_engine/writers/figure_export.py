"""A Plotly figure as a PNG, SVG or PDF file, drawn offline.

kaleido (>= 1.0, the `app` extra) renders the figure in a headless Chrome or Chromium that it
drives through choreographer. The browser is the system's (Debian's `chromium` package, or
`$BROWSER_PATH`): TORE Studio never downloads one (`kaleido.get_chrome_sync` would). Nothing is
fetched from the network either: plotly.js comes from the installed plotly package and MathJax,
which kaleido would load from a CDN, is switched off.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command

if TYPE_CHECKING:
    import plotly.graph_objects as go

IMAGE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
BROWSER_VARIABLE = "BROWSER_PATH"  # choreographer's own override
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
KALEIDO_MISSING = f"exporting a figure needs kaleido >= 1.0: install the 'app' extra ({install_command('app')})"
NO_BROWSER = (
    "exporting a figure needs Chrome or Chromium, which kaleido drives: install it (Debian: apt-get install chromium) "
    f"or set {BROWSER_VARIABLE} to its executable; TORE Studio does not download a browser"
)


def browser_path() -> str:
    """The browser kaleido is to drive: `$BROWSER_PATH` when set, else the first on PATH."""
    configured = os.environ.get(BROWSER_VARIABLE)
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise InputError(f"{BROWSER_VARIABLE}={configured!r} is not an executable file; {NO_BROWSER}")
        return configured
    for name in BROWSER_NAMES:
        if found := shutil.which(name):
            return found
    raise InputError(NO_BROWSER)


def _image_format(path: Path) -> str:
    image_format = IMAGE_FORMATS.get(path.suffix.lower())
    if image_format is None:
        raise InputError(f"cannot export a figure as {path.name!r}: name it .png, .svg or .pdf")
    return image_format


def figure_bytes(fig: go.Figure, image_format: str, *, scale: float = 1.0) -> bytes:
    """The figure drawn as `image_format` ("png", "svg" or "pdf") at its layout's size times `scale`."""
    try:
        import kaleido
        from choreographer.errors import ChromeNotFoundError
    except ImportError:
        raise InputError(KALEIDO_MISSING) from None
    if not hasattr(kaleido, "calc_fig_sync"):  # kaleido 0.x ships its own browser build instead
        raise InputError(KALEIDO_MISSING)
    options = {"format": image_format, "width": fig.layout.width, "height": fig.layout.height, "scale": scale}
    try:
        return kaleido.calc_fig_sync(fig, opts=options, kopts={"path": browser_path(), "mathjax": False})
    except ChromeNotFoundError:
        raise InputError(NO_BROWSER) from None


def write_figure(fig: go.Figure, path: Path, *, scale: float = 1.0) -> None:
    """Write the figure to `path`, in the format its suffix names (.png, .svg, .pdf)."""
    image_format = _image_format(path)
    path.write_bytes(figure_bytes(fig, image_format, scale=scale))
