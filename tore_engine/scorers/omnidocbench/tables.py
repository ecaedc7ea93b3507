"""Tables as the official OmniDocBench v1.6 evaluator compares them: its HTML normalisation (with cell
text normalised: LaTeX symbols such as `\\pm` as `±`, math delimiters around short cells removed) and
its conversion of Markdown pipe tables to HTML, which gives every cell `colspan="1" rowspan="1"`
(characters the table edit distance then counts: a quirk of the leaderboard numbers, kept).
"""

from __future__ import annotations

import html
import re
import unicodedata

from tore_engine.scorers.omnidocbench import soup

_LATEX_SYMBOLS = (
    (r"\checkmark", "√"), (r"\checked", "√"), (r"\surd", "√"), (r"\times", "×"), (r"\xmark", "×"),
    (r"\crossmark", "×"), (r"\pm", "±"), (r"\mp", "∓"), (r"\alpha", "α"), (r"\beta", "β"), (r"\gamma", "γ"),
    (r"\gama", "γ"), (r"\mu", "μ"), (r"\lambda", "λ"), (r"\theta", "θ"), (r"\eta", "η"), (r"\pi", "π"),
    (r"\rho", "ρ"), (r"\sigma", "σ"), (r"\omega", "ω"), (r"\delta", "δ"), (r"\Delta", "Δ"), (r"\epsilon", "ε"),
    (r"\varepsilon", "ε"), (r"\phi", "φ"), (r"\varphi", "φ"), (r"\tau", "τ"), (r"\partial", "∂"),
    (r"\varnothing", "∅"), (r"\emptyset", "∅"), (r"\sim", "～"),
)
_DIRECT_SYMBOLS = (
    ("✓", "√"), ("✔", "√"), ("☑", "√"), ("✅", "√"), ("🗸", "√"), ("✗", "×"), ("✘", "×"), ("✕", "×"), ("✖", "×"),
    ("☒", "×"), ("❌", "×"), ("╳", "×"), ("⨯", "×"), ("Ø", "∅"), ("∼", "～"), ("〜", "～"),
    (r"\%", "%"), (r"\#", "#"), (r"\&", "&"), (r"\_", "_"),
)
_DASHES = {"-": "—", "–": "—", "−": "—", "－": "—", "—": "—"}
_MATH_WRAPPERS = (("$$", "$$"), (r"\[", r"\]"), (r"\(", r"\)"), ("$", "$"))
_MAX_WRAPPED = 128
_REMOVED_ATTRIBUTES = [re.compile(f'( {name}=".*?")') for name in ("style", "height", "width", "align", "class")]
_REMOVED_TAGS = ("<sup>", "</sup>", "<sub>", "</sub>", "<span>", "</span>", "<div>", "</div>", "<p>", "</p>",
                 '<spandata-span-identity="">')


def _replace_symbols(text: str) -> str:
    for old, new in (*_LATEX_SYMBOLS, *_DIRECT_SYMBOLS):
        text = text.replace(old, new)
    return text


def _strip_math_wrappers(text: str) -> str:
    """Math delimiters around a short cell without `<`, `>` or `$` inside removed, level by level."""
    text = text.strip()
    changed = True
    while text and changed:
        changed = False
        for left, right in _MATH_WRAPPERS:
            if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
                inner = text[len(left):len(text) - len(right)].strip()
                if not inner or len(inner) > _MAX_WRAPPED or "<" in inner or ">" in inner or "$" in inner:
                    continue
                text, changed = inner, True
                break
    return text


def normalize_cell_text(text: str) -> str:
    """A table cell's text as the evaluator compares it."""
    text = unicodedata.normalize("NFKC", text).replace("\xa0", " ").replace("\u200b", "")
    text = _replace_symbols(_strip_math_wrappers(_replace_symbols(text)))
    text = _DASHES.get(text.strip(), text)
    return re.sub(r"\s+", " ", text).strip()


def _normalized_dom(table_html: str) -> str:
    """`th` as `td`, `thead`/`tbody`/`span` unwrapped, MathML as `$alttext$`, then every text of
    every cell normalised (on the printed and parsed-again tree, as the evaluator does)."""
    document = soup.parse(table_html)
    for cell in document.find_all("th"):
        cell.name = "td"
    for wrapper in document.find_all(("thead", "tbody")):
        wrapper.unwrap()
    for math in document.find_all("math"):
        alttext = math.attrs.get("alttext", "")
        math.replace_with(soup.make_text(f"${' '.join(alttext) if isinstance(alttext, list) else alttext}$"))
    for span in document.find_all("span"):
        span.unwrap()
    document = soup.parse(document.decode())
    for cell in document.find_all(("td", "th")):
        for node in list(cell.descendants()):
            if isinstance(node, soup.Text):
                normalized = normalize_cell_text(str(node))
                if normalized != str(node):
                    _replace_text(node, normalized)
    return document.decode()


