"""A missing extra's message gives the command that works for the way the package was installed
(tore_engine.core.extras)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPOSITORY
from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command, optional_module, require_installed

CHECKOUT = {"url": f"file://{REPOSITORY}", "dir_info": {"editable": True}}


@pytest.mark.parametrize(("record", "prefix", "command"), [
    (None, None, "pip install 'tore-studio[docling]'"),  # from the package index
    ({"url": "https://example.org/tore_studio-0.2.0-py3-none-any.whl", "archive_info": {}}, None, "pip install 'tore-studio[docling]'"),
    (CHECKOUT, str(REPOSITORY / ".venv"), ".venv/bin/pip install -e '.[docling]' from the checkout"),  # ./run.sh's venv
    (CHECKOUT, "/opt/other-venv", "pip install -e '.[docling]' from the checkout"),
    ({"url": f"file://{REPOSITORY}", "dir_info": {}}, None, "pip install '.[docling]' from the folder it was installed from"),
])
def test_the_command_follows_the_way_the_package_was_installed(record, prefix, command):
    assert install_command("docling", record or {}, prefix) == command


def test_this_checkouts_own_record_is_read_even_beside_a_stale_egg_info():
    """Run from the checkout's folder (where a `tore_studio.egg-info` may lie first on sys.path), an
    install in place from this checkout is recognised: the command is the checkout's, not the index's."""
    from tore_engine.core.extras import _direct_url

    record = _direct_url() or {}
    if not (record.get("dir_info", {}).get("editable") and record.get("url") == f"file://{REPOSITORY}"):
        pytest.skip("tore-studio is not installed in place from this checkout")
    script = "from tore_engine.core.extras import install_command; print(install_command('docling'))"
    shown = subprocess.run([sys.executable, "-c", script], cwd=REPOSITORY, capture_output=True, text=True, timeout=60, check=True).stdout
    venv_is_the_checkouts = Path(sys.prefix).resolve() == (REPOSITORY / ".venv").resolve()
    assert shown.strip() == f"{'.venv/bin/pip' if venv_is_the_checkouts else 'pip'} install -e '.[docling]' from the checkout"


def test_a_missing_library_is_an_input_error_with_the_command():
    with pytest.raises(InputError) as raised:
        optional_module("no_such_library_here", "docling", "docling-core")
    assert raised.value.paragraph() == f"reading this format needs docling-core, which is not installed: {install_command('docling')}"


def test_a_library_another_process_needs_is_checked_without_importing_it():
    """The writer's PDF pages are drawn by the drawing processes: this process only checks PyMuPDF is there."""
    with pytest.raises(InputError) as raised:
        require_installed("no_such_library_here", "app", "PyMuPDF")
    assert raised.value.paragraph() == f"reading this format needs PyMuPDF, which is not installed: {install_command('app')}"
    code = ("import sys; from tore_engine.core.extras import require_installed; require_installed('pymupdf', 'app'); "
            "print('pymupdf' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert shown.strip() == "False"
