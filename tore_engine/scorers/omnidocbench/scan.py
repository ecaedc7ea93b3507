"""Linear-time scans that give what the official OmniDocBench evaluator's lazy regular expressions
give (`opening(.*?)closing` and its relatives), for pages whose hostile Markdown would make the
regular expressions quadratic (issue 20, B14): each scan moves forward and remembers what it found."""

from __future__ import annotations


class Finder:
    """The first occurrence of `needle` at or after a position, for positions that mostly grow (each
    answer is reused while it stays ahead); with `closed_by`, only an occurrence followed somewhere
    by that character counts (`<table` needs a `>` to be a tag)."""

    def __init__(self, text: str, needle: str, closed_by: str = "") -> None:
        self.text, self.needle = text, needle
        self.last_close = text.rfind(closed_by) if closed_by else len(text)
        self.start, self.found = len(text) + 1, -1  # nothing searched yet

    def at(self, position: int) -> int:
        if not (self.start <= position and (self.found < 0 or self.found >= position)):
            self.start, self.found = position, self.text.find(self.needle, position)
        if self.found >= 0 and self.last_close <= self.found + len(self.needle) - 1:
            return -1
        return self.found


def lazy_pairs(text: str, pairs: tuple[tuple[str, str], ...], dotall: bool = True) -> list[tuple[int, int]]:
    """The spans `re.finditer` gives for the alternation of `opening(.*?)closing` over `pairs`
    (with DOTALL, or else a closing only on the opening's line), in linear time: at each position the
    first pair whose opening is there and whose closing follows it; the nearest closing ends the span."""
    cache: list[tuple[int, int, int]] = [(len(text) + 1, -1, -1)] * len(pairs)  # (asked from, start, end)
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        best = None
        for index, (opening, closing) in enumerate(pairs):
            asked, start, end = cache[index]
            if not (asked <= position and (start < 0 or start >= position)):
                start, end = _first_pair(text, opening, closing, position, dotall)
                cache[index] = (position, start, end)
            if start >= 0 and (best is None or start < best[0]):
                best = (start, end)
        if best is None:
            return spans
        spans.append(best)
        position = best[1]


def _first_pair(text: str, opening: str, closing: str, position: int, dotall: bool) -> tuple[int, int]:
    """The first `opening` at or after `position` that has a `closing` after it (on its line unless
    `dotall`), and where that closing ends; (-1, -1) when there is none."""
    while (start := text.find(opening, position)) >= 0:
        limit = len(text) if dotall else _line_end(text, start)
        end = text.find(closing, start + len(opening), limit)
        if end >= 0:
            return start, end + len(closing)
        if dotall:
            break
        position = limit + 1
    return -1, -1


def image_spans(text: str) -> list[tuple[int, int, str]]:
    """What `!\\[(.*?)\\]\\((.*?)\\)` finds (start, end, alt text), in linear time: from a `![`, the
    first `](` after it on its line and the first `)` after that; when a line has none, no later
    `![` on that line matches either."""
    found, position = [], 0
    while (start := text.find("![", position)) >= 0:
        line_end = _line_end(text, start)
        middle = text.find("](", start + 2, line_end)
        end = text.find(")", middle + 2, line_end) if middle >= 0 else -1
        if end < 0:
            position = line_end + 1
            continue
        found.append((start, end + 1, text[start + 2:middle]))
        position = end + 1
    return found


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end < 0 else end


def blank(content: str, spans: list[tuple[int, int]]) -> str:
    """`content` with every span replaced by as many spaces (in one pass: taking many pieces from a
    long page stays linear)."""
    pieces, cursor = [], 0
    for start, end in sorted(spans):
        start = max(start, cursor)
        if end > start:
            pieces += [content[cursor:start], " " * (end - start)]
            cursor = end
    pieces.append(content[cursor:])
    return "".join(pieces)




def unwrap_pairs(text: str, opening: str, closing: str, dotall: bool = True, padding: str = "") -> str:
    """`re.sub(opening + '(.*?)' + closing, padding + r'\\1' + padding, text)` (escaped delimiters)."""
    pieces, cursor = [], 0
    for start, end in lazy_pairs(text, ((opening, closing),), dotall):
        pieces += [text[cursor:start], padding, text[start + len(opening):end - len(closing)], padding]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def unwrap_command(text: str, command: str, star: bool, spaced: bool, space_before: bool = False) -> str:
    """`re.sub` of `command` (then `\\*?` when `star`, `\\s*` when `space_before`), `\\{`, the group and
    `\\}` by the group: with `spaced`, `\\s*` may stand around the group and the group may span lines
    (DOTALL); without, the group ends at the first `}` of its line."""
    pieces, cursor, position = [], 0, 0
    while (start := text.find(command, position)) >= 0:
        brace = start + len(command)
        if star and text.startswith("*", brace):
            brace += 1
        if space_before:
            brace = _skip_spaces(text, brace)
        if not text.startswith("{", brace):
            position = start + 1
            continue
        body = _skip_spaces(text, brace + 1) if spaced else brace + 1
        close = text.find("}", body, len(text) if spaced else _line_end(text, body))
        if close < 0:
            if spaced:
                break  # no closing brace after this one: none after any later one either
            position = _line_end(text, body) + 1
            continue
        inner_end = close
        while spaced and inner_end > body and text[inner_end - 1] in _SPACES:
            inner_end -= 1
        pieces += [text[cursor:start], text[body:inner_end]]
        cursor = position = close + 1
    pieces.append(text[cursor:])
    return "".join(pieces)


_SPACES = frozenset(" \t\n\r\f\v")


def _skip_spaces(text: str, index: int) -> int:
    while index < len(text) and text[index] in _SPACES:
        index += 1
    return index
