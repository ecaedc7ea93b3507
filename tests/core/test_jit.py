"""The compiled kernels' cache folder (tore_engine.core.jit): per user, unless NUMBA_CACHE_DIR says otherwise,
and the temporary folder when the home folder is unusable."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tore_engine.core import jit


@pytest.fixture
def numba_config(monkeypatch):
    """`use_cache_folder` also points an already imported numba at the folder: restore that."""
    if "numba" in sys.modules:
        monkeypatch.setattr(sys.modules["numba"].config, "CACHE_DIR", sys.modules["numba"].config.CACHE_DIR)


def test_the_cache_folder_is_per_user_unless_numba_cache_dir_is_set(monkeypatch, tmp_path, numba_config):
    monkeypatch.delenv(jit.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit.use_cache_folder() == tmp_path / "xdg" / "tore-studio" / "numba" == Path(os.environ[jit.CACHE_ENV])
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jit.default_cache_folder() == tmp_path / "home" / ".cache" / "tore-studio" / "numba"
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "mine"))
    assert jit.use_cache_folder() == tmp_path / "mine"


def test_an_unusable_home_falls_back_to_the_temporary_folder(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.write_text("a file, not a folder: nothing can be made in it, even by root")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(jit.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    assert jit.default_cache_folder() == tmp_path / "tmp" / f"tore-studio-{os.getuid()}" / "numba"
