"""The view in the URL: every choice lives in `st.session_state` under the same key as its query
parameter, seeded from the URL on a session's first run and written back after each run, so a
link reopens the same view. Widgets use `persist_state="session"` so a value survives page switches.

One key, many pages: Streamlit's element ids include the page script, so a widget with the same
key on another page is a new element, registered with its own default, which outranks the value
kept under the key (Streamlit 1.67; it made "Values" jump from recall to confusion on the way to
Compare). `seed` therefore writes the kept value back under the key on every run, before the
widget exists: a value set through the Session State API wins over the default.

The URL is untrusted: a parameter is parsed against the type of its default (a whole number, a
0/1 flag, text without NUL bytes) and must be one of the widget's choices; anything else is
ignored, and the page says which parameters were, in one warning at its top (never with their
values, which may be long, hostile or name server paths).
"""

from __future__ import annotations

from collections.abc import Collection, Container
from dataclasses import dataclass
from typing import Any

import streamlit as st

OVERLAYS_PAGE = "app_pages/overlays.py"
VIEW_MODE = "_view_mode"  # the taxonomy mode the matrix view control last showed (panels)
_SHARED = "_url"  # the values this run puts in the URL
_IGNORED = "_url_ignored"  # parameter -> why it was ignored, this run
_NOTICE = "_url_notice"  # the placeholder of the warning at the top of the page
_SWITCH = "_switch_to"  # a page (and values for its URL) a callback asked to go to
_GIVEN = "_url_given"  # the URL's parameters as this run began (a fragment's run: its page's last run)


