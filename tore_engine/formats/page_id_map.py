"""`--page-id-map`: how a prediction's page ids become the reference's, when two tools name the same
pages differently (`doc_page_00000` for `page_00000`), and the rule to suggest when no id matches.

A map is a table (a JSON object or a two-column CSV file, `prediction,reference`), a rule
(`strip-prefix:TEXT`, `strip-suffix:TEXT`, `add-prefix:TEXT`, `add-suffix:TEXT`), or one of each:
the table maps the ids it lists, the rule every other id. Everything in it is untrusted input:
strings only, valid Unicode, no empty id, no key twice, a bounded file (`read_json`'s limit).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import unicode_problem
from tore_engine.io.files import read_text
from tore_engine.io.json import SchemaError, read_json

RULES = ("strip-prefix", "strip-suffix", "add-prefix", "add-suffix")
RULE_PATTERN = re.compile(r"^(strip-prefix|strip-suffix|add-prefix|add-suffix):(.*)$", re.DOTALL)  # an empty text is refused by `PageIdMap`
CSV_HEADER = ["prediction", "reference"]
IDS_SHOWN = 3  # ids of each side an error names
ID_SHOWN_CHARACTERS = 60  # of one id, in a message
RULE_CANDIDATES = 20  # rules tried when suggesting one (the longest affixes first)
SAMPLED_IDS = 5  # prediction ids the suggested rule is looked for from
OPTION = "--page-id-map"


@dataclass(frozen=True)
class PageIdMap:
    """Prediction page id -> reference page id: `table` first, then `rule` ((kind, text), or None)."""

    table: tuple[tuple[str, str], ...] = ()
    rule: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        for prediction_id, reference_id in self.table:
            _check_id(prediction_id, "a page id map's key")
            _check_id(reference_id, "a page id map's value")
        if self.rule is not None:
            kind, text = self.rule
            if kind not in RULES:
                raise InputError(f"unknown page id rule {kind!r}; use one of {', '.join(RULES)}")
            _check_id(text, f"the text of the page id rule {kind}")

    def mapped(self, page_ids: Sequence[str]) -> list[str]:
        """Each id as the reference names it: through the table if it lists the id, else the rule."""
        lookup = dict(self.table)
        return [lookup[page_id] if page_id in lookup else apply_rule(self.rule, page_id) if self.rule else page_id for page_id in page_ids]

    def unused_keys(self, page_ids: Iterable[str]) -> list[InputWarning]:
        """A warning for every table key that is no prediction page id: most likely a typo, which
        would otherwise leave a page unscored without a word."""
        known = set(page_ids)
        return [InputWarning(None, None, "prediction", f"page id map key {key!r} is no prediction page id; it had no effect")
                for key, _ in self.table if key not in known]

    def __str__(self) -> str:
        parts = ([f"a table of {len(self.table):,} ids"] if self.table else []) + ([rule_text(self.rule)] if self.rule else [])
        return " and ".join(parts) or "no mapping"


def rule_text(rule: tuple[str, str]) -> str:
    """The rule as the option takes it: `strip-prefix:doc_`."""
    return f"{rule[0]}:{rule[1]}"


def apply_rule(rule: tuple[str, str], page_id: str) -> str:
    """One id through a rule; an id without the prefix or suffix to strip stays as it is."""
    kind, text = rule
    if kind == "strip-prefix":
        return page_id[len(text):] if page_id.startswith(text) else page_id
    if kind == "strip-suffix":
        return page_id[: -len(text)] if page_id.endswith(text) else page_id
    return text + page_id if kind == "add-prefix" else page_id + text


def _check_id(value: object, what: str) -> None:
    if not isinstance(value, str) or not value:
        raise InputError(f"{what} must be a non-empty string, got {shown_id(value)}")
    if (problem := unicode_problem(value)) is not None:
        raise InputError(f"{what}: {problem}")


def shown_id(page_id: object) -> str:
    """A page id quoted for a message, cut in the middle when long (a hostile id may be megabytes)."""
    text = repr(page_id)
    if len(text) <= ID_SHOWN_CHARACTERS:
        return text
    half = (ID_SHOWN_CHARACTERS - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


def shown_ids(page_ids: Sequence[str]) -> str:
    listed = ", ".join(shown_id(page_id) for page_id in page_ids[:IDS_SHOWN])
    return listed + (f" ... ({len(page_ids):,} pages)" if len(page_ids) > IDS_SHOWN else "")


def _rule(text: str) -> tuple[str, str] | None:
    match = RULE_PATTERN.match(text)
    return None if match is None else (match.group(1), match.group(2))


def read_table(path: str | Path) -> tuple[tuple[str, str], ...]:
    """A table file: a JSON object `{"prediction id": "reference id"}`, or a CSV file whose header
    is `prediction,reference` (any other extension is read as JSON)."""
    path = Path(path)
    if path.suffix.lower() != ".csv":
        try:
            data = read_json(path, dict[str, str])
        except SchemaError as error:
            raise InputError(f'a page id map must be a JSON object of strings {{"prediction id": "reference id"}}: {error.problem}',
                             file=str(path)) from None
        return _checked_table(data.items(), str(path))
    rows = list(csv.reader(io.StringIO(read_text(path), newline="")))
    if not rows or [cell.strip() for cell in rows[0]] != CSV_HEADER:
        raise InputError(f"a page id map in CSV starts with the header line {','.join(CSV_HEADER)}", file=str(path))
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != 2:
            raise InputError(f"line {line}: a page id map's line holds two ids (prediction, reference), got {len(row)} fields", file=str(path))
    return _checked_table(((row[0], row[1]) for row in rows[1:]), str(path))


def _checked_table(pairs: Iterable[tuple[str, str]], source: str) -> tuple[tuple[str, str], ...]:
    table: dict[str, str] = {}
    for key, value in pairs:
        if key in table:
            raise InputError(f"the prediction page id {shown_id(key)} is mapped twice", file=source)
        table[key] = value
    try:
        return PageIdMap(tuple(table.items())).table
    except InputError as error:
        raise error.located(file=source) from None


PageIdMapSpec = PageIdMap | Mapping[str, str] | str | Path  # what `page_id_map(...)` takes, or a sequence of them


def page_id_map(spec: PageIdMapSpec | Sequence[PageIdMapSpec] | None) -> PageIdMap | None:
    """A map from what a user gives: None, a `PageIdMap`, a dict (a table), a rule
    (`"strip-prefix:doc_"`), a table file's path, or a list of at most one table and one rule."""
    if spec is None or isinstance(spec, PageIdMap):
        return spec
    parts = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    table: tuple[tuple[str, str], ...] = ()
    rule: tuple[str, str] | None = None
    for part in parts:
        if isinstance(part, PageIdMap):
            table, rule = _one(table, part.table, "table"), _one(rule, part.rule, "rule")
        elif isinstance(part, Mapping):
            table = _one(table, _checked_table(part.items(), "the page id map"), "table")
        elif isinstance(part, str) and (parsed := _rule(part)) is not None:
            rule = _one(rule, parsed, "rule")
        elif isinstance(part, (str, Path)):
            table = _one(table, read_table(part), "table")
        else:
            raise InputError(f"a page id map is a rule such as 'strip-prefix:doc_', a table file (JSON or CSV) or a dict, got {type(part).__name__}")
    return PageIdMap(table, rule) if table or rule else None


