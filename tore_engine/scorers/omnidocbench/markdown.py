"""A page's Markdown prediction as the official OmniDocBench v1.6 evaluator reads it (`md_tex_filter`),
and the prediction files it looks for.

The page is cut in the evaluator's order, each piece blanked out of the text once taken (so that
positions stay comparable): LaTeX tables (which the evaluator converts with latexmlc; without it, as
in the reference run, a LaTeX table is no table), HTML tables, display and inline formulas, Markdown
pipe tables (the whole page is then rewritten with the pipe rows as HTML, which shifts the positions
of what follows), fenced code with a language, and paragraphs (split on blank lines, or on lines when
the page has no blank line). Short formula-like texts, image descriptions and table cells also become
formula candidates ("rescue" items), as upstream does. Items carry [start, end] positions in the page;
the prediction's reading order is their order by start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.io.files import read_text
from tore_engine.io.paths import inside
from tore_engine.scorers.omnidocbench import soup
from tore_engine.scorers.omnidocbench.latex_text import latex_to_text
from tore_engine.scorers.omnidocbench.reference import Reference
from tore_engine.scorers.omnidocbench.scan import Finder, blank, image_spans, lazy_pairs, unwrap_command, unwrap_pairs
from tore_engine.scorers.omnidocbench.tables import markdown_tables_to_html, pipe_rows

TEXT, FORMULA, HTML_TABLE, LATEX_TABLE, RESCUE = "text_all", "equation_isolated", "html_table", "latex_table", "formula_rescue"
INLINE = "equation_inline"


@dataclass
class PredItem:
    """One piece of a predicted page: `category` as the evaluator groups it, `fine` its finer type."""

    category: str
    start: int
    end: int
    content: str
    fine: str = ""
    source: tuple | None = None  # the formula a row was split from (the evaluator's source_formula_key)

    @property
    def kind(self) -> str:
        """The evaluator's `get_pred_category_type`: the finer type when there is one."""
        return self.fine or self.category


@dataclass
class MarkdownPredictions:
    """Markdown predictions aligned with a reference: one text per page (None when no file)."""

    folder: str
    texts: list[str | None]
    files: list[str | None] = field(default_factory=list)  # the file read for each page
    unknown_files: list[str] = field(default_factory=list)  # .md/.mmd files no page reads

    @property
    def missing_pages(self) -> list[int]:
        return [index for index, text in enumerate(self.texts) if text is None]


# The evaluator's display-formula pattern `\$\$(.*?)\$\$|\\\[(.*?)\\\]|\$(.*?)\$|\\\((.*?)\\\)` (DOTALL),
# as delimiter pairs tried in this order at each position (see `lazy_pairs`).
_DISPLAY_PAIRS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))
_DOLLARS = re.compile(r"\$\$(.*?)\$\$|\$(.*?)\$|\\\((.*?)\\\)", re.DOTALL)
_CODE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
_HTML_TABLE_SPAN = re.compile(r"(<table.*?</table>)", re.DOTALL)
_FORMULA_TOKEN = re.compile(
    r"(\\frac|\\sqrt|\\sum|\\int|\\prod|\\times|\\div|\\square|\\cdots|\\left|\\right|"
    r"\\approx|\\xrightarrow|\\rightarrow|\\longrightarrow|"
    r"=|<|>|≤|≥|≈|÷|×|±|∑|∫|√|→|\^|_|□|△|…|%|/|\+|-)"
)
_SPACING = r"(?:\\qquad|\\quad|\\enspace|\\,|\\;|\\:)"
_LEADING_NUMBER = re.compile(
    r"^\s*(?P<prefix>(?:\\left\(\s*[0-9IVXivx]+\s*\\right\)|\(\s*[0-9IVXivx]+\s*\)))\s*(?:" + _SPACING + r"\s*)*")
_TRAILING_CAPTIONS = (
    re.compile(r"(?P<sep>" + _SPACING + r"\s*)(?P<caption>\\text\s*\{[^{}]*\}\.?)\s*$"),
    re.compile(r"(?P<sep>" + _SPACING + r"\s*)(?P<caption>\([^)]*[A-Za-z][^)]*\)\.?)\s*$"),
)
_IMAGE_DESCRIPTION_PREFIXES = ("the image ", "the image displays", "the figure ", "the figure shows", "the diagram ",
                               "diagram:", "[diagram:", "[image:", "qr code ")
