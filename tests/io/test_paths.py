"""The path policy: a path named by an input stays inside its folder, and a refusal tells nothing."""

from __future__ import annotations

import pytest

from tore_engine.core.errors import InputError
from tore_engine.io.paths import confine


def test_confine_refuses_every_way_out_the_same(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(b"x")
    (root / "link").symlink_to(tmp_path / "secret.png")
    (root / "loop").symlink_to(root / "loop")
    assert confine("sub/../sub", root) == (root / "sub").resolve()
    messages = set()
    for name in ("../secret.png", str(tmp_path / "secret.png"), "link", "../nonexistent.png", "/etc/passwd"):
        with pytest.raises(InputError) as caught:
            confine(name, root, what="page image")
        messages.add(caught.value.problem.replace(repr(name), "NAME"))
    assert messages == {"page image NAME is outside the folder it must stay in"}
    with pytest.raises(InputError, match="NUL byte"):
        confine("a\x00b", root)
