"""The linear scans (tore_engine.scorers.omnidocbench.scan) give what the official evaluator's lazy regular
expressions give, on random short texts (issue 20, B14: the expressions are quadratic on hostile
pages, the scans are not)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tore_engine.scorers.omnidocbench.scan import blank, image_spans, lazy_pairs, unwrap_command, unwrap_pairs

DISPLAY = r"\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)"
PAIRS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))
COMMANDS = [  # (command, star, spaced, space before the brace, the evaluator's pattern, flags)
    ("\\title", False, False, False, r"\\title\{(.*?)\}", 0),
    ("\\title", False, True, True, r"\\title\s*\{\s*(.*?)\s*\}", re.DOTALL),
    ("\\text", False, True, True, r"\\text\s*\{\s*(.*?)\s*\}", re.DOTALL),
    ("\\section", True, False, False, r"\\section\*?\{(.*?)\}", 0),
    ("\\section", True, True, False, r"\\section\*?\{\s*(.*?)\s*\}", re.DOTALL),
]
texts = st.lists(st.sampled_from(["$", "$$", "\\[", "\\]", "\\(", "\\)", "x", "\n", " ", "\t", "![", "](", ")", "{", "}",
                                  "*", "\\text", "\\title", "\\section"]), max_size=20).map("".join)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_scans_equal_the_regular_expressions(text):
    for dotall in (True, False):
        assert lazy_pairs(text, PAIRS, dotall) == [m.span() for m in re.finditer(DISPLAY, text, re.DOTALL if dotall else 0)]
    assert image_spans(text) == [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"!\[(.*?)\]\((.*?)\)", text)]
    for command, star, spaced, before, pattern, flags in COMMANDS:
        assert unwrap_command(text, command, star, spaced, before) == re.sub(pattern, r"\1", text, flags=flags)
    assert unwrap_pairs(text, "\\(", "\\)", padding=" ") == re.sub(r"\\\((.*?)\\\)", lambda m: f" {m.group(1)} ", text, flags=re.DOTALL)


def test_blank_replaces_spans_by_spaces():
    assert blank("abcdef", [(4, 5), (1, 3), (2, 4)]) == "a    f"
