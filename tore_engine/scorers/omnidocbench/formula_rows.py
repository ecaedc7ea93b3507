"""Multi-line display formulas split into their rows, as the official OmniDocBench v1.6 evaluator
splits them before matching: a formula whose body is an `array` (one or two `l`/`c`/`r` columns),
`aligned`, `align`, `gathered`, `split`, `multline`, `eqnarray` or (with logic arrows) `cases`
environment, or a bare `\\\\`-separated formula, becomes one formula per row, unless its shape says
the rows belong together (a brace around aligned rows with their own left-hand sides, explanatory
text, nested environments). Ground-truth rows get orders `order + k/1000`; predicted rows get
positions inside the formula's span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tore_engine.scorers.omnidocbench.formula_text import strip_delimiters, strip_tags

ENVIRONMENTS = ("array", "aligned", "align", "align*", "alignedat", "alignedat*", "split", "gather", "gather*",
                "gathered", "multline", "multline*", "flalign", "flalign*", "eqnarray", "eqnarray*", "cases")
_ALIGNED = {"aligned", "align", "align*", "alignedat", "alignedat*"}
ENVIRONMENT_START = re.compile(  # used with match(), so anchored where it is applied
    r"\\begin\{(?P<env>" + "|".join(re.escape(name) for name in ENVIRONMENTS) + r")\}\s*(?P<extra>(?:\{[^{}]*\}\s*)*)", re.S)
_TRAILING_SPACING = re.compile(r"(?:\\qquad|\\quad|\\,|\\;|\\!|\\>|\\:|~)+")
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")
_TAG = re.compile(r"\\tag\*?\s*\{[^{}]*\}")
_LOGIC = re.compile(
    r"\\(?:Rightarrow|Leftrightarrow|Longrightarrow|Longleftrightarrow|longrightarrow|longleftrightarrow|implies|"
    r"therefore|because|uparrow|downarrow|Updownarrow|forall|exists)\b|单调|否定")
_NESTED = re.compile(
    r"\\begin\{(?:array|aligned|align\*?|alignedat\*?|split|gathered?|multline\*?|flalign\*?|eqnarray\*?|cases)\}")
_CASE_LEAD = re.compile(
    r"^(?:\(?\d+\)?|\\(?:Rightarrow|Leftrightarrow|Longrightarrow|Longleftrightarrow|implies|therefore|uparrow|"
    r"downarrow|Updownarrow|leftarrow|rightarrow))")
_EXPLANATION = re.compile(r"\\(?:text|mathrm|operatorname)\s*\{")


@dataclass(frozen=True)
class Rows:
    """A formula's rows: the body they come from, where it starts in the formula, the rows' raw and
    cleaned text, and where a text after the environment ends (-1 when none)."""

    body: str
    body_start: int
    raw: list[str]
    content: list[str]
    suffix_end: int = -1


def split_rows(body: str) -> list[str]:
    """The body's rows at top-level `\\\\` (outside braces and environments), each stripped; an
    optional `*` and `[...]` after a separator are dropped."""
    rows: list[str] = []
    current: list[str] = []
    braces = environments = index = 0
    while index < len(body):
        if body.startswith("\\begin{", index) or body.startswith("\\end{", index):
            closing = body.find("}", index + (7 if body.startswith("\\begin{", index) else 5))
            if closing != -1:
                current.append(body[index:closing + 1])
                environments = environments + 1 if body.startswith("\\begin{", index) else max(0, environments - 1)
                index = closing + 1
                continue
        if body.startswith("\\\\", index) and braces == 0 and environments == 0:
            _keep(rows, current)
            current = []
            index = _after_separator(body, index + 2)
            continue
        char = body[index]
        current.append(char)
        if char in "{}" and not _escaped(body, index):
            braces = braces + 1 if char == "{" else max(0, braces - 1)
        index += 1
    _keep(rows, current)
    return rows


def _keep(rows: list[str], current: list[str]) -> None:
    line = "".join(current).strip()
    if line:
        rows.append(line)


def _after_separator(body: str, index: int) -> int:
    while index < len(body) and body[index].isspace():
        index += 1
    if index < len(body) and body[index] == "*":
        index += 1
    if index < len(body) and body[index] == "[":
        closing = body.find("]", index + 1)
        if closing != -1:
            index = closing + 1
    return index


def _escaped(text: str, index: int) -> bool:
    count, cursor = 0, index - 1
    while cursor >= 0 and text[cursor] == "\\":
        count += 1
        cursor -= 1
    return count % 2 == 1


def matching_end(text: str, environment: str, start: int) -> int:
    """Where the `\\end{environment}` closing the one opened before `start` begins, or -1."""
    begin, end = f"\\begin{{{environment}}}", f"\\end{{{environment}}}"
    depth, index = 1, start
    while index < len(text):
        next_begin, next_end = text.find(begin, index), text.find(end, index)
        if next_end < 0:
            return -1
        if 0 <= next_begin < next_end:
            depth += 1
            index = next_begin + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return next_end
        index = next_end + len(end)
    return -1


def _array_spec(spec: str) -> str:
    spec = re.sub(r"\s+|\|", "", spec)
    return re.sub(r"!{[^}]*}", "", re.sub(r"@{[^}]*}", "", spec))


def _splittable_array(spec: str) -> bool:
    spec = _array_spec(spec)
    if not spec or any(char not in "lcr" for char in spec):
        return False
    return len(spec) == 1 or (len(spec) == 2 and ("l" in spec or "r" in spec))


def _cells(line: str) -> list[str]:
    """A row's cells at top-level `&` (outside environments, not escaped)."""
    cells, current, depth, index = [], [], 0, 0
    while index < len(line):
        if line.startswith("\\begin{", index) or line.startswith("\\end{", index):
            opening = line.startswith("\\begin{", index)
            closing = line.find("}", index + (7 if opening else 5))
            if closing != -1:
                current.append(line[index:closing + 1])
                depth = depth + 1 if opening else max(0, depth - 1)
                index = closing + 1
                continue
        if line[index] == "&" and depth == 0 and not _escaped(line, index):
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(line[index])
        index += 1
    cells.append("".join(current).strip())
    return cells


