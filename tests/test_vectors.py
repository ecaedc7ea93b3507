"""The vendored conformance vectors are all there, unchanged, and parse: every file tests/vectors/README.md
lists (name, size, SHA-256), and no file it does not list. A vector that went missing fails here, and
in every test that reads it, rather than skipping them."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from tests.helpers import VECTORS

LISTED = re.findall(r"^\| `([\w.]+\.json)` \| (\d+) \| `([0-9a-f]{64})` \|", (VECTORS / "README.md").read_text(encoding="utf-8"), re.MULTILINE)


def test_the_readme_lists_every_vector_in_the_folder():
    assert len(LISTED) == 6
    assert sorted(name for name, _, _ in LISTED) == sorted(path.name for path in VECTORS.glob("*.json"))


@pytest.mark.parametrize("name, size, sha256", LISTED, ids=[name for name, _, _ in LISTED])
def test_each_listed_vector_is_there_unchanged_and_parses(name, size, sha256):
    path = VECTORS / name
    assert path.is_file(), f"tests/vectors/{name} is missing: it is part of the repository (tests/vectors/README.md)"
    data = path.read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), sha256)
    assert isinstance(json.loads(data), dict)
