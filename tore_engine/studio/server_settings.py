"""The server operator's limits, read from the environment: each a whole number of megabytes."""

from __future__ import annotations

import os

from tore_engine.core.errors import InputError


def megabytes(variable: str, default: int) -> int:
    """`$variable` megabytes in bytes (`default` when it is unset or blank); anything else than a
    whole number is an error naming the variable, for the operator."""
    text = os.environ.get(variable, "").strip() or str(default)
    if not text.isdecimal():
        raise InputError(f"the server's {variable} is not a whole number of megabytes; its operator can fix it")
    return int(text) * 2**20
