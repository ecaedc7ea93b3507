"""Two rules for names from the input (class names, page ids, file and model names) written where a
program other than ours interprets text: a spreadsheet reading a CSV cell, and a terminal printing a
line. Each rule is one function, used by every writer of its kind.

- `spreadsheet_text`: OWASP's rule against CSV (formula) injection,
  https://owasp.org/www-community/attacks/CSV_Injection : a cell that starts with `=`, `+`, `-`, `@`,
  tab or carriage return is read as a formula, so such a cell gets a leading single quote and is read
  as text. OWASP adds that a separator inside a cell could start a new cell there (`;` separates cells
  in many locales, and Python's csv module quotes only a cell holding a `,`, a quote or a line break),
  so `write_csv` puts every text cell between double quotes.
- `terminal_text`: control characters written as visible escapes, so that a name cannot move the
  cursor, erase or recolour what was printed, end a line early, or reverse the order of what follows.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import TextIO

# OWASP's six, NUL (OWASP ASVS 1.2.10) and line feed (a line break like carriage return), and the
# full-width forms of the four signs, which spreadsheets in East Asian locales may take for them.
FORMULA_STARTS = frozenset("=+-@\t\r\n\0" "\uff1d\uff0b\uff0d\uff20")
FORMULA_GUARD = "'"  # the prefix that makes a spreadsheet read the cell as text (not shown by Excel)

# What a terminal acts on instead of showing: C0 controls (ESC starts cursor moves and erasures),
# DEL, C1 controls (U+009B is a one-character CSI), Unicode's line and paragraph separators, and its
# Bidi_Control characters (U+202E reverses the order in which the rest of the line is shown).
TERMINAL_CONTROLS = (
    *range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029,
    0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
)
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def spreadsheet_text(value: str) -> str:
    """`value` as a CSV text cell that no spreadsheet reads as a formula: prefixed with a single quote
    when it starts, after any leading white space (which some importers trim), with a sign of
    `FORMULA_STARTS`; unchanged otherwise. Only text cells pass here: a number such as -2.5 is
    written as a number."""
    formula_like = value[:1] in FORMULA_STARTS or value.lstrip()[:1] in FORMULA_STARTS
    return FORMULA_GUARD + value if formula_like else value


def write_csv(handle: TextIO, rows: Iterable[Iterable[str | int | float]]) -> None:
    """Rows as CSV that a spreadsheet reads as data: each text cell through `spreadsheet_text` and
    between double quotes (so that no separator inside it starts a cell), each number bare, as `str`
    writes it (a float's shortest repr: the exact value)."""
    writer = csv.writer(handle, quoting=csv.QUOTE_NONNUMERIC)
    writer.writerows([spreadsheet_text(cell) if isinstance(cell, str) else cell for cell in row] for row in rows)


def write_csv_columns(handle: TextIO, header: Sequence[str], blocks: Iterable[Sequence[Sequence[str | int | float | None]]]) -> None:
    """`write_csv` of a header and the rows of blocks of equally long columns (one after the
    other), the same bytes: only a column holding text goes through `spreadsheet_text`, cell by
    cell, and the rest are written as they are (pages.csv at 100,000 pages: median 1.13 -> 0.98 s,
    benchmarks/RESULTS.md). A block at a time: its cells as Python objects are all it holds."""
    write_csv(handle, [header])
    writer = csv.writer(handle, quoting=csv.QUOTE_NONNUMERIC)
    for columns in blocks:
        safe = [[spreadsheet_text(cell) if isinstance(cell, str) else cell for cell in column] if str in set(map(type, column)) else column
                for column in columns]
        writer.writerows(zip(*safe))


def _escape(code: int) -> str:
    character = chr(code)
    if character in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[character]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TERMINAL_ESCAPES = {code: _escape(code) for code in TERMINAL_CONTROLS}


def terminal_text(value: str) -> str:
    """`value` with every character of `TERMINAL_CONTROLS` written as a visible escape (`\\x1b`,
    `\\n`, `\\u202e`): printed, it stays on one line and shows exactly what it holds. Error messages
    and every name a `tore` command prints go through it."""
    return value.translate(_TERMINAL_ESCAPES)
