"""`--label-map FILE`: a JSON object that renames or merges classes on both sides before evaluation."""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.core.taxonomy import BACKGROUND
from tore_engine.io.json import read_json


def read_label_map(path: str | Path) -> dict[str, str]:
    """A `{"old label": "new label"}` JSON object (many-to-one allowed)."""
    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in data.items()):
        raise InputError('a label map must be a JSON object of strings {"old label": "new label"}', file=str(path))
    if BACKGROUND in data.values():
        raise InputError("a label map cannot map a class to 'Background'", file=str(path))
    return data
