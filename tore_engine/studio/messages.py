"""Errors on the page: bad input as the engine's one clear paragraph, anything else as one short
sentence, never a traceback (which would show server paths and code to whoever opened the link).

`shown_errors` wraps the rendering of every page and fragment: an `InputError` becomes an error
box, any other exception a short message, with its traceback in the server's log.
Streamlit's own controls (`st.stop`, `st.rerun`, `st.switch_page`) are `BaseException`s and pass.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from tore_engine.errors import InputError
from tore_engine.studio.plain_text import plain_for_markdown
from tore_engine.studio.uploads import hide_private_paths

UNEXPECTED = "This view stopped on an unexpected error ({kind}); the server's log has the details. Other pages still work."
_log = logging.getLogger(__name__)


def input_error_text(error: InputError, title: str | None = None) -> str:
    """The error's paragraph as Markdown-safe text, without this session's private upload folder,
    after a bold `title` if given."""
    text = plain_for_markdown(hide_private_paths(error.paragraph()))
    return f"**{plain_for_markdown(title)}**: {text}" if title else text


def show_input_error(error: InputError, *, title: str | None = None, where=st) -> None:
    """The error in a red box, on the page or in `where` (e.g. `st.sidebar`)."""
    where.error(input_error_text(error, title))


@contextmanager
def shown_errors() -> Iterator[None]:
    """Show what the wrapped rendering raises as a message instead of a traceback (also usable as
    a decorator, e.g. on a fragment)."""
    try:
        yield
    except InputError as error:
        show_input_error(error)
    except Exception as error:  # noqa: BLE001: the last line before a traceback on the page
        _log.exception("unexpected error while rendering a page")
        st.error(UNEXPECTED.format(kind=type(error).__name__))