def _one(before, new, what: str):
    if before and new:
        raise InputError(f"a page id map takes one {what} at most (a table and a rule may go together)")
    return new or before


def suggested_rule(reference_ids: Sequence[str], prediction_ids: Sequence[str]) -> tuple[tuple[str, str], int] | None:
    """The prefix or suffix rule that maps the most prediction ids onto reference ids, and how many,
    or None: where one side's ids are the other's with a prefix or suffix (`doc_page_00000` for
    `page_00000`). Looked for from the first few prediction ids against every reference id."""
    candidates: set[tuple[str, str]] = set()
    for page_id in prediction_ids[:SAMPLED_IDS]:
        for reference_id in reference_ids:
            if reference_id == page_id:
                continue
            if page_id.endswith(reference_id):
                candidates.add(("strip-prefix", page_id[: len(page_id) - len(reference_id)]))
            if page_id.startswith(reference_id):
                candidates.add(("strip-suffix", page_id[len(reference_id):]))
            if reference_id.endswith(page_id):
                candidates.add(("add-prefix", reference_id[: len(reference_id) - len(page_id)]))
            if reference_id.startswith(page_id):
                candidates.add(("add-suffix", reference_id[len(page_id):]))
    known = set(reference_ids)
    tried = sorted(candidates, key=lambda rule: (-len(rule[1]), rule))[:RULE_CANDIDATES]
    scored = [(sum(apply_rule(rule, page_id) in known for page_id in prediction_ids), rule) for rule in tried]
    best = max(scored, key=lambda item: (item[0], len(item[1][1])), default=None)
    return None if best is None or best[0] == 0 else (best[1], best[0])


def unmatched_ids_error(reference_ids: Sequence[str], prediction_ids: Sequence[str], id_map: PageIdMap | None) -> InputError:
    """Why nothing can be scored: no prediction page id is a reference page id (after `id_map`),
    with a few ids of each side and the rule that would map them, when there is one."""
    mapped = id_map.mapped(prediction_ids) if id_map is not None else list(prediction_ids)
    after = f" (after the page id map, {id_map})" if id_map is not None else ""
    text = (f"no prediction page id matches a reference page id{after}, so every page would score 0: the reference's ids are "
            f"{shown_ids(reference_ids)}; the prediction's {shown_ids(mapped)}.")
    suggestion = suggested_rule(reference_ids, mapped)
    if suggestion is not None:
        rule, count = suggestion
        text += (f" The prediction's ids are the reference's with {_affix_words(rule)} ({count:,} of {len(prediction_ids):,} map so): "
                 f"evaluate with {OPTION} {rule_text(rule)}.")
    else:
        text += f" Map them with {OPTION} (a rule such as strip-prefix:TEXT, or a table FILE: a JSON object or a CSV file prediction,reference)."
    return InputError(text)


def _affix_words(rule: tuple[str, str]) -> str:
    kind, text = rule
    where = "prefix" if kind.endswith("prefix") else "suffix"
    return f"the {where} {shown_id(text)}" if kind.startswith("strip") else f"the reference's {where} {shown_id(text)} missing"
