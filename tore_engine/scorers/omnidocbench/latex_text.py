"""Text as the official OmniDocBench v1.6 evaluator compares it: inline LaTeX rendered to Unicode by
pylatexenc (behind the evaluator's guards against input it considers bad), circled characters
replaced by their content, then only word and CJK characters kept.

The evaluator renders each LaTeX string in a separate process with a 30 s time limit and falls back to
the source on a time-out. Here pylatexenc runs in this process with no time limit: every guard that
decides what is rendered is reproduced (length above 8,000 characters, unbalanced braces,
environments, `\\left`/`\\right` or math delimiters, plain prose), so a time-out is the only fallback
that can differ, and pylatexenc renders the inputs that pass the guards in well under a second.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from tore_engine.scorers.omnidocbench.scan import lazy_pairs

if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text

MAX_LATEX_LENGTH = 8000  # the evaluator's OMNIDOCBENCH_MAX_LATEX_INPUT_LEN
MAX_INLINE_LENGTH = 128  # longer inline formulas in text are left as they are

_CIRCLED = {chr(0x2460 + i): str(i + 1) for i in range(20)}
_CIRCLED.update({chr(0x24D0 + i): chr(ord("a") + i) for i in range(26)})
_CIRCLED.update({chr(0x24B6 + i): chr(ord("A") + i) for i in range(26)})
_TEXTCIRCLED = re.compile(r"\\textcircled\s*\{\s*([^{}]+?)\s*\}")
_ESCAPED_PUNCTUATION = re.compile(r"\\([\\_&%^])")
_NOT_WORD_OR_CJK = re.compile(r"[^\w\u4e00-\u9fff]")
_ESCAPED_CONTROLS = ("\\t", "\\n", "\t", "\n", "/t", "/n")
_COMPLEX_INLINE = (r"\begin{", r"\end{", r"\array", r"\matrix", r"\tabular", r"\cases", r"\align", "\\\\", "&")

_LATEX_SIGNAL = re.compile(r"\\[A-Za-z]+|[_^{}$]|\\[\[\]()]]|&|%|#")
_WORD = re.compile(r"[A-Za-z]{3,}")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_ENVIRONMENT = re.compile(r"\\(begin|end)\{([^{}]+)\}")
_PROSE_BLOCKERS = ("\\frac", "\\sqrt", "\\left", "\\right", "\\begin", "\\end", "\\sum", "\\int", "\\alpha", "\\beta")


def replace_circled(text: str) -> str:
    """Circled digits and letters and `\\textcircled{x}` as their plain content."""
    text = _TEXTCIRCLED.sub(lambda match: match.group(1).strip(), text)
    return "".join(_CIRCLED.get(char, char) for char in text)


def clean_text(text: str) -> str:
    """Only word and CJK characters (the evaluator's `clean_string`)."""
    text = replace_circled(text)
    for control in _ESCAPED_CONTROLS:
        text = text.replace(control, "")
    return _NOT_WORD_OR_CJK.sub("", text)


def normalize_text(text: str) -> str:
    """The evaluator's `normalized_text`: inline LaTeX rendered, then `clean_text`."""
    return clean_text(inline_latex_to_unicode(text))


def inline_latex_to_unicode(text: str) -> str:
    """Each inline `$...$` or `\\(...\\)` whose content has a backslash, `^` or `_` rendered to Unicode
    (unless it is long or complex); other inline formulas are kept with their delimiters."""
    text = replace_circled(text)
    replacements = []
    for start, end, content in inline_formulas(text):
        content = _ESCAPED_PUNCTUATION.sub("", content)
        if not any(char in content for char in "\\^_"):
            continue
        if content.endswith("\\"):
            content += " "
        if _skip_inline(content):
            continue
        replacements.append((start, end, latex_to_text(content, "formula").strip()))
    pieces, cursor = [], 0
    for start, end, rendered in replacements:
        pieces += [text[cursor:start], rendered]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def inline_formulas(text: str) -> list[tuple[int, int, str]]:
    """The evaluator's inline formulas, `$...$` or `\\(...\\)` on one line: start, end, content."""
    return [(start, end, text[start + (1 if text[start] == "$" else 2):end - (1 if text[start] == "$" else 2)])
            for start, end in lazy_pairs(text, (("$", "$"), ("\\(", "\\)")), dotall=False)]


def _skip_inline(latex: str) -> bool:
    latex = latex.strip()
    if not latex:
        return False
    return len(latex) > MAX_INLINE_LENGTH or any(token in latex for token in _COMPLEX_INLINE) or latex.count("{") != latex.count("}")


# --- LaTeX to text (the evaluator's safe_latex_to_text) ------------------------------------------

def latex_to_text(latex: str, kind: str) -> str:
    """pylatexenc's rendering of `latex`, or `latex` itself when the evaluator would not render it
    (`kind` is "formula", "text" or "table": the delimiter checks apply to formulas)."""
    stripped = latex.strip()
    if not stripped:
        return latex
    if not any(char in stripped for char in "\\{}$"):
        return stripped
    if _looks_like_prose(stripped) or _looks_weak(stripped, kind) or is_bad_latex(stripped, kind):
        return latex
    rendered = _render(stripped)
    return latex if rendered is None else rendered


@lru_cache(maxsize=1)
def _renderer() -> LatexNodes2Text:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text()


def _render(latex: str) -> str | None:
    import logging

    logger = logging.getLogger("pylatexenc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return _renderer().latex_to_text(latex)
    except Exception:  # noqa: BLE001 - the evaluator falls back to the source on any pylatexenc error
        return None
    finally:
        logger.setLevel(level)


def _looks_like_prose(line: str) -> bool:
    stripped = line.strip()
    if len(stripped) < 32 or len(_LATEX_SIGNAL.findall(stripped)) > 2:
        return False
    if any(char in stripped for char in "{}$^_") or any(token in stripped for token in _PROSE_BLOCKERS):
        return False
    return len(_WORD.findall(stripped)) >= 6 and stripped.count(" ") >= 5


def _looks_weak(line: str, kind: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped in ("\\", "\\\\"):
        return True
    commands = len(_COMMAND.findall(stripped))
    words = len(_WORD.findall(stripped))
    signals = sum(char in "{}$^_=&%#" for char in stripped)
    if stripped.endswith("\\") and not stripped.endswith("\\\\") and commands == 0:
        return True
    if "\\" in stripped and commands == 0 and signals == 0:
        return True
    if kind == "formula" and words >= 2 and commands == 0 and signals <= 1:
        return True
    return kind == "formula" and words >= 4 and commands <= 1 and signals <= 2


def is_bad_latex(line: str, kind: str) -> bool:
    """The evaluator's `likely_bad_latex`: too long, unbalanced braces or environments, and for
    formulas unbalanced `\\left`/`\\right` or math delimiters."""
    stripped = line.strip()
    if not stripped:
        return False
    if len(stripped) > MAX_LATEX_LENGTH or not _braces_balanced(stripped) or not _environments_balanced(stripped):
        return True
    if kind != "formula":
        return False
    if len(re.findall(r"\\left\b", stripped)) != len(re.findall(r"\\right\b", stripped)):
        return True
    return (len(re.findall(r"\\\(", stripped)) != len(re.findall(r"\\\)", stripped))
            or len(re.findall(r"\\\[", stripped)) != len(re.findall(r"\\\]", stripped))
            or len(re.findall(r"(?<!\\)\$", stripped)) % 2 != 0)


def _braces_balanced(line: str) -> bool:
    depth, index = 0, 0
    while index < len(line):
        char = line[index]
        if char == "\\" and index + 1 < len(line) and line[index + 1] in "{}[]()":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return False
        index += 1
    return depth == 0


def _environments_balanced(line: str) -> bool:
    stack: list[str] = []
    for match in _ENVIRONMENT.finditer(line):
        if match.group(1) == "begin":
            stack.append(match.group(2))
        elif not stack or stack.pop() != match.group(2):
            return False
    return not stack
