"""Argument types that refuse what a number option cannot mean, in the parser, with a clear
message: NaN, infinities, values out of range (`--iou-threshold nan`, `--workers 0`)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

SHOWN_CHARACTERS = 40  # of a rejected value, in the message


def _shown(text: str) -> str:
    return repr(text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "...")


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, got {_shown(text)}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {_shown(text)}")
    return value


def _bounded(kind: type, low: float | None, high: float | None) -> Callable[[str], float | int]:
    def parse(text: str) -> float | int:
        value = _number(text, kind)
        if (low is not None and value < low) or (high is not None and value > high):
            span = f"from {low} to {high}" if low is not None and high is not None else f"at least {low}" if low is not None else f"at most {high}"
            raise argparse.ArgumentTypeError(f"must be {span}, got {_shown(text)}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its own messages
    return parse


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An `int` option within [low, high]."""
    return _bounded(int, low, high)  # type: ignore[return-value]


def number(low: float | None = None, high: float | None = None) -> Callable[[str], float]:
    """A finite `float` option within [low, high]."""
    return _bounded(float, low, high)