_STRONG_MATH = ("=", "<", ">", "≤", "≥", "≈", "≠", "^", "+", "-", "/", "\\cdot", "\\frac", "\\sqrt", "\\sum", "\\int",
                "\\times", "\\div", "\\approx", "\\neq", "\\leq", "\\geq", "\\xrightarrow", "\\longrightarrow")
_SANITIZED = (("……", " \\cdots \\cdots "), ("…", " \\cdots "), ("×", " \\times "), ("÷", " \\div "), ("≤", " \\leq "),
              ("≥", " \\geq "), ("≠", " \\neq "), ("≈", " \\approx "), ("□", " \\square "), ("△", " \\triangle "),
              ("（", "("), ("）", ")"), ("［", "["), ("］", "]"), ("｛", "{"), ("｝", "}"))
_REDOX = "氧化还原反应"


def squash(text: str) -> str:
    """White space runs as one space, ends stripped (`' '.join(text.split())`)."""
    return " ".join(text.split())


# --- formula-like text ("rescue" candidates) -------------------------------------------------------

def unwrap_math(text: str) -> str:
    """Every `$$..$$`, `\\[..\\]`, `\\(..\\)` and `$..$` replaced by its content between spaces."""
    for opening, closing in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        text = unwrap_pairs(text, opening, closing, padding=" ")
    return text


def formula_like(text: str) -> bool:
    """The evaluator's `_formula_like_text`: short text made mostly of numbers and operators."""
    text = squash(text)
    if not text or len(text) > 220:
        return False
    bare = unwrap_math(text)
    compact = re.sub(r"\s+", "", bare)
    if not compact:
        return False
    operators = len(_FORMULA_TOKEN.findall(bare))
    digits = len(re.findall(r"\d", bare))
    inline = len(list(re.finditer(r"\$(.*?)\$|\\\((.*?)\\\)", text))) + len(re.findall(r"\$\$(.*?)\$\$|\\\[(.*?)\\\]", text, re.DOTALL))
    cjk = len(re.findall(r"[\u4e00-\u9fff]", bare))
    words = len(re.findall(r"[A-Za-z]{4,}", bare))
    residual = re.sub(r"(\\[A-Za-z]+|[=<>≤≥÷×±∑∫√\^_□△…%/()+\-])", " ", bare)
    residual = re.sub(r"\s+", "", re.sub(r"\d", " ", residual))
    if inline > 0 and len(residual) <= 18 and operators >= 1:
        return True
    if ("□" in bare or "\\square" in bare) and operators >= 1 and words <= 1 and len(compact) <= 80:
        return True
    if ("\\xrightarrow" in bare or "\\longrightarrow" in bare or "→" in bare) and cjk <= 24 and len(compact) <= 120:
        return True
    if operators >= 2 and digits >= 1 and words <= 2 and cjk <= 12 and len(compact) <= 100:
        return True
    return operators >= 3 and words == 0 and cjk <= 18 and len(compact) <= 80


def sanitize_formula(text: str) -> str:
    """The evaluator's `_sanitize_formula_candidate`: formula-like text as display LaTeX."""
    text = squash(text.replace("\u3000", " "))
    if not text:
        return ""
    text = unwrap_math(text)
    for old, new in _SANITIZED:
        text = text.replace(old, new)
    arrow = re.search(r"(?P<lhs>.*?)\\xrightarrow\s*\{(?P<label>[^{}]+)\}(?P<rhs>.*)", text)
    if arrow:
        lhs, label, rhs = arrow.group("lhs").strip(), arrow.group("label").strip(), arrow.group("rhs").strip()
        if label and "\\" not in label:
            label = f"\\text{{{label}}}"
        if rhs.endswith(_REDOX):
            rhs_main = rhs[:-len(_REDOX)].strip()
            text = f"{lhs} \\underset{{{_REDOX}}}{{\\xrightarrow{{{label}}}}} {rhs_main}".strip()
        else:
            text = f"{lhs} \\xrightarrow{{{label}}} {rhs}".strip()
    text = re.sub(r"(?<!\\)%", r"\\%", text)
    text = re.sub(r"(?<!\\)&", r"\\&", text)
    text = re.sub(r"\s+", " ", text).strip()
    if not text or text.startswith(("\\begin{", "$$", "\\[")):
        return text
    return "\\[ " + text + " \\]"