def _lead(line: str) -> str:
    stripped = line.lstrip()
    while stripped.startswith("&"):
        stripped = stripped[1:].lstrip()
    return stripped


def _has_own_lhs(line: str) -> bool:
    cells = _cells(line)
    return len(cells) > 1 and bool(strip_tags(cells[0]).strip())


def _case_like(line: str) -> bool:
    lead = strip_tags(_lead(line)).strip()
    return bool(lead) and bool(_CASE_LEAD.match(lead))


def _explains(line: str) -> bool:
    return bool(_EXPLANATION.search(_lead(line)))


def _aligned_cells(line: str) -> bool:
    return len(_cells(line)) > 1


def _logic(line: str) -> bool:
    return bool(_LOGIC.search(_lead(line)))


def _split_cases(body: str, rows: list[str]) -> bool:
    if len(rows) <= 1 or any(_aligned_cells(row) for row in rows) or not _LOGIC.search(body):
        return False
    if _NESTED.search(body) or any(_logic(row) for row in rows[1:]) or any(_explains(row) for row in rows[1:]):
        return True
    return _logic(rows[0])


def _keep_aligned(body: str, rows: list[str], braced: bool) -> bool:
    nested = bool(_NESTED.search(body))
    if nested and any(_case_like(row) for row in rows[1:]):
        return True
    if not braced:
        return False
    if nested or sum(1 for row in rows if _has_own_lhs(row)) >= 2:
        return True
    return any(_explains(row) for row in rows[1:]) or any(_case_like(row) for row in rows[1:])


