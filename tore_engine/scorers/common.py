"""What the benchmark scorers share: the shape of a scorer's result and how an undefined number
is written."""

from __future__ import annotations

from typing import Any, Protocol

MISSING = "n/a"  # how an undefined number (JSON null) is written: never as 0 or 1


def format_score(value: float | None, digits: int = 4) -> str:
    """A score for a text summary: fixed decimals, or `n/a` when undefined."""
    return MISSING if value is None else f"{value:.{digits}f}"


def headline_item(key: str, label: str, value: float | None, convention: str) -> dict[str, Any]:
    """One headline number with the convention it follows (the shape every score panel reads)."""
    return {"key": key, "label": label, "convention": convention, "value": value}


class ScoreResult(Protocol):
    """What `score_docile`, `score_funsd`, `score_ec_funsd` and `score_omnidocbench` return."""

    def to_json(self) -> dict[str, Any]:
        """The `tore score ... --json` object (its shape is fixed by the specs)."""

    def headline(self) -> list[dict[str, Any]]:
        """The few headline numbers, as `headline_item`s."""

    def summary(self) -> str:
        """The human summary `tore score` prints without `--json`."""

    def panel(self) -> dict[str, Any]:
        """Everything the app's score panel draws, as plain JSON."""

    @property
    def warnings(self) -> list[str]:
        """What the scorer went on with but must not hide (printed on stderr)."""