def _rescue(items: list[PredItem], text: str, start: int, end: int, fine: str) -> None:
    if not formula_like(text):
        return
    content = sanitize_formula(text)
    if content:
        arrow = "\\xrightarrow" in content or "\\longrightarrow" in content
        items.append(PredItem(FORMULA if arrow else RESCUE, start, end, content, fine))


def _table_cell_formulas(table_html: str, start: int) -> list[PredItem]:
    """Table cells that look like arithmetic, as formula candidates placed one after another."""
    items, cursor = [], max(start, 0)
    for cell in soup.parse(table_html).find_all(("td", "th")):
        text = squash(cell.get_text(" "))
        if not _looks_like_cell_formula(text):
            continue
        content = sanitize_formula(text)
        if content:
            end = cursor + max(len(text), 1)
            items.append(PredItem(FORMULA, cursor, end, content, "table_formula_rescue"))
            cursor = end + 1
    return items


def _looks_like_cell_formula(text: str) -> bool:
    if not text or len(text) > 120 or not formula_like(text):
        return False
    digits = len(re.findall(r"\d", text))
    fraction = "\\frac" in text or bool(re.search(r"\d+\s*/\s*\d+", text))
    operators = sum(token in text for token in ("=", "+", "-", "×", "÷", "/", "≈", "\\times", "\\div", "\\approx"))
    if operators < 1:
        return False
    return digits >= 2 or fraction


# --- display formulas --------------------------------------------------------------------------

