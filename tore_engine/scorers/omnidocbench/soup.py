"""A small HTML tree with the parsing and printing rules of BeautifulSoup 4 on Python's `html.parser`,
which the official OmniDocBench evaluator uses to normalise tables and HTML text.

Table edit distances compare the printed HTML character by character, so the print must be the one
the official produces: attributes sorted by name, `&`, `<` and `>` escaped in text and attribute
values, void elements as `<br/>`, runs of ASCII white space between tags printed as one space (or one
newline when they hold one), entities decoded while parsing (an unknown `&name;` keeps `&name`), an
end tag without an open element ignored, and multi-valued attributes such as `class` re-joined with
single spaces. Only what the evaluator needs is here: parse, print, find, rename, unwrap, replace,
append, remove and text extraction.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from html.entities import html5
from html.parser import HTMLParser

VOID_TAGS = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "menuitem", "meta", "param",
    "source", "track", "wbr", "basefont", "bgsound", "command", "frame", "image", "isindex", "nextid", "spacer",
})
_PRESERVE_WHITESPACE = frozenset({"pre", "textarea"})
_RAW_TEXT_TAGS = frozenset({"script", "style"})  # printed without escaping
# Strings inside these tags are not "text" for get_text (BeautifulSoup's string containers).
_STRING_CONTAINERS = frozenset({"rt", "rp", "style", "script", "template"})
_LIST_ATTRIBUTES = {
    "*": ("class", "accesskey", "dropzone"), "a": ("rel", "rev"), "link": ("rel", "rev"), "td": ("headers",),
    "th": ("headers",), "form": ("accept-charset",), "object": ("archive",), "area": ("rel",), "icon": ("sizes",),
    "iframe": ("sandbox",), "output": ("for",),
}
_ESCAPED = re.compile("([<>&])")
_ESCAPES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _entities() -> dict[str, str]:
    names: dict[str, str] = {}
    for name, character in sorted(html5.items()):
        names.setdefault(name[:-1] if name.endswith(";") else name, character)
    return names


_ENTITIES = _entities()


class Text(str):
    """A text node; `kind` is "text", or for markup kept verbatim "comment", "cdata", "doctype",
    "declaration" or "pi"; `container` is set for text inside script, style, template, rt or rp."""

    kind = "text"
    container = False
    parent: Tag | None = None

    def output(self) -> str:
        if self.kind == "comment":
            return f"<!--{self}-->"
        if self.kind == "cdata":
            return f"<![CDATA[{self}]]>"
        if self.kind == "doctype":
            return f"<!DOCTYPE {self}>\n"
        if self.kind == "declaration":
            return f"<?{self}?>"
        if self.kind == "pi":
            return f"<?{self}>"
        if self.parent is not None and self.parent.name in _RAW_TEXT_TAGS:
            return str(self)
        return _escape(self)


def make_text(value: str, kind: str = "text", container: bool = False) -> Text:
    node = Text(value)
    node.kind = kind
    node.container = container
    return node


class Tag:
    """An element: name, attributes (insertion order; printed sorted) and children."""

    def __init__(self, name: str, attrs: dict[str, str | list[str]] | None = None) -> None:
        self.name = name
        self.attrs = attrs or {}
        self.contents: list[Tag | Text] = []
        self.parent: Tag | None = None

    # --- tree edits ---
    def append(self, node: Tag | Text) -> None:
        node.parent = self
        self.contents.append(node)

    def replace_with(self, *nodes: Tag | Text) -> None:
        parent = self._parent_or_fail()
        index = parent._index(self)
        parent.contents[index:index + 1] = list(nodes)
        for node in nodes:
            node.parent = parent
        self.parent = None

    def unwrap(self) -> None:
        self.replace_with(*self.contents)

    def decompose(self) -> None:
        parent = self._parent_or_fail()
        del parent.contents[parent._index(self)]
        self.parent = None

    def _index(self, node: Tag | Text) -> int:
        return next(i for i, child in enumerate(self.contents) if child is node)

    def _parent_or_fail(self) -> Tag:
        if self.parent is None:
            raise ValueError(f"<{self.name}> is not part of a tree")
        return self.parent

    # --- reading ---
    def descendants(self) -> Iterator[Tag | Text]:
        """Every node below this one in document order, without recursion (BeautifulSoup's walk is
        iterative too, so a table nested thousands deep is still parsed and printed)."""
        pending: list[Tag | Text] = self.contents[::-1]
        while pending:
            node = pending.pop()
            yield node
            if isinstance(node, Tag):
                pending.extend(node.contents[::-1])

    def find_all(self, names: str | tuple[str, ...]) -> list[Tag]:
        wanted = {names} if isinstance(names, str) else set(names)
        return [node for node in self.descendants() if isinstance(node, Tag) and node.name in wanted]

    def get_text(self, separator: str = "", strip: bool = False) -> str:
        """The text strings below this element (not comments, not script/style), joined."""
        strings: list[str] = [node for node in self.descendants()
                              if isinstance(node, Text) and node.kind in ("text", "cdata") and not node.container]
        if strip:
            strings = [node.strip() for node in strings if node.strip()]
        return separator.join(strings)

    def decode(self) -> str:
        """The printed markup, built without recursion: each element's start tag, its children, then
        its end tag (a plain `str` on the pending stack)."""
        parts: list[str] = []
        pending: list[Tag | str] = [self]
        while pending:
            node = pending.pop()
            if isinstance(node, Tag):
                start, end = node._tags()
                parts.append(start)
                pending.append(end)
                pending.extend(node.contents[::-1])
            else:
                parts.append(node.output() if isinstance(node, Text) else node)
        return "".join(parts)

    def _tags(self) -> tuple[str, str]:
        if self.name == "[document]":
            return "", ""
        attributes = "".join(" " + _attribute(key, value) for key, value in sorted(self.attrs.items()))
        if self.name in VOID_TAGS and not self.contents:
            return f"<{self.name}{attributes}/>", ""
        return f"<{self.name}{attributes}>", f"</{self.name}>"

    def __str__(self) -> str:
        return self.decode()


def _escape(value: str) -> str:
    return _ESCAPED.sub(lambda match: _ESCAPES[match.group(1)], value)


def _attribute(key: str, value: str | list[str]) -> str:
    text = _escape(" ".join(value) if isinstance(value, list) else value)
    quote = '"'
    if '"' in text:
        if "'" in text:
            text = text.replace('"', "&quot;")
        else:
            quote = "'"
    return f"{key}={quote}{text}{quote}"


class _Builder(HTMLParser):
    """Builds the tree from `html.parser` events as BeautifulSoup's html.parser builder does."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.root = Tag("[document]")
        self.stack: list[Tag] = [self.root]
        self.open_counts: Counter[str] = Counter()  # open elements by name (pre, textarea, script... included)
        self.data: list[str] = []
        self.closed_voids: list[str] = []

    # text
    def handle_data(self, data: str) -> None:
        self.data.append(data)

    def handle_charref(self, name: str) -> None:
        code = int(name.lstrip("xX"), 16) if name[:1] in "xX" else int(name)
        text = None
        if code < 256:
            try:
                text = bytes([code]).decode("windows-1252")
            except UnicodeDecodeError:
                text = None
        if not text:
            try:
                text = chr(code)
            except (ValueError, OverflowError):
                text = None
        self.handle_data(text or "\N{REPLACEMENT CHARACTER}")

    def handle_entityref(self, name: str) -> None:
        self.handle_data(_ENTITIES.get(name, f"&{name}"))

    def handle_comment(self, data: str) -> None:
        self._end_data()
        self.data.append(data)
        self._end_data("comment")

    def handle_decl(self, data: str) -> None:
        self._end_data()
        self.data.append(data[len("DOCTYPE "):])
        self._end_data("doctype")

    def unknown_decl(self, data: str) -> None:
        self._end_data()
        cdata = data.upper().startswith("CDATA[")
        self.data.append(data[len("CDATA["):] if cdata else data)
        self._end_data("cdata" if cdata else "declaration")

    def handle_pi(self, data: str) -> None:
        self._end_data()
        self.data.append(data)
        self._end_data("pi")

    def _end_data(self, kind: str = "text") -> None:
        if not self.data:
            return
        value = "".join(self.data)
        self.data = []
        preserved = any(self.open_counts[name] for name in _PRESERVE_WHITESPACE)
        if not preserved and not value.strip("\x20\x0a\x09\x0c\x0d"):
            value = "\n" if "\n" in value else " "
        container = kind == "text" and any(self.open_counts[name] for name in _STRING_CONTAINERS)
        self.stack[-1].append(make_text(value, kind, container))

    # elements
    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs, void_closes=False)
        self.handle_endtag(tag)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]], void_closes: bool = True) -> None:
        self._end_data()
        values: dict[str, str | list[str]] = {}
        for key, value in attrs:
            values[key] = "" if value is None else value
        for key in (*_LIST_ATTRIBUTES["*"], *_LIST_ATTRIBUTES.get(tag, ())):
            if isinstance(values.get(key), str):
                values[key] = re.findall(r"\S+", values[key])  # type: ignore[arg-type]
        element = Tag(tag, values)
        self.stack[-1].append(element)
        self.stack.append(element)
        self.open_counts[tag] += 1
        if tag in VOID_TAGS and void_closes:
            self._end_data()
            self._pop_to(tag)
            self.closed_voids.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.closed_voids:
            self.closed_voids.remove(tag)
            return
        self._end_data()
        self._pop_to(tag)

    def _pop_to(self, name: str) -> None:
        for _ in range(len(self.stack) - 1, 0, -1):
            if not self.open_counts.get(name):
                return
            popped = self.stack.pop()
            self.open_counts[popped.name] -= 1
            if popped.name == name:
                return

    def finish(self) -> Tag:
        self.close()
        self._end_data()
        return self.root


def parse(markup: str) -> Tag:
    """The document tree of `markup` (a `[document]` root whose children are the top-level nodes)."""
    builder = _Builder()
    builder.feed(markup)
    return builder.finish()
