"""Server paths stay inside the data root."""

from __future__ import annotations

import pytest

from tore_engine.studio.data_root import DATA_ROOT_VARIABLE, server_path
from tore_engine.errors import InputError


def test_paths_inside_the_root_resolve_and_escapes_are_refused(tmp_path, monkeypatch):
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (root / "data" / "link").symlink_to(tmp_path / "secret")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, str(root))
    assert server_path("data") == root / "data"
    assert server_path(str(root / "data")) == root / "data"
    for escape in ("../secret", "data/../../secret", str(tmp_path / "secret"), "data/link", "/etc/passwd"):
        with pytest.raises(InputError, match="outside the data root"):
            server_path(escape)
