"""Errors and warnings about the user's input.

An `InputError` becomes one paragraph on stderr and exit code 2 in the CLI, and an error box in
the app; it never surfaces as a traceback. A `InputWarning` is something the evaluation went on
with but must not hide (a clipped box, a missing page).
"""

from __future__ import annotations

from dataclasses import dataclass

from tore_engine.core.text_safety import terminal_text


class InputError(Exception):
    """Bad input: names the file, the page id, the box index and what is wrong."""

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

    def __reduce__(self):
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


@dataclass(frozen=True)
class InputWarning:
    """One event the report lists under `warnings` (formats.md section 4)."""

    page: str | None  # None for an event of the whole evaluation (an unused label-map key)
    box: int | None
    side: str | None  # "reference" or "prediction"; None when the event concerns neither
    message: str

    def to_json(self) -> dict:
        return {"page": self.page, "box": self.box, "side": self.side, "message": self.message}
