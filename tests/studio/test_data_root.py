"""Server paths stay inside the data root and name files or folders, never FIFOs or devices."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import DEMO
from tests.studio.helpers import _app, _no_exception
from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE, server_path


def test_paths_inside_the_root_resolve_and_escapes_are_refused(tmp_path, monkeypatch):
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (root / "data" / "link").symlink_to(tmp_path / "secret")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(root))
    assert server_path("data") == root / "data"
    assert server_path(str(root / "data")) == root / "data"
    for escape in ("../secret", "data/../../secret", str(tmp_path / "secret"), "data/link", "/etc/passwd"):
        with pytest.raises(InputError, match=r"is outside the folder it must stay in \(the data root; set TORE_STUDIO_DATA_ROOT"):
            server_path(escape)


def test_a_fifo_or_device_in_the_data_root_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "pipe.json")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    with pytest.raises(InputError, match="^file pipe.json: is not a regular file or a folder"):
        server_path("pipe.json")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, "/dev")
    with pytest.raises(InputError, match="is not a regular file or a folder"):
        server_path("null")
    assert server_path("missing.json") == Path("/dev/missing.json")  # the reader says it is missing


def test_a_fifo_typed_as_a_path_is_refused_without_hanging(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "model.json").write_bytes((DEMO / "model_a.json").read_bytes())
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(tmp_path))
    at = _app(timeout=20, src="path", ref="pipe.json", a="model.json")  # a read of the FIFO would block past the timeout
    _no_exception(at)
    assert [error.value for error in at.sidebar.error] == [
        plain_for_markdown("file pipe.json: is not a regular file or a folder (a device, pipe or socket); it is not opened")
    ]
