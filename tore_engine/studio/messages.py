"""Errors on the page: bad input as the engine's one clear paragraph, anything else as one short
sentence, never a traceback (which would show server paths and code to whoever opened the link).

The engine's paragraphs are written for the command line; `gui_text` rewords them for the app:
no server folder (the session's upload folder, the data root and the demo's folder are cut from
every path, and a file in the temporary folder is named alone) and no command-line flag (`--format X` becomes the sidebar's format picker, and so on).

`shown_errors` wraps the rendering of every page and fragment: an `InputError` becomes an error
box, any other exception a short message, with its traceback in the server's log.
Streamlit's own controls (`st.stop`, `st.rerun`, `st.switch_page`) are `BaseException`s and pass.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio.data_root import DEMO_DIR, data_root
from tore_engine.studio.uploads import hide_private_paths
from tore_engine.writers.summary import pairing_note

UNEXPECTED = "This view stopped on an unexpected error ({kind}); the server's log has the details. Other pages still work."
SIDEBAR = "(in the sidebar)"
# Command-line wording of the engine's messages -> the app's controls, in this order.
GUI_WORDS = (
    (re.compile(r"\s*\(tore evaluate [^)]*\)"), ""),  # a command line given as an example
    (re.compile(r"pass it with --images \S+"), f"choose it as the COCO images + categories file {SIDEBAR}"),
    (re.compile(r"--images \S+"), f"the COCO images + categories file {SIDEBAR}"),
    (re.compile(r"--page-images"), f"the page images {SIDEBAR}"),
    (re.compile(r"use --taxonomy (\w+)"), r'choose the taxonomy "\1" (under Evaluation in the sidebar)'),
    (re.compile(r"--label-map"), f"a label map {SIDEBAR}"),
    (re.compile(r"evaluate with --page-id-map (\S+?)\.?$"), r'type \1 under Evaluation, "Page ids of the predictions", in the sidebar'),
    (re.compile(r"--page-id-map \(a rule such as (\S+), or a table FILE[^)]*\)"),
     r'a rule such as \1 under Evaluation, "Page ids of the predictions", in the sidebar'),
    (re.compile(r"--page-id-map"), 'a rule under Evaluation, "Page ids of the predictions", in the sidebar'),
    (re.compile(r"use --format ([\w-]+)"), rf'choose the format "\1" {SIDEBAR}'),
    (re.compile(r"--format ([\w-]+)"), rf'the format "\1" {SIDEBAR}'),
    (re.compile(r"run without --scheduler"), "choose local processes under Compute"),
    (re.compile(r"not installed: (\S*pip install .+)$"), r"not installed on the server; whoever runs it adds it with: \1"),
)
_log = logging.getLogger(__name__)


def _without_folder(text: str, folder: object) -> str:
    return text.replace(f"{folder}/", "")


def gui_text(text: str) -> str:
    """An engine message as the app shows it: paths relative to the folders they were typed in
    (uploads, the data root, the demo), a file in the temporary folder (a simulated prediction,
    say) by its name alone, the command line's flags as the sidebar's controls."""
    text = _without_folder(_without_folder(hide_private_paths(text), DEMO_DIR), data_root())
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/(?:[^/\s]+/)*", "", text)
    for pattern, words in GUI_WORDS:
        text = pattern.sub(words, text)
    return text


def input_error_text(error: InputError, title: str | None = None) -> str:
    """The error's paragraph as Markdown-safe text in the app's words (`gui_text`), after a bold
    `title` if given."""
    text = plain_for_markdown(gui_text(error.paragraph()))
    return f"**{plain_for_markdown(title)}**: {text}" if title else text


def show_input_error(error: InputError, *, title: str | None = None, where=st) -> None:
    """The error in a red box, on the page or in `where` (e.g. `st.sidebar`)."""
    where.error(input_error_text(error, title))


def pairing_alert(evaluation: Evaluation, title: str) -> None:
    """A warning at the top of a page when at most half of the reference's pages found their
    prediction page by id (the others score as all Background: every figure is pulled down), in the
    summary's words; nothing otherwise."""
    note = pairing_note(evaluation.paired_pages, len(evaluation.page_ids))
    if note is not None:
        st.warning(f"**{plain_for_markdown(title)}**: {plain_for_markdown(gui_text(note))}.", icon=":material/link_off:")


@contextmanager
def shown_errors(where=st) -> Iterator[None]:
    """Show what the wrapped rendering raises as a message instead of a traceback, on the page or
    in `where` (also usable as a decorator, e.g. on a fragment)."""
    try:
        yield
    except InputError as error:
        show_input_error(error, where=where)
    except Exception as error:  # noqa: BLE001 (the last line before a traceback on the page)
        _log.exception("unexpected error while rendering a page")
        where.error(UNEXPECTED.format(kind=type(error).__name__))
