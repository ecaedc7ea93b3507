"""What every `tore score` command does with its scorer's result: the warnings on stderr, then
exactly one JSON object (`--json`) or the human summary on stdout."""

from __future__ import annotations

import json
import sys

from tore_engine.scores import ScoreResult


def print_result(result: ScoreResult, as_json: bool) -> int:
    """Print `result` as `tore score` does; the exit code."""
    for warning in result.warnings:
        print(f"tore: {warning}", file=sys.stderr)
    print(json.dumps(result.to_json(), ensure_ascii=False) if as_json else result.summary())
    return 0
