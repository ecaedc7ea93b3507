"""Untrusted text (class names, page ids, file and model names, error messages) shown as plain text.

Plotly (the app's and the reports' figures) reads `<a href>`, `<span style>` and other tags in titles, tick labels,
hover texts, legend names and annotations, and Streamlit reads Markdown (links, images fetched from anywhere, HTML,
directives) in `st.markdown`, captions, alerts, progress texts, radio options and tooltips. Every
string that comes from an input passes through one of these two functions on its way there:
Plotly figure builders escape what they are given (callers pass plain text), and Streamlit calls
escape at the call. Numbers and names are shown one way everywhere: `pixels`, `percent`,
`shortened`.
"""

from __future__ import annotations

import html
import re

# The characters that open or close an inline construct: code, emphasis, strike-through, links and
# images, HTML and autolinks in `<...>`, maths, entities, tables.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_~\[\]()!<>$&#|])")
# A list-item or thematic-break marker (`-`, `+`, `1.`, `1)`) where a block starts: only at the
# text's start, since line breaks become spaces (`#`, `>` and `*` are escaped everywhere).
_BLOCK_MARKER = re.compile(r"^(\s*(?:\d+)?)([-+.)])")
# Links made from bare text (`https://...`, `www.`, `name@host`), emoji and icon shortcodes and
# directives (`:smile:`, `:material/home:`, `:red[...]`) are found in the parsed text, where a
# backslash no longer is: a zero-width word joiner breaks them without changing what is seen.
_BARE_LINKS = re.compile(r"(?i):(?=[\w/+-])|\bwww(?=\.)|(?<=[-.\w+])(?=@)")
_WORD_JOINER = "\u2060"
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")  # a newline would start a new block


def plain_for_plotly(text: object) -> str:
    """`text` with `&`, `<` and `>` as HTML entities, so Plotly draws it as written."""
    return html.escape(str(text), quote=False)


def plain_for_markdown(text: object) -> str:
    """`text` with every Markdown-active character backslash-escaped, bare links and shortcodes
    broken by a word joiner and line breaks as spaces, so Streamlit shows it literally inside a
    Markdown string."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(text)))
    text = _BARE_LINKS.sub(lambda match: f"{match[0]}{_WORD_JOINER}", text)
    return _BLOCK_MARKER.sub(r"\1\\\2", text)


ELLIPSIS = "…"
MAX_NAME = 40  # characters of a file or model name in a picker


def shortened(text: str, limit: int = MAX_NAME) -> str:
    """`text` cut in the middle when longer than `limit`, so that two long names that share a
    beginning (or an ending) still look different."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return f"{text[:head]}{ELLIPSIS}{text[len(text) - (limit - 1 - head):]}"


def pixels(value: float) -> str:
    """A pixel count: a whole number as one ("297,539"), a split pixel's share with one decimal."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def percent(share: float) -> str:
    """A share as the app's one percentage format: one decimal ("7.1%")."""
    return f"{share:.1%}"
