"""What every `tore score` command does with its scorer's result: the warnings on stderr, then
exactly one JSON object (`--json`) or the human summary on stdout. A warning names files and page
ids from the input: each is one line with its control characters escaped (`terminal_text`), and the
JSON is ASCII, so that no name reaches the terminal raw (a summary escapes its own names)."""

from __future__ import annotations

import json
import sys

from tore_engine.core.text_safety import terminal_text
from tore_engine.scorers.common import ScoreResult


def print_result(result: ScoreResult, as_json: bool) -> int:
    """Print `result` as `tore score` does; the exit code."""
    for warning in result.warnings:
        print(f"tore: {terminal_text(warning)}", file=sys.stderr)
    print(json.dumps(result.to_json()) if as_json else result.summary())
    return 0
