"""Formula normalisation (tore_engine.scorers.omnidocbench.formula_text): the official rules (issue 23 cause 2),
in linear time (issue 20, B14: a formula nested 60,000 braces deep took 73 s). The linear steps are
checked against the plain regular-expression loops they replace, written out here from their
definitions, on random short strings."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scorers.omnidocbench.helpers import score_one
from tore_engine.scorers.omnidocbench.formula_text import (
    _first_bracketed,
    _remove_lazy,
    normalize_formula,
    rewrite_braces,
    strip_command_group,
    strip_tags,
)

_TOKENS = ("=", "+", "-", "\\\\", "^", "_", "[", "]", "(", ")")
pieces = st.lists(st.sampled_from(["{", "}", "a", "1", "+", " ", "\\", "=", "x{", "}}", "{{", "\n", "[", "\\tag", "*"]),
                  max_size=30).map("".join)


def _rewrite_by_passes(text: str) -> str:
    """The rewriting as a loop of whole-string passes, as its rules are stated."""
    previous = None
    while text != previous:
        previous = text
        text = re.sub(r"\{([A-Za-z0-9.+\-]+)\}", r"\1", text).replace("{}", "")
        text = re.sub(r"}}+", "}", re.sub(r"\{\{+", "{", text))
        text = re.sub(r"\{([^{}]{1,160})\}",
                      lambda m: m.group(1) if any(t in m.group(1) for t in _TOKENS) else m.group(0), text)
    return text


def _strip_group_by_rescans(text: str, command: str) -> str:
    token = command + "{"
    while (start := text.find(token)) >= 0:
        index, depth = start + len(token), 1
        while index < len(text) and depth:
            depth += (text[index] == "{") - (text[index] == "}")
            index += 1
        if depth:
            return text[:start] + text[start + len(command):]
        text = text[:start] + text[index:]
    return text


@settings(max_examples=300, deadline=None)
@given(pieces)
def test_linear_steps_equal_the_plain_loops(text):
    assert rewrite_braces(text) == _rewrite_by_passes(text)
    assert strip_command_group(text, "\\tag") == _strip_group_by_rescans(text, "\\tag")
    assert _remove_lazy(text, "x{") == re.sub(r"x\{.*?\}", "", text)
    found = re.search(r"\\\[(.+?)(?<!\\)\\\]|\\\((.+?)(?<!\\)\\\)", text)
    assert _first_bracketed(text) == (None if found is None else (found.group(1) or found.group(2) or "").strip())


def test_official_rules(tmp_path):
    assert normalize_formula("\\mathbf{x}^{2} + \\left( a \\right)") == "x^2+(a)"
    assert normalize_formula("$$ a \\tag{3} $$") == "a"
    assert normalize_formula("\\begin{array}{ll} a & b \\\\ \\phantom{q} c \\end{array}") == "ab\\\\c"
    assert strip_tags("x \\tag*{ 1 } y \\tagline") == "x  y \\tagline"
    formula = {"category_type": "equation_isolated", "order": 1, "latex": "\\mathbf{x}^{2} + \\left( a \\right)"}
    assert score_one(tmp_path, [formula], "$$x^2+(a)$$")["formula_edit"] == 0.0


def test_a_formula_nested_60000_braces_deep_is_normalised_fast():
    started = time.perf_counter()
    assert normalize_formula("{" * 60000 + "x" + "}" * 60000) == "x"
    # the innermost {a} goes, the closing run collapses to one brace, then {aa} goes: no brace closes the rest
    assert normalize_formula("{a" * 30000 + "}" * 30000) == "{a" * 29998 + "aa"
    assert time.perf_counter() - started < 10  # minutes when one level is removed per pass
