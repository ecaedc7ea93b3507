"""Errors as the app shows them (tore_engine.studio.messages): the engine's words for the command line
reworded for the sidebar, and files named without their server folders."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.studio.helpers import PAGES, _app, _coco, _native
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
