"""The state module is the only place a session key is spelled (issue 37): no other module of the
app writes a key as text (read in their source), and every key found in a session after each page
has run, its controls used, is one the module names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.studio.helpers import _app, _no_exception, open_page, open_scores_page
from tore_engine.studio import state

STUDIO = Path(state.__file__).parent
# Streamlit's calls whose `key` is a session key (the widgets, the charts, the tables, the containers)
ELEMENTS = {"button", "checkbox", "color_picker", "data_editor", "dataframe", "date_input", "download_button", "expander",
            "file_uploader", "form_submit_button", "multiselect", "number_input", "plotly_chart", "popover", "radio", "segmented_control",
            "select_slider", "selectbox", "slider", "tabs", "text_area", "text_input", "time_input", "toggle", "pills", "feedback"}
# the app's own helpers whose argument at this position is a session key
KEY_ARGUMENTS = {"clickable_chart": 1, "plotly_chart": 1, "page_picker_table": 1, "seed": 0, "seed_list": 0, "bind": 0, "given_values": 0, "ignore": 0,
                 "opened": 1}  # (a table's rows are kept under `state.ROWS_PAGE(name)`: its name is a part, not a key)
STATE_METHODS = {"get", "pop", "setdefault"}


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _reads_session(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def spelled_keys(source: str) -> list[str]:
    """Where `source` writes a session key as text: a Streamlit element's `key=`, a subscript or a
    get/pop/setdefault of `st.session_state`, an `in st.session_state`, a key argument of the app's
    helpers, or a keyword of `state.share` (a URL key spelled as a name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
            if name in ELEMENTS:
                found += [f"{where}: {name}(key={ast.unparse(k.value)})" for k in node.keywords if k.arg == "key" and _is_text(k.value)]
            if name in KEY_ARGUMENTS and len(node.args) > KEY_ARGUMENTS[name] and _is_text(node.args[KEY_ARGUMENTS[name]]):
                found.append(f"{where}: {name}(... {ast.unparse(node.args[KEY_ARGUMENTS[name]])} ...)")
            if name in STATE_METHODS and isinstance(node.func, ast.Attribute) and _reads_session(node.func.value):
                found += [f"{where}: session_state.{name}({ast.unparse(node.args[0])})" for _ in [0] if node.args and _is_text(node.args[0])]
            if name == "share":
                found += [f"{where}: share({k.arg}=...)" for k in node.keywords if k.arg is not None]
        elif isinstance(node, ast.Subscript) and _reads_session(node.value) and _is_text(node.slice):
            found.append(f"{where}: session_state[{ast.unparse(node.slice)}]")
        elif isinstance(node, ast.Compare) and any(_reads_session(c) for c in node.comparators) and _is_text(node.left):
            found.append(f"{where}: {ast.unparse(node)}")
    return found


def test_the_reader_finds_a_key_spelled_as_text():
    """The check below can fail: each way of spelling a key is found in a sample."""
    sample = '''
st.radio("Model", models, key="model")
st.session_state["page"] = 1
st.session_state.get(f"rows-{key}")
if "cell" in st.session_state: pass
state.seed("view", "full")
state.share(tag=name)
clickable_chart(figure, "outcomes", read)
st.radio("Model", models, key=state.MODEL)
st.session_state[state.PAGE] = 1
'''
    assert len(spelled_keys(sample)) == 7, spelled_keys(sample)


@pytest.mark.parametrize("module", sorted(path.relative_to(STUDIO).as_posix() for path in STUDIO.rglob("*.py") if path.name != "state.py"))
def test_no_module_but_state_spells_a_session_key(module):
    assert spelled_keys((STUDIO / module).read_text(encoding="utf-8")) == []


STREAMLITS_OWN = ("$$", "FormSubmitter:")  # keys Streamlit makes itself: widget ids, a form's submit button


def _unnamed(at) -> list[str]:
    return sorted(key for key in at.session_state.keys() if not key.startswith(STREAMLITS_OWN) and not state.named(key))


def _used(at):
    """The page's toggles turned, and the matrix shown as another view and normalisation, then the
    page run again (what opens the gallery, the agreement view, the sections)."""
    for toggle in at.main.toggle:
        if not toggle.disabled:
            toggle.set_value(not toggle.value)
    for key, value in ((state.VIEW, "reduced"), (state.METRIC, "precision")):
        if key in at.session_state:
            at.session_state[key] = value
    return at.run()


@pytest.mark.parametrize("page", ["matrices", "overlays", "models", "compare", "runs"])
def test_every_key_a_page_writes_is_named_by_the_state_module(page):
    at = open_page(_app(page="report-a/p1", cell="Text|Table"), page).run()
    _no_exception(at)
    assert _unnamed(at) == []
    _used(at)
    _no_exception(at)
    assert _unnamed(at) == []


@pytest.mark.parametrize("benchmark", ["docile", "funsd", "omnidocbench"])
def test_every_key_a_score_panel_writes_is_named_by_the_state_module(benchmark):
    at = open_scores_page(benchmark)
    assert _unnamed(at) == []


def test_a_key_the_module_does_not_name_is_found():
    """The session check can fail: a key no page should write is reported."""
    at = _app()
    at.session_state["a key of nobody"] = 1
    at.run()
    assert _unnamed(at) == ["a key of nobody"]


def test_every_key_says_what_it_holds_and_is_named_once():
    assert all(key.holds for key in state.KEYS.values()) and all(family.holds for family in state.FAMILIES.values())
    with pytest.raises(ValueError, match="named twice"):
        state.Key("model", str, "again")