def _replace_text(node: soup.Text, value: str) -> None:
    parent = node.parent
    if parent is None:
        return
    index = next(i for i, child in enumerate(parent.contents) if child is node)
    replacement = soup.make_text(value)
    replacement.parent = parent
    parent.contents[index] = replacement
    node.parent = None


def normalize_table_html(table_html: str) -> str:
    """The evaluator's `normalized_html_table`: empty when the text holds no `<table`."""
    if "<table" not in table_html.replace(" ", "").replace("'", '"'):
        return ""
    text = unicodedata.normalize("NFKC", html.unescape(_normalized_dom(table_html)).replace("\n", "")).strip()
    text = "".join(re.findall(r"<table\b[^>]*>(.*)</table>", text, re.DOTALL | re.IGNORECASE))
    for attribute in _REMOVED_ATTRIBUTES:
        text = attribute.sub("", text)
    text = re.sub(r"\s+", " ", re.sub("</?tbody>", "", text))
    text = f'<html><body><table border="1" >{text}</table></body></html>'
    for tag in _REMOVED_TAGS:
        text = text.replace(tag, "")
    return re.sub("<colgroup>.*?</colgroup>", "", text)


# --- Markdown pipe tables -------------------------------------------------------------------------

def pipe_rows(text: str) -> list[str]:
    """What the evaluator's `\\|\\s*.*?\\s*\\|\\n` finds (DOTALL): from a `|` to the next `|`+newline,
    left to right without overlap; each Markdown table row is one such piece."""
    rows: list[str] = []
    search, end = 0, -2
    while True:
        start = text.find("|", search)
        if start < 0:
            return rows
        if end < start + 1:
            end = text.find("|\n", start + 1)
            if end < 0:
                return rows
        rows.append(text[start:end + 2])
        search = end + 2


def _row_table(row: str) -> str:
    """One pipe row as the evaluator writes it: a table whose first line is the header row."""
    lines = [line.strip() for line in row.strip().split("\n")]
    cells = "".join(f"      <th>{cell.strip()}</th>\n" for cell in lines[0].split("|")[1:-1])
    body = "".join(
        "    <tr>\n" + "".join(f"      <td>{cell.strip()}</td>\n" for cell in line.split("|")[1:-1]) + "    </tr>\n"
        for line in lines[2:]
    )
    return f"<table>\n  <thead>\n    <tr>\n{cells}    </tr>\n  </thead>\n  <tbody>\n{body}  </tbody>\n</table>\n"


def markdown_tables_to_html(content: str) -> str:
    """The evaluator's `convert_markdown_to_html` of a whole page: each pipe row made a one-row
    table, consecutive row tables merged into one, `<table>` given `border="1"` and every `<td>`
    `colspan="1" rowspan="1"`."""
    content = content.replace("\r", "") + "\n"
    for row in pipe_rows(content):
        content = content.replace(row, _row_table(row), 1)
    merged = _merge_row_tables(content)
    return merged.replace("<table>", '<table border="1" >').replace("<td>", '<td colspan="1" rowspan="1">')


def _is_separator(line: str) -> bool:
    return ":" in line or "---" in line


def _merge_row_tables(text: str) -> str:
    """The evaluator's `replace_table_with_placeholder`: runs of lines from a `<table>` line to a
    `</table>` line not followed by another `<table>` become one table; separator rows dropped."""
    out: list[str] = []
    in_table, block, last = False, "", ""
    for line in text.split("\n"):
        if "<table>" in line:
            in_table = True
            block += last
        elif in_table:
            if not _is_separator(last) and "</thead>" not in last:
                block += "\n" + last
            if "</table>" in last and "<table>" not in line:
                in_table = False
                out.append(_merged_table(block))
                block = ""
        else:
            out.append(last)
        last = line
    if last:
        if in_table or "</table>" in last:
            block += "\n" + last
            out.append(_merged_table(block))
        else:
            out.append(last)
    return "\n".join(out)


def _merged_table(block: str) -> str:
    block = re.sub(r"<!--[\s\S]*?-->", "", block)
    rows: list[str] = []
    for table in re.findall(r"<table>[\s\S]*?</table>", block):
        lines = [line.replace("<th>", "<td>").replace("</th>", "</td>") if "<th>" in line else line
                 for line in table.split("\n")]
        kept = [line for line in lines if not re.search(r"</?t(able|head|body)>", line)]
        if len(kept) > 2:
            rows.extend(kept)
    joined = "\n".join(rows)
    return f"\n\n<table>\n{joined}\n</table>\n\n"