def _envelope(text: str) -> tuple[str, str, str]:
    text = squash(text)
    for left, right in (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$")):
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            return left, right, text[len(left):len(text) - len(right)].strip()
    return "", "", text


def _wrap(inner: str, left: str, right: str) -> str:
    inner = inner.strip()
    if not inner:
        return ""
    return f"{left} {inner} {right}" if left and right else inner


def _plain(latex: str) -> str:
    latex = latex.strip()
    if not latex:
        return ""
    text = latex_to_text(latex, "formula").replace("\xa0", " ")
    return re.sub(r"\s+", " ", text).strip()


def _looks_like_caption(text: str) -> bool:
    raw = text.strip()
    plain = _plain(raw) if raw else ""
    if not plain:
        return False
    letters = len(re.findall(r"[A-Za-z]", plain))
    words = re.findall(r"[A-Za-z]{2,}", plain)
    math = len(re.findall(r"(\\[A-Za-z]+|[=<>≤≥÷×±∑∫√_^{}])", raw))
    digits = len(re.findall(r"\d", plain))
    core = plain[1:-1].strip() if plain.startswith("(") and plain.endswith(")") else plain
    if re.fullmatch(r"[0-9IVXivx]+", core.replace(" ", "")):
        return False
    return (letters >= 10 and len(words) >= 2 and math <= 6) or (letters >= 14 and digits == 0 and math <= 3)


def _margin_item(text: str, start: int, end: int) -> PredItem | None:
    plain = _plain(text)
    return PredItem(TEXT, start, end, plain, "equation_caption") if plain else None


def _has_margin_text(formula: str) -> bool:
    compact = squash(formula)
    if not compact:
        return False
    inner = _envelope(compact)[2]
    if not inner:
        return False
    if _LEADING_NUMBER.match(inner):
        return True
    for pattern in _TRAILING_CAPTIONS:
        found = pattern.search(inner)
        if found and _looks_like_caption(found.group("caption")):
            return True
    return False


def _split_margin_text(formula: str, start: int, end: int) -> tuple[str, list[PredItem]]:
    """An equation number before, or a caption after, a display formula, as separate text items."""
    compact = squash(formula)
    if not compact:
        return compact, []
    left, right, working = _envelope(compact)
    if not working:
        return compact, []
    extra: list[PredItem] = []
    leading = _LEADING_NUMBER.match(working)
    if leading:
        prefix = leading.group("prefix").strip()
        item = _margin_item(prefix, start, min(end, start + max(len(prefix), 1)))
        if item:
            extra.append(item)
        working = working[leading.end():].strip()
    while working:
        for pattern in _TRAILING_CAPTIONS:
            found = pattern.search(working)
            if not found:
                continue
            caption = found.group("caption").strip()
            if not _looks_like_caption(caption):
                continue
            item = _margin_item(caption, max(start, end - max(len(caption), 1)), end)
            if item:
                extra.append(item)
            working = working[:found.start("sep")].rstrip()
            break
        else:
            break
    working = re.sub(r"(?:" + _SPACING + r"\s*)+$", "", working).strip()
    if not working:
        return compact, []
    return _wrap(working, left, right), extra


def _looks_like_arithmetic(segment: str) -> bool:
    compact = squash(segment)
    if not compact or len(compact) > 160 or "\\begin{" in compact or "\\end{" in compact:
        return False
    if re.search(r"\\(mathbf|left|right|cdot|lambda|Gamma|varGamma|text|matrix|pmatrix|bmatrix)", compact):
        return False
    digits = len(re.findall(r"\d", compact))
    fraction = "\\frac" in compact or bool(re.search(r"\d+\s*/\s*\d+", compact))
    relations = sum(token in compact for token in ("=", "\\approx", "≈", "\\neq", "≠", "\\leq", "≤", "\\geq", "≥"))
    return relations >= 1 and (digits >= 2 or fraction)


def _split_compound(formula: str, start: int, end: int) -> list[PredItem]:
    """`a = 1 \\quad b = 2`: several arithmetic formulas on one line, as separate formulas."""
    compact = squash(formula)
    if not compact:
        return []
    left, right, inner = _envelope(compact)
    if not inner or ("\\quad" not in inner and "\\qquad" not in inner):
        return []
    segments = [part.strip() for part in re.split(r"\s*(?:\\qquad|\\quad)\s*", inner) if part.strip()]
    if len(segments) <= 1 or not all(_looks_like_arithmetic(part) for part in segments):
        return []
    span = max(max(end - start, len(segments)) // len(segments), 1)
    items = []
    for index, segment in enumerate(segments):
        first = start + index * span
        last = end if index == len(segments) - 1 else min(end, first + span)
        items.append(PredItem(FORMULA, first, last, _wrap(segment, left, right)))
    return items


def _add_display(items: list[PredItem], formula: str, start: int, end: int, fine: str = "") -> None:
    extra: list[PredItem] = []
    if _has_margin_text(formula):
        formula, extra = _split_margin_text(formula, start, end)
    pieces = _split_compound(formula, start, end) or [PredItem(FORMULA, start, end, formula)]
    for piece in pieces:
        piece.fine = fine
    items += pieces + extra


# --- tables --------------------------------------------------------------------------------------

MAX_RESTARTS = 900  # the evaluator recurses once per restart and fails at Python's recursion limit (about 985)


def _nested_spans(text: str, opening: str, closing: str, opening_length: int, step: int, closed_by: str = "") -> list[tuple[int, int]]:
    """The evaluator's stack scan for outermost `opening`..`closing` pairs (`extract_tabular`,
    `extract_html_table`), with its arithmetic: after an opening or a closing it moves on by `step`
    characters (the length of its closing pattern's source), and when openings stay unclosed it scans
    again from the first one plus `opening_length` (its opening pattern's source length) while a
    closing remains after it."""
    spans: list[tuple[int, int]] = []
    openings, closings = Finder(text, opening, closed_by), Finder(text, closing)
    base = restarts = 0
    while True:
        stack: list[int] = []
        cursor = base
        while cursor < len(text):
            begin, end = openings.at(cursor), closings.at(cursor)
            if begin < 0 and end < 0:
                break
            if begin >= 0 and (end < 0 or begin < end):
                stack.append(begin)
                cursor = begin + step
            else:
                if stack:
                    start = stack.pop()
                    if not stack:
                        spans.append((start, end + step))
                cursor = end + step
        if not stack:
            return spans
        base = stack[0] + opening_length
        restarts += 1
        if restarts > MAX_RESTARTS or closings.at(base) < 0:
            return spans


_TABULAR = ("\\begin{tabular}", "\\end{tabular}", len(r"\\begin{tabular}"), len(r"\\end{tabular}"))
_HTML_TABLE = ("<table", "</table>", len(r"<table(?:[^>]*)>"), len("</table>"), ">")


def latex_tables(content: str) -> list[tuple[int, int]]:
    """`\\begin{table}...\\end{table}` spans, then outermost tabular spans in what remains."""
    spans = lazy_pairs(content, (("\\begin{table}", "\\end{table}"),))
    spans += _nested_spans(blank(content, spans), *_TABULAR)
    return sorted(spans, key=lambda span: span[0])


def _html_text_fragment(text: str) -> str:
    """A paragraph that is a `<div>` or `<dir>` block, as its text lines."""
    stripped = text.strip()
    if not stripped or "<table" in stripped.lower() or not re.match(r"^<(div|dir)\b", stripped, flags=re.IGNORECASE):
        return stripped
    document = soup.parse(stripped)
    for tag in document.find_all(("style", "script")):
        tag.decompose()
    for tag in document.find_all(("span", "font", "b", "strong", "i", "em", "u", "a", "sup", "sub")):
        tag.unwrap()
    for tag in document.find_all("br"):
        tag.replace_with(soup.make_text("\n"))
    for tag in document.find_all(("div", "dir", "p", "li")):
        if not tag.contents or not (isinstance(tag.contents[-1], soup.Text) and tag.contents[-1] == "\n"):
            tag.append(soup.make_text("\n"))
    extracted = document.get_text().replace("\xa0", " ")
    extracted = re.sub(r"[ \t]*\n[ \t]*", "\n", extracted)
    lines = [line.strip() for line in extracted.split("\n") if line.strip()]
    return "\n".join(lines).strip() or stripped


def _image_description(text: str) -> bool:
    compact = squash(text).strip().lower()
    return len(compact) >= 24 and compact.startswith(_IMAGE_DESCRIPTION_PREFIXES)


def _plain_image_descriptions(content: str) -> str:
    blocks = re.split(r"(\n\s*\n)", content)
    for index in range(0, len(blocks), 2):
        if _image_description(blocks[index]):
            blocks[index] = unwrap_pairs(unwrap_pairs(blocks[index], "\\(", "\\)"), "$", "$")
    return "".join(blocks)


def _drop_short_inline(item: PredItem) -> bool:
    """Inline formulas that are only a label (`$x$`, `$A1$`) or an arrow are not formula candidates."""
    if item.category != FORMULA or item.fine != INLINE:
        return False
    raw = item.content.strip()
    if not raw:
        return False
    core = unwrap_math(raw)
    compact = re.sub(r"\s+", "", core)
    if compact.startswith(("\\xrightarrow", "\\longrightarrow")):
        return True
    if not compact or len(compact) > 24 or any(token in core for token in _STRONG_MATH):
        return False
    return any(re.fullmatch(pattern, compact) for pattern in (
        r"[A-Za-z0-9._,-]+", r"[A-Za-z][A-Za-z0-9_.,-]*", r"[A-Za-z0-9]+Oy", r"[ΓγλμνxyzuvwMNOabcABC0-9._,-]+"))


def _preprocess(content: str) -> tuple[str, list[PredItem]]:
    """Images blanked (their formula-like descriptions kept as candidates), fences and repeated
    underscores and spaces reduced, `<html>`/`<body>` removed, math in image descriptions unwrapped."""
    items: list[PredItem] = []
    images = image_spans(content)
    for start, end, alt in images:
        _rescue(items, alt.strip(), start, end, "image_formula")
    content = blank(content, [(start, end) for start, end, _ in images])
    for pattern in (r"^```markdown\n?", r"^```html\n?", r"^```latex\n?", r"```\n?$"):
        content = re.sub(pattern, "", content, flags=re.MULTILINE)
    content = re.sub(r" {4,}", "    ", re.sub(r"_{4,}", "____", content))
    for tag in ("<html>", "</html>", "<body>", "</body>"):
        content = content.replace(tag, "")
    return _plain_image_descriptions(content), items


def _take_tables(content: str, items: list[PredItem]) -> str:
    spans = latex_tables(content)
    for start, end in spans:
        items.append(PredItem(LATEX_TABLE, start, end, content[start:end], LATEX_TABLE))  # no latexmlc: not HTML
    content = blank(content, spans)
    spans = _nested_spans(content, *_HTML_TABLE)
    for start, end in spans:
        table = content[start:end]
        items.append(PredItem(HTML_TABLE, start, end, table))
        items += _table_cell_formulas(table, start)
    return blank(content, spans)


def _take_formulas(content: str, items: list[PredItem]) -> str:
    spans = []
    for start, end in lazy_pairs(content, _DISPLAY_PAIRS):
        line = " ".join(content[start:end].strip().split("\n"))
        inner = _DOLLARS.search(line)
        if inner is None:
            spans.append((start, end))
            _add_display(items, line, start, end)
        elif inner.group(1):
            spans.append((start, end))
            _add_display(items, _DOLLARS.sub(lambda m: "\\[" + (m.group(1) or "") + "\\]", line), start, end)
        else:  # an inline formula stays in its paragraph
            line = _DOLLARS.sub(lambda m: "\\[" + (m.group(2) or "") + (m.group(3) or "") + "\\]", line)
            _add_display(items, line, start, end, INLINE)
    return blank(content, spans)


def _take_pipe_tables(content: str, items: list[PredItem]) -> str:
    if len(pipe_rows(content + "\n")) < 2:
        return content
    content = markdown_tables_to_html(content)
    spans = []
    for match in _HTML_TABLE_SPAN.finditer(content):
        start, end = match.span()
        spans.append((start, end))
        table = match.group(0).strip()
        items.append(PredItem(HTML_TABLE, start, end, table, "md2html_table"))
        items += _table_cell_formulas(table, start)
    return blank(content, spans)


def _take_code(content: str, items: list[PredItem]) -> str:
    matches = list(_CODE.finditer(content))
    items += [PredItem(TEXT, match.start(), match.end(), match.group(2).strip(), "code") for match in matches]
    return blank(content, [match.span() for match in matches])


def _take_paragraphs(content: str, items: list[PredItem]) -> None:
    # the evaluator's \\title{..}, \\title {..}, \\text {..}, \\section*{..} removal, in its order
    content = unwrap_command(content, "\\title", star=False, spaced=False)
    content = unwrap_command(content, "\\title", star=False, spaced=True, space_before=True)
    content = unwrap_command(content, "\\text", star=False, spaced=True, space_before=True)
    content = unwrap_command(content, "\\section", star=True, spaced=False)
    content = unwrap_command(content, "\\section", star=True, spaced=True)
    paragraphs = content.split("\n\n")
    if len(paragraphs) == 1:
        paragraphs = content.split("\n")
    cursor = 0
    for paragraph in paragraphs:
        start, end = cursor, cursor + len(paragraph)  # the evaluator adds no separator lengths
        cursor = end
        text = "\n".join(line.strip() for line in paragraph.strip().strip("\n").split("\n") if line.strip())
        text = _html_text_fragment(text).strip()
        if text:
            items.append(PredItem(TEXT, start, end, text, "text_block"))
            _rescue(items, text, start, end, "text_formula")


def parse_markdown(content: str) -> dict[str, list[PredItem]]:
    """A page's items by category, each list in page order (the evaluator's `md_tex_filter`)."""
    content, items = _preprocess(content)
    content = _take_tables(content, items)
    content = _take_formulas(content, items)
    content = _take_pipe_tables(content, items)
    content = _take_code(content, items)
    _take_paragraphs(content, items)
    grouped: dict[str, list[PredItem]] = {}
    for item in sorted(items, key=lambda item: item.start):
        if not _drop_short_inline(item):
            grouped.setdefault(item.category, []).append(item)
    return grouped


# --- files ---------------------------------------------------------------------------------------

def prediction_names(image_name: str) -> list[str]:
    """The file names the evaluator tries for a page, in order: `<name>.md` (the image name less its
    last four characters), `<name without .pdf>.mmd`, `<name without .pdf>.md`, `<image name>.md`."""
    stem = image_name[:-4]
    bare = stem.replace(".pdf", "")
    return [stem + ".md", bare + ".mmd", bare + ".md", image_name + ".md"]


def load_markdown_predictions(folder: str | Path, reference: Reference) -> MarkdownPredictions:
    """Each reference page's prediction text, from the first file of `prediction_names` that exists
    (a page without one is scored as an empty prediction, as upstream does). An entry of that name
    that is not a regular file (a folder, a pipe, a device, a link loop) is an error: it is never
    read or waited on, nor taken for a missing page."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("is not a folder of Markdown files (one <image stem>.md per page)", file=str(folder))
    present = {path.name for path in folder.iterdir()}
    texts: list[str | None] = []
    files: list[str | None] = []
    for page in reference.pages:
        name = next((name for name in prediction_names(Path(page.id).name) if name in present), None)
        files.append(name)
        texts.append(None if name is None else read_text(inside(name, folder, what="Markdown file")))
    unknown = sorted(name for name in present if name.endswith((".md", ".mmd")) and name not in set(files))
    return MarkdownPredictions(str(folder), texts, files, unknown)
