"""Errors as the app shows them (tore_engine.studio.messages): the engine's words for the command line
reworded for the sidebar, and files named without their server folders."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.studio.helpers import PAGES, _app, _coco, _native, open_page
from tore_engine.studio.messages import gui_text


def test_without_the_images_file_the_message_names_the_sidebar_not_a_flag(root):
    _coco(root)
    (root / "gt.json").write_bytes(_native("gt", PAGES))
    at = _app(src="path", ref="gt.json", a="a.results.json")
    messages = [error.value for error in at.error]
    assert any("COCO images + categories file \\(in the sidebar\\)" in message for message in messages), messages
    assert not any("--images" in message for message in messages)


@pytest.mark.parametrize(("engine", "shown"), [
    ("a COCO results list needs the images + categories file it was made for: pass it with --images IMAGES.json (or use ...)",
     "a COCO results list needs the images + categories file it was made for: choose it as the COCO images + categories file "
     "(in the sidebar) (or use ...)"),
    ("give only the dataset (tore evaluate DATASET --format docling-eval)", "give only the dataset"),
    ("use --taxonomy dual or --label-map", 'choose the taxonomy "dual" (under Evaluation in the sidebar) or a label map (in the sidebar)'),
    ("reading this format needs pyarrow, which is not installed: pip install 'tore-studio[parquet]'",
     "reading this format needs pyarrow, which is not installed on the server; whoever runs it adds it with: "
     "pip install 'tore-studio[parquet]'"),
    ("needs docling-core, which is not installed: .venv/bin/pip install -e '.[docling]' from the checkout",
     "needs docling-core, which is not installed on the server; whoever runs it adds it with: .venv/bin/pip install -e "
     "'.[docling]' from the checkout"),
])
def test_engine_messages_are_reworded_for_the_app(engine, shown):
    assert gui_text(engine) == shown


def test_messages_name_files_without_their_server_folders(root):
    assert gui_text(f"file {root}/data/gt.json: no such file") == "file data/gt.json: no such file"
    assert gui_text("file gt.json: no such file") == "file gt.json: no such file"  # a name alone stays as it is
    temporary = Path(tempfile.gettempdir()) / "tore_studio_funsd_simulated" / "0123abcd"
    assert gui_text(f"file {temporary}/form 1.json: bad, and {temporary}/x.json") == "file form 1.json: bad, and x.json"


def _uploaded_pair(ids_of_a, ids_of_b=None):
    """The app with the demo's reference uploaded and model A (and B) with their page ids renamed."""
    import json

    from tests.helpers import DEMO
    from tests.studio.helpers import _upload

    def renamed(rename) -> bytes:
        layout = json.loads((DEMO / "model_a.json").read_text())
        for k, page in enumerate(layout["pages"]):
            page["id"] = rename(k, page["id"])
        return json.dumps(layout).encode()

    at = _app(src="upload")
    _upload(at, "ref", "reference.json", (DEMO / "reference.json").read_bytes())
    _upload(at, "a", "model_a.json", renamed(ids_of_a))
    if ids_of_b is not None:
        _upload(at, "b", "model_b.json", renamed(ids_of_b))
    return at


def test_ids_that_match_nothing_are_an_error_naming_the_rule_and_the_sidebar_rule_maps_them():
    """Issue 36 N2 in the app: every figure was 0.000 without an alert."""
    from tests.studio.helpers import _no_exception

    at = _uploaded_pair(lambda k, page_id: f"doc_{page_id}")
    _no_exception(at)
    from tore_engine.plots.plain_text import plain_for_markdown

    errors = [error.value for error in at.error]
    wanted = [plain_for_markdown(text) for text in ("'doc_report-a/p1'", 'type strip-prefix:doc_ under Evaluation, "Page ids of the predictions", in the sidebar')]
    assert any("no prediction page id matches a reference page id" in text and all(part in text for part in wanted) for text in errors), errors
    assert not at.metric  # no figure drawn from a silent zero
    at.text_input(key="pidmap").input("strip-prefix:\u2060doc_").run()  # as copied from the message (Markdown's word joiner)
    _no_exception(at)
    assert not at.error and not at.warning
    assert at.query_params["pidmap"] == "strip-prefix:doc_"
    assert f"Evaluation: auto taxonomy, every box, mAP coco, page ids {plain_for_markdown('strip-prefix:doc_')}" in [
        p.proto.popover.label for p in at.get("popover")]


@pytest.mark.parametrize("page", ["matrices", "overlays", "models", "compare"])
def test_every_page_says_at_its_top_when_at_most_half_the_pages_paired(page):
    from tests.studio.helpers import _no_exception

    at = _uploaded_pair(lambda k, page_id: page_id if k < 6 else f"doc_{page_id}", lambda k, page_id: page_id)
    open_page(at, page).run()
    _no_exception(at)
    warnings = [warning.value for warning in at.main.warning if "reference pages have a prediction page" in warning.value]
    assert len(warnings) == 1, [warning.value for warning in at.main.warning]
    assert "Only 6 of 26 reference pages have a prediction page with their id: the other 20 are scored as all Background" in warnings[0]
    assert 'a rule under Evaluation, "Page ids of the predictions", in the sidebar' in warnings[0]


def test_a_page_id_rule_is_never_read_as_a_path():
    from tests.studio.helpers import _no_exception

    at = _app(pidmap="/etc/passwd")
    _no_exception(at)
    assert any(error.value.startswith("a page id rule is strip-prefix:") and "got '/etc/passwd'" in error.value for error in at.error)
    assert "pidmap" not in at.query_params