@dataclass(frozen=True)
class Interval:
    """The numbers from `low` to `high`, both included: the choices of a number input."""

    low: float
    high: float

    def __contains__(self, value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and self.low <= value <= self.high


class _Refused(ValueError):
    """A URL value that does not parse as its parameter's type; the message says what was expected."""


def _parse(text: str, default: Any) -> Any:
    """The URL text as a value of `default`'s type."""
    if isinstance(default, bool):
        if text not in ("0", "1"):
            raise _Refused("expected 0 or 1")
        return text == "1"
    if isinstance(default, (int, float)):
        try:
            return type(default)(text)
        except ValueError:
            raise _Refused("expected a whole number" if isinstance(default, int) else "expected a number") from None
    if "\x00" in text:
        raise _Refused("contains a NUL byte")
    return text


def _describe(options: Container[Any]) -> str:
    if isinstance(options, range) and options.step == 1:
        return f"expected a whole number from {options.start} to {options.stop - 1}"
    if isinstance(options, Interval):
        return f"expected a number from {options.low:g} to {options.high:g}"
    return "not one of the choices"


def seed(key: str, default: Any, options: Container[Any] | None = None) -> None:
    """Give `key` its URL value on the session's first run (else `default`), and fall back to
    `default` whenever the stored value is not one of `options` (a list, a `range` of whole
    numbers, an `Interval`). A URL value that does not fit is ignored and named in the page's
    notice. Call before the widget: the value is written back so that the widget takes it on
    every page (see the module's docstring)."""
    if key not in st.session_state:
        st.session_state[key] = default
        if given := given_values(key):
            try:
                value = _parse(given[-1], default)
                if options is not None and value not in options:
                    raise _Refused(_describe(options))
                st.session_state[key] = value
            except _Refused as refused:
                ignore(key, str(refused))
    if options is not None and st.session_state[key] not in options:
        st.session_state[key] = default
    st.session_state[key] = st.session_state[key]


def seed_list(key: str, options: Collection[str]) -> None:
    """`seed` for a list of choices (a multiselect; the URL repeats the key, `classes=Text&classes=Table`):
    the URL's values on the session's first run, and always only those among `options` (a choice
    that does not fit is ignored and named in the page's notice, once)."""
    if key not in st.session_state:
        given = given_values(key)
        if any(value not in options for value in given):
            ignore(key, "not one of the choices")
        st.session_state[key] = list(dict.fromkeys(given))
    st.session_state[key] = [value for value in st.session_state[key] if value in options]


def given_values(key: str) -> list[str]:
    """The values the URL gave `key` as this run began: a control drawn after the URL was rewritten
    in the same run (by a fragment, which publishes its own values) still finds its parameter."""
    given = st.session_state.get(_GIVEN)
    return list(given.get(key, [])) if given is not None else st.query_params.get_all(key)


def ignore(key: str, reason: str) -> None:
    """Name an ignored URL parameter in the notice at the top of the page."""
    ignored = st.session_state.setdefault(_IGNORED, {})
    ignored[key] = reason
    notice = st.session_state.get(_NOTICE)
    if notice is not None:
        listed = "; ".join(f"`{name}` ({why})" for name, why in ignored.items())
        notice.warning(f"Some parameters of this link were ignored, their values kept as default: {listed}.", icon=":material/link_off:")


def begin_run() -> None:
    """Note the URL as this run begins (what `seed` reads), start collecting the values this run
    puts in the URL, and place the notice of ignored parameters at the top of the page."""
    st.session_state[_GIVEN] = {key: st.query_params.get_all(key) for key in st.query_params}
    st.session_state[_SHARED] = {}
    st.session_state[_IGNORED] = {}
    st.session_state[_NOTICE] = st.empty()


def share(**values: Any) -> None:
    """Put these values in the URL at the end of the run."""
    st.session_state.setdefault(_SHARED, {}).update(values)


def _to_url(value: Any) -> str | list[str] | None:
    if value is None or value == "" or value == [] or value == ():
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return str(value)


def url_params(**overrides: Any) -> dict[str, str | list[str]]:
    """The URL's parameters: a list is a repeated key."""
    values = {**st.session_state.get(_SHARED, {}), **overrides}
    return {key: text for key, value in values.items() if (text := _to_url(value)) is not None}


def _listed(params: dict[str, str | list[str]]) -> dict[str, list[str]]:
    return {key: [value] if isinstance(value, str) else list(value) for key, value in params.items()}


def publish_url() -> None:
    """Write the shared values to the browser's URL."""
    params = url_params()
    if _listed(params) != {key: st.query_params.get_all(key) for key in st.query_params}:
        st.query_params.from_dict(params)


def cell_text(cell: tuple[str, str] | None) -> str:
    """A cell as its URL value, `row|column` (empty for none)."""
    return "" if cell is None else f"{cell[0]}|{cell[1]}"


def request_page(page_id: str, model: str, cell: tuple[str, str] | None = None, view: str | None = None) -> None:
    """Widget callback: show this page in the Overlays page on this run (see `follow_page_request`),
    with this cell of this matrix view highlighted. A callback runs before the widgets are
    created, so it may set their values."""
    st.session_state["page"] = page_id
    st.session_state["model"] = model
    if cell is not None:
        st.session_state["cell"] = cell_text(cell)
    if view is not None:
        st.session_state["view"] = view
        st.session_state.pop(VIEW_MODE, None)  # the view asked for wins over the mode's remembered one
    st.session_state["_open_overlays"] = True


def request_switch(page: str, **values: str) -> None:
    """Widget callback: go to `page` on this run (see `follow_page_request`), these values in its URL."""
    st.session_state[_SWITCH] = (page, values)


def follow_page_request() -> None:
    """Switch to the page a callback asked for (Overlays with a page, `request_page`; another with
    `request_switch`), keeping the view in the URL."""
    state = st.session_state
    if state.pop("_open_overlays", False):
        st.switch_page(OVERLAYS_PAGE, query_params=url_params(page=state["page"], model=state["model"], cell=state.get("cell"),
                                                              view=state.get("view")))
    if (switch := state.pop(_SWITCH, None)) is not None:
        page, values = switch
        st.switch_page(page, query_params=url_params(**values))