def _keep_array(spec: str, body: str, rows: list[str], braced: bool) -> bool:
    spec = _array_spec(spec)
    if not spec:
        return False
    if _NESTED.search(body) and any(_case_like(row) for row in rows[1:]):
        return True
    return braced and set(spec) <= {"l"} and len(rows) > 1


def _strip_end_labels(trailing: str) -> str:
    working = _LABEL.sub("", trailing)
    while True:
        stripped = working.rstrip()
        if not stripped:
            return ""
        tag = _TAG.search(stripped)
        if tag and tag.end() == len(stripped):
            working = _strip_trailing_spacing(stripped[:tag.start()].rstrip())
            continue
        if stripped[-1] not in ")]":
            return stripped
        start = stripped.rfind("(" if stripped[-1] == ")" else "[")
        if start < 0:
            return stripped
        label, prefix = stripped[start + 1:-1].strip(), stripped[:start]
        if not _end_label(label, prefix):
            return stripped
        working = _strip_trailing_spacing(prefix)


def _strip_trailing_spacing(text: str) -> str:
    working = text.rstrip()
    while True:
        updated = re.sub(r"(?:\\qquad|\\quad|\\,|\\;|\\!|\\>|\\:|~)\s*$", "", working).rstrip()
        if updated == working:
            return working
        working = updated


def _end_label(label: str, prefix: str) -> bool:
    label = label.strip()
    if not label:
        return False
    if prefix and not (prefix[-1].isspace() or _TRAILING_SPACING.search(prefix[-10:])):
        return False
    if re.fullmatch(r"[a-z]{1,3}", label):
        return False
    return bool(re.fullmatch(r"[A-Za-z0-9.\-#]+", label) or re.fullmatch(r"(?:\\[A-Za-z#]+)+", label))


def _environment_rows(formula: str) -> Rows | None:
    """The rows of a formula that is one multi-line environment (possibly inside `\\left\\{ ... \\right.`)."""
    stripped = strip_delimiters(formula).strip()
    if not stripped:
        return None
    prefix = re.match(r"^(?P<prefix>(?:\\left\s*\\\{|\\left\.))\s*", stripped)
    candidate = stripped[prefix.end():].lstrip() if prefix else stripped
    suffix = re.search(r"(?P<suffix>\s*\\right(?:\.|\\\}))\s*$", candidate)
    core = candidate[:suffix.start()].rstrip() if suffix else candidate
    start = ENVIRONMENT_START.match(core)
    if not start:
        return None
    environment, extra = start.group("env"), start.group("extra")
    end_tag = f"\\end{{{environment}}}"
    end = matching_end(core, environment, start.end())
    if end < start.end():
        return None
    body = core[start.end():end]
    rows = split_rows(body)
    braced = bool(prefix or suffix)
    if environment == "cases" and not _split_cases(body, rows):
        return None
    if environment in _ALIGNED and _keep_aligned(body, rows, braced):
        return None
    if environment == "array":
        groups = re.findall(r"\{([^{}]*)\}", extra)
        spec = groups[0] if groups else ""
        if not spec or not _splittable_array(spec) or _keep_array(spec, body, rows, braced):
            return None
    trailing = _strip_end_labels(core[end + len(end_tag):]).strip()
    if trailing and len(split_rows(trailing)) > 1:
        return None
    body_start = max(formula.find(body), 0)
    suffix_end = -1
    if trailing:
        tag_at = formula.find(end_tag, body_start + len(body))
        if tag_at >= 0:
            found = formula.find(trailing, tag_at + len(end_tag))
            if found >= 0:
                suffix_end = found + len(trailing)
    return _rows(body, body_start, trailing, suffix_end)


def _bare_rows(formula: str) -> Rows | None:
    stripped = strip_delimiters(formula).strip()
    if not stripped or "\\\\" not in stripped or len(split_rows(stripped)) <= 1:
        return None
    return _rows(stripped, max(formula.find(stripped), 0), "", -1)


