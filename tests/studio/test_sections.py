"""Sections drawn only while open (tore_engine.studio.sections): a closed one sends no content,
opening it draws it, and whether it is open is in the URL like any other control."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page(expanded: bool, **query: str) -> AppTest:
    def script(expanded: bool) -> None:
        from tore_engine.studio import sections, state

        state.begin_run()
        section = sections.opened("Details", "details_open", expanded=expanded)
        if section is not None:
            section.number_input("Inside", key="inside")
        state.publish_url()

    at = AppTest.from_function(script, args=(expanded,))
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def test_a_closed_section_sends_no_content_and_opening_it_draws_it():
    at = _page(False)
    assert not at.exception and len(at.expander) == 1 and not at.number_input
    assert "details_open" not in at.query_params
    at.session_state["details_open"] = True  # what a click on the expander does (on_change="rerun")
    at.run()
    assert at.number_input[0].label == "Inside"
    assert at.query_params["details_open"] == "1"


def test_the_url_opens_or_closes_a_section_against_its_default():
    assert _page(False, details_open="1").number_input
    opened = _page(True)
    assert opened.number_input and "details_open" not in opened.query_params
    closed = _page(True, details_open="0")
    assert not closed.number_input and closed.query_params["details_open"] == "0"


def test_a_hostile_value_is_ignored_and_named():
    at = _page(False, details_open="<b>yes</b>")
    assert not at.number_input
    assert any("details_open" in warning.value for warning in at.warning)
