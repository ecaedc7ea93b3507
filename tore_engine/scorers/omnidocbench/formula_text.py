"""Formula strings as the official OmniDocBench v1.6 evaluator compares them (`normalized_formula`):
delimiters, `\\tag{...}` and `\\phantom{...}`, spacing, alignment, environment and font commands
removed, then brace groups dropped by the evaluator's repeated rewriting, lower case, no white space.

Every step gives the evaluator's result but runs in linear time (B14 of issue 20): the evaluator
removes one level of braces per pass over the whole string and rescans from the start after each
removed command, which takes minutes on a formula nested 60,000 braces deep; here balanced groups are
found from precomputed brace depths and the brace rewriting touches only what the previous step
changed.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable

from tore_engine.scorers.omnidocbench.latex_text import replace_circled

DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_FILTERED = (
    "\\mathbf", "\\mathrm", "\\mathnormal", "\\mathit", "\\mathbb", "\\mathcal", "\\mathscr", "\\mathfrak", "\\mathsf",
    "\\mathtt", "\\textbf", "\\text", "\\boldmath", "\\boldsymbol", "\\operatorname", "\\bm", "\\symbfit", "\\mathbfcal",
    "\\symbf", "\\scriptscriptstyle", "\\notag", "\\setlength", "\\coloneqq", "\\space", "\\thickspace", "\\thinspace",
    "\\medspace", "\\nobreakspace", "\\negmedspace", "\\quad", "\\qquad", "\\enspace", "\\substackw", " ", "$$",
    "\\left", "\\right", "\\displaystyle", "\\text",
)
_GROUP_TOKENS = ("=", "+", "-", "\\\\", "^", "_", "[", "]", "(", ")")
_SIMPLE_GROUP = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+-")
_MAX_TOKEN_GROUP = 160


def strip_delimiters(text: str) -> str:
    """The text inside any number of nested `$$`, `\\[`, `\\(`, `$` pairs (stripped at each level)."""
    low, high = _strip_range(text, 0, len(text))
    changed = True
    while high > low and changed:
        changed = False
        for left, right in DELIMITERS:
            if high - low >= len(left) + len(right) and text.startswith(left, low, high) and text.endswith(right, low, high):
                low, high = _strip_range(text, low + len(left), high - len(right))
                changed = True
                break
    return text[low:high]


def _strip_range(text: str, low: int, high: int) -> tuple[int, int]:
    while low < high and text[low].isspace():
        low += 1
    while high > low and text[high - 1].isspace():
        high -= 1
    return low, high


def _group_ends(text: str) -> list[int]:
    """For each position p, the index just after the `}` that closes a group whose body starts at
    p (counting every brace, as the evaluator does), or -1 when the text ends first."""
    balance = [0] * (len(text) + 1)
    for index, char in enumerate(text):
        balance[index + 1] = balance[index] + (char == "{") - (char == "}")
    ends = [-1] * (len(text) + 1)
    waiting: list[int] = []  # positions whose closing brace is not found yet, balances increasing
    for index in range(len(text) + 1):
        while waiting and balance[waiting[-1]] - 1 == balance[index]:
            ends[waiting.pop()] = index
        waiting.append(index)
    return ends


def strip_tags(text: str) -> str:
    """`\\tag{...}` and `\\tag*{...}` removed with their balanced group (a `\\tag` whose group never
    closes loses only the command), then `\\notag` and `\\nonumber`."""
    ends = _group_ends(text)
    out, cursor, command = [], 0, "\\tag"
    while True:
        start = text.find(command, cursor)
        if start < 0:
            break
        index = start + len(command)
        if index < len(text) and text[index].isalpha():
            out.append(text[cursor:index])
            cursor = index
            continue
        while index < len(text) and text[index].isspace():
            index += 1
        if index < len(text) and text[index] == "*":
            index += 1
            while index < len(text) and text[index].isspace():
                index += 1
        out.append(text[cursor:start])
        if index >= len(text) or text[index] != "{":
            out.append(command)
            cursor = start + len(command)
        elif ends[index + 1] >= 0:
            cursor = ends[index + 1]
        else:
            cursor = start + len(command)
    out.append(text[cursor:])
    return "".join(out).replace("\\notag", "").replace("\\nonumber", "")


def strip_command_group(text: str, command: str) -> str:
    """Each `command{...}` removed with its balanced group, looking again where a removal joined two
    pieces into a new `command{`; when a group never closes, only that command is removed and the
    rest is kept as it is (the evaluator's `_strip_command_with_balanced_group`)."""
    token = command + "{"
    ends = _group_ends(text)
    out: list[str] = []  # characters kept so far
    index = 0
    while index < len(text):
        out.append(text[index])
        index += 1
        if len(out) >= len(token) and out[-1] == "{" and "".join(out[-len(token):]) == token:
            end = ends[index]
            if end >= 0:
                del out[-len(token):]
                index = end
            else:
                del out[-len(token):-1]
                out.append(text[index:])
                break
    return "".join(out)


def _remove_lazy(text: str, opening: str, closing: str = "}") -> str:
    """`re.sub(re.escape(opening) + '.*?' + closing, '', text)` without DOTALL, in linear time."""
    out, cursor, search, none = [], 0, 0, len(text)
    close_at = newline_at = -1
    while True:
        start = text.find(opening, search)
        if start < 0:
            break
        body = start + len(opening)
        if close_at < body:
            close_at = _find_or(text, closing, body, none)
        if newline_at < body:
            newline_at = _find_or(text, "\n", body, none)
        if close_at < none and close_at < newline_at:
            out.append(text[cursor:start])
            cursor = search = close_at + len(closing)
        else:
            search = start + 1
    out.append(text[cursor:])
    return "".join(out)


def _find_or(text: str, needle: str, start: int, none: int) -> int:
    found = text.find(needle, start)
    return none if found < 0 else found


def _first_bracketed(text: str) -> str | None:
    """The evaluator's first `\\[...\\]` or `\\(...\\)` on one line (a closing not preceded by a
    backslash, at least one character inside), stripped; None when there is none."""
    best: tuple[int, str] | None = None
    for opening, closing in (("\\[", "\\]"), ("\\(", "\\)")):
        found = _first_pair(text, opening, closing)
        if found is not None and (best is None or found[0] < best[0]):
            best = found
    return None if best is None else best[1].strip()


def _first_pair(text: str, opening: str, closing: str) -> tuple[int, str] | None:
    """The first `opening` followed on its line by a `closing` not preceded by a backslash, with
    at least one character between; the earliest such opening wins, with its nearest closing."""
    line_start = 0
    while line_start <= len(text):
        line_end = _find_or(text, "\n", line_start, len(text))
        start = text.find(opening, line_start, line_end)
        if start >= 0:
            body = start + len(opening)
            close = text.find(closing, body + 1, line_end)
            while close >= 0 and text[close - 1] == "\\":
                close = text.find(closing, close + 1, line_end)
            if close >= 0:
                return start, text[body:close]
        line_start = line_end + 1
    return None


def normalize_formula(text: str) -> str:
    """The evaluator's `normalized_formula`."""
    text = strip_tags(strip_delimiters(replace_circled(text)))
    inner = _first_bracketed(text)
    if inner is not None:
        text = inner
    text = strip_command_group(text, "\\phantom")
    text = re.sub(r"\\[!,;:]", "", text)
    text = re.sub(r"(?<!\\)&", "", text)
    for old, new in (("\\mid", "|"), ("\\vert", "|"), ("\\{", ""), ("\\}", ""), ("~", "")):
        text = text.replace(old, new)
    for opening in ("\\hspace{", "\\begin{", "\\end{"):
        text = _remove_lazy(text, opening)
    text = _remove_lazy(text, "\\arraycolsep")
    text = re.sub(r"\{[lcr| ]+\}", "", text).strip(".")
    for filtered in _FILTERED:
        text = text.replace(filtered, "")
    return re.sub(r"\s+", "", rewrite_braces(text).lower())


# --- the evaluator's repeated brace rewriting, in linear time --------------------------------------

class _Chunk:
    """A run of text between braces, kept as pieces so that joining runs stays cheap."""

    __slots__ = ("pieces", "length", "simple", "token", "first", "last")

    def __init__(self, text: str) -> None:
        self.pieces = deque([text])
        self.length = len(text)
        self.simple = all(char in _SIMPLE_GROUP for char in text)
        self.token = any(token in text for token in _GROUP_TOKENS)
        self.first, self.last = text[:1], text[-1:]

    def join(self, other: _Chunk) -> None:
        self.token = self.token or other.token or (self.last == "\\" and other.first == "\\")
        if len(self.pieces) >= len(other.pieces):
            self.pieces.extend(other.pieces)
        else:
            other.pieces.extendleft(reversed(self.pieces))
            self.pieces = other.pieces
        self.length += other.length
        self.simple = self.simple and other.simple
        self.first, self.last = self.first or other.first, other.last or self.last


class _Node:
    __slots__ = ("value", "prev", "next", "alive")

    def __init__(self, value: str | _Chunk) -> None:
        self.value = value  # "{", "}" or a chunk
        self.prev: _Node | None = None
        self.next: _Node | None = None
        self.alive = True


class _BraceText:
    """The text as a linked list of braces and chunks, with the nodes each rule must look at again."""

    RULES = ("simple", "empty", "open", "close", "token")

    def __init__(self, text: str) -> None:
        self.head = _Node("")
        tail = self.head
        for piece in re.findall(r"[{}]|[^{}]+", text):
            added = _Node(piece if piece in "{}" else _Chunk(piece))
            tail.next, added.prev, tail = added, tail, added
        self.dirty: dict[str, set[_Node]] = {rule: set() for rule in self.RULES}
        node = self.head.next
        while node is not None:
            self._touch(node)
            node = node.next

    def _touch(self, node: _Node | None) -> None:
        if node is not None and node is not self.head:
            for marks in self.dirty.values():
                marks.add(node)

    def _remove(self, node: _Node) -> None:
        assert node.prev is not None  # only the head, never removed, has none
        node.alive = False
        node.prev.next = node.next
        if node.next is not None:
            node.next.prev = node.prev
        self._touch(node.prev)
        self._touch(node.next)

    def _merge_chunks(self, node: _Node) -> None:
        """Join `node` (a chunk) with chunk neighbours."""
        for neighbour in (node.prev, node.next):
            if neighbour is None or neighbour is self.head:
                continue
            chunk, other = node.value, neighbour.value
            if not isinstance(other, _Chunk):
                continue
            assert isinstance(chunk, _Chunk)
            if neighbour is node.prev:
                other.join(chunk)
                self._remove(node)
                node = neighbour
            else:
                chunk.join(other)
                self._remove(neighbour)
        self._touch(node)

    def _groups(self, rule: str, keep: Callable[[_Chunk], bool]) -> list[_Node]:
        """Chunks enclosed by `{` and `}` that `keep` accepts, among the nodes marked for `rule`."""
        found = {}
        for node in self.dirty[rule]:
            for middle in (node.prev, node, node.next):
                if (middle is not None and middle.alive and isinstance(middle.value, _Chunk)
                        and middle.prev is not None and middle.prev.value == "{"
                        and middle.next is not None and middle.next.value == "}" and keep(middle.value)):
                    found[id(middle)] = middle
        self.dirty[rule].clear()
        return list(found.values())

    def _unwrap(self, groups: list[_Node]) -> bool:
        for middle in groups:
            opening, closing = middle.prev, middle.next
            assert opening is not None and closing is not None  # `_groups` found them around `middle`
            self._remove(opening)
            self._remove(closing)
            self._merge_chunks(middle)
        return bool(groups)

    def _drop_empty_pairs(self) -> bool:
        pairs: dict[int, _Node] = {}
        for node in self.dirty["empty"]:
            for first in (node.prev, node):
                if first is not None and first.alive and first.value == "{" and first.next is not None and first.next.value == "}":
                    pairs[id(first)] = first
        self.dirty["empty"].clear()
        for first in pairs.values():
            second, before = first.next, first.prev
            assert second is not None and before is not None  # its `}`, and at least the head before it
            self._remove(first)
            self._remove(second)
            if isinstance(before.value, _Chunk) and before is not self.head:
                self._merge_chunks(before)
        return bool(pairs)

    def _collapse(self, rule: str, brace: str) -> bool:
        runs, seen = [], set()
        for node in self.dirty[rule]:
            if not node.alive or node.value != brace or id(node) in seen:
                continue
            seen.add(id(node))
            while node.prev is not None and node.prev.value == brace and id(node.prev) not in seen:
                node = node.prev
                seen.add(id(node))
            if node.prev is not None and node.prev.value == brace:
                continue  # the run's start was reached from another node
            forward = node.next
            while forward is not None and forward.value == brace and id(forward) not in seen:
                seen.add(id(forward))
                forward = forward.next
            if node.next is not None and node.next.value == brace:
                runs.append(node)
        self.dirty[rule].clear()
        for first in runs:
            while first.next is not None and first.next.value == brace:
                self._remove(first.next)
        return bool(runs)

    def one_pass(self) -> bool:
        """One pass of the evaluator's loop; whether anything changed."""
        changed = self._unwrap(self._groups("simple", lambda chunk: chunk.simple))
        changed |= self._drop_empty_pairs()
        changed |= self._collapse("open", "{")
        changed |= self._collapse("close", "}")
        token_groups = self._groups("token", lambda chunk: chunk.token and 1 <= chunk.length <= _MAX_TOKEN_GROUP)
        return self._unwrap(token_groups) or changed

    def text(self) -> str:
        parts, node = [], self.head.next
        while node is not None:
            parts.append("".join(node.value.pieces) if isinstance(node.value, _Chunk) else node.value)
            node = node.next
        return "".join(parts)


def rewrite_braces(text: str) -> str:
    """The evaluator's loop until nothing changes: `{w}` with w of letters, digits, `.+-` unwrapped,
    `{}` removed, runs of `{` and of `}` collapsed, `{x}` with 1-160 characters holding one of
    `= + - \\\\ ^ _ [ ] ( )` unwrapped."""
    braces = _BraceText(text)
    while braces.one_pass():
        pass
    return braces.text()