def _rows(body: str, body_start: int, trailing: str, suffix_end: int) -> Rows | None:
    raw, content = [], []
    for line in split_rows(body):
        cleaned = strip_tags(line).strip()
        if cleaned:
            raw.append(line)
            content.append(cleaned)
    if len(content) <= 1:
        return None
    trailing = strip_tags(trailing).strip()
    if trailing:
        content[-1] = f"{content[-1]} {trailing}".strip()
    return Rows(body, body_start, raw, content, suffix_end)


def formula_rows(formula: str) -> Rows | None:
    """The formula's rows when the evaluator splits it, else None."""
    return _environment_rows(formula) or _bare_rows(formula)


def split_ground_truth_formulas(items: list) -> list:
    """Ground-truth items with each splittable display formula replaced by its rows
    (LaTeX `\\[row\\]`, order `order + k/1000`)."""
    out = []
    for item in items:
        rows = formula_rows(item.latex) if item.category == "equation_isolated" else None
        if rows is None:
            out.append(item)
            continue
        base = float(item.order or 0)
        out += [replace(item, latex=f"\\[{row}\\]", order=base + index / 1000.0)
                for index, row in enumerate(rows.content, start=1)]
    return out


def split_predicted_formulas(items: list) -> list:
    """Predicted items with each splittable display formula replaced by its rows, positioned where
    each row lies in the page."""
    out = []
    for item in items:
        rows = formula_rows(item.content) if item.category == "equation_isolated" else None
        if rows is None:
            out.append(item)
            continue
        search = 0
        for index, (raw, content) in enumerate(zip(rows.raw, rows.content)):
            line = strip_tags(raw).strip()
            found = rows.body.find(line, search)
            found = search if found == -1 else found
            search = found + len(line)
            start = item.start + rows.body_start + found
            end = start + len(line) - 1
            if index == len(rows.content) - 1 and rows.suffix_end > 0:
                end = item.start + rows.suffix_end - 1
            out.append(replace(item, content=f"\\[{content.strip()}\\]", start=start, end=end))
    return out


def normalize_logic_braces(formula: str) -> str:
    """`cases` blocks that chain logic rewritten as `\\left\\{ \\begin{array}{l} ... \\end{array} \\right.`
    (the formula unchanged when there is none)."""
    normalized, changed = _logic_braces(formula)
    return normalized if changed else formula


def _logic_braces(text: str) -> tuple[str, bool]:
    pieces, cursor, changed = [], 0, False
    while cursor < len(text):
        begin = text.find("\\begin{", cursor)
        if begin < 0:
            pieces.append(text[cursor:])
            break
        pieces.append(text[cursor:begin])
        start = ENVIRONMENT_START.match(text, begin)
        if not start:
            pieces.append(text[begin:begin + 7])
            cursor = begin + 7
            continue
        environment = start.group("env")
        end_tag = f"\\end{{{environment}}}"
        body_start = start.end()
        end = matching_end(text, environment, body_start)
        if end < body_start:
            pieces.append(text[begin:])
            break
        body, body_changed = _logic_braces(text[body_start:end])
        following = text[end + len(end_tag):end + len(end_tag) + 200]
        if environment == "cases" and _normalize_cases(body, following):
            pieces.append("\\left\\{ \\begin{array}{l} " + body.strip() + " \\end{array} \\right.")
            changed = True
        else:
            pieces.append(text[begin:body_start] + body + end_tag)
            changed = changed or body_changed
        cursor = end + len(end_tag)
    return "".join(pieces), changed


def _normalize_cases(body: str, following: str) -> bool:
    rows = split_rows(body)
    if len(rows) <= 1 or any(_aligned_cells(row) for row in rows):
        return False
    following = following.lstrip()
    logic = bool(_LOGIC.search(body)) or bool(_LOGIC.search(following))
    return logic or bool(ENVIRONMENT_START.match(following))
