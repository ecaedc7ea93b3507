"""Text normalisation (tore_engine.scorers.omnidocbench.latex_text), issue 23 cause 2: circled characters,
inline LaTeX rendered behind the official guards, then only word and CJK characters."""

from __future__ import annotations

from tests.scorers.omnidocbench.helpers import score_one
from tore_engine.scorers.omnidocbench.latex_text import (
    is_bad_latex,
    latex_to_text,
    normalize_text,
)


def test_circled_digits_and_letters_are_their_content(tmp_path):
    assert normalize_text("① first ⓐ \\textcircled{ 3 }") == "1firsta3"
    scores = score_one(tmp_path, [{"category_type": "text_block", "order": 1, "text": "① first step"}], "1 first step")
    assert scores["text_edit"] == 0.0


def test_inline_latex_is_rendered_and_other_characters_dropped():
    assert normalize_text("Area $\\alpha^2$ (cm), 5%") == "Areaα2cm5"
    assert normalize_text("$x$ stays") == "xstays"  # no backslash, ^ or _: only its dollars go, as punctuation


def test_guards_keep_bad_or_long_latex_as_it_is():
    assert is_bad_latex("\\frac{a}{b", "formula") and latex_to_text("\\frac{a}{b", "formula") == "\\frac{a}{b"
    long = "\\alpha " * 1200  # 8,400 characters: over the evaluator's 8,000
    assert latex_to_text(long, "formula") == long
    assert latex_to_text("\\alpha", "formula") == "α"
