"""Errors and warnings about the user's input.

An `InputError` becomes one paragraph on stderr and exit code 2 in the CLI, and an error box in
the app; it never surfaces as a traceback. An `InputWarning` is something the evaluation went on
with but must not hide (a clipped box, a missing page): report.json lists them. In a notebook,
`warnings_summary` sums them up in one `ToreWarning` (`tore.load`, `tore.evaluate`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tore_engine.core.text_safety import terminal_text


class InputError(ValueError):
    """Bad input: names the file, the page id, the box index and what is wrong. A `ValueError`,
    as Python's own libraries raise for a bad value."""

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        page: str | None = None,
        box: int | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.page = page
        self.box = box
        super().__init__(self.paragraph())

    def paragraph(self) -> str:
        where = []
        if self.file is not None:
            where.append(f"file {self.file}")
        if self.page is not None:
            where.append(f"page {self.page!r}")
        if self.box is not None:
            where.append(f"box {self.box}")
        prefix = ", ".join(where)
        return terminal_text(f"{prefix}: {self.problem}" if prefix else self.problem)  # one line, quoting input safely

    def __reduce__(self) -> tuple[Callable[..., InputError], tuple[object, ...]]:
        """Keep every field when the error crosses a process boundary (a worker's failure)."""
        return _rebuild_input_error, (self.problem, self.file, self.page, self.box)

    def located(self, *, file: str | None = None, page: str | None = None) -> "InputError":
        """The same error with a file or page filled in by a caller that knows it."""
        return InputError(
            self.problem,
            file=self.file if self.file is not None else file,
            page=self.page if self.page is not None else page,
            box=self.box,
        )


def _rebuild_input_error(problem: str, file: str | None, page: str | None, box: int | None) -> InputError:
    return InputError(problem, file=file, page=page, box=box)


@dataclass(frozen=True, slots=True)
class InputWarning:
    """One event the report lists under `warnings` (docs/cli.md#reportjson)."""

    page: str | None  # None for an event of the whole evaluation (an unused label-map key)
    box: int | None
    side: str | None  # "reference" or "prediction"; None when the event concerns neither
    message: str

    def to_json(self) -> dict[str, str | int | None]:
        return warning_record(self.page, self.box, self.side, self.message)


def warning_record(page: str | None, box: int | None, side: str | None, message: str) -> dict[str, str | int | None]:
    """A warning as report.json lists it (`InputWarning.to_json`), from its fields."""
    return {"page": page, "box": box, "side": side, "message": message}


class ToreWarning(UserWarning):
    """The one Python warning a notebook gets for a load or an evaluation that had input warnings:
    how many of each kind; the records themselves are in its `.warnings`."""


# The kinds of the events the readers and the engine report, by how their message starts:
# (pattern, one, several). A message none of them matches counts as "other".
WARNING_KINDS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"box clipped at the edge"), "box clipped", "boxes clipped"),
    (re.compile(r"box paints no pixel"), "box painting no pixel", "boxes painting no pixel"),
    (re.compile(r"no prediction for this page"), "page without prediction", "pages without prediction"),
    (re.compile(r"prediction (page|file) (has no|with no|without a) reference"), "prediction page without reference",
     "prediction pages without reference"),
    (re.compile(r"\d+ boxes scored below"), "page with boxes below the minimum score dropped",
     "pages with boxes below the minimum score dropped"),
    (re.compile(r"label map key"), "unused label-map key", "unused label-map keys"),
    (re.compile(r"the page image it names is outside"), "page image outside its folder", "page images outside their folder"),
    (re.compile(r"prediction on page \d+, but document"), "prediction past its document's pages",
     "predictions past their document's pages"),
    (re.compile(r"docling-core: "), "docling-core message", "docling-core messages"),
    (re.compile(r"[\d,]+ of [\d,]+ prediction boxes have no score"), "mAP note on boxes without a score", "mAP notes on boxes without a score"),
)


def warning_kind(warning: InputWarning) -> tuple[str, str]:
    """The kind of a warning, as (one, several): "box clipped", "boxes clipped"."""
    for pattern, one, several in WARNING_KINDS:
        if pattern.match(warning.message):
            return one, several
    return "other", "other"


def warnings_summary(warnings: Sequence[InputWarning], where: str) -> str:
    """One line for a notebook: how many warnings of each kind, most frequent first, and where to
    read them: "14 input warnings (13 boxes clipped, 1 page without prediction): see ev.warnings"."""
    kinds = Counter(warning_kind(warning) for warning in warnings)
    counts = ", ".join(f"{count:,} {one if count == 1 else several}" for (one, several), count in kinds.most_common())
    total = len(warnings)
    return f"{total:,} input warning{'' if total == 1 else 's'} ({counts}): see {where}"
