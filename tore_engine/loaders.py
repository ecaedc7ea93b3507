"""Transitional: the readers moved to `tore_engine.formats` (one module a format) and the bounded
JSON reader to `tore_engine.inputs`. This module is removed once nothing imports it."""

from tore_engine.formats import detect_format, load_pair
from tore_engine.formats.native import from_document as from_native
from tore_engine.formats.native import read as load_layout
from tore_engine.inputs import read_json

__all__ = ["detect_format", "from_native", "load_layout", "load_pair", "read_json"]
