"""Abandoned folders (tore_engine.io.leftovers): a killed process's folders are swept by the next one,
and nothing else is: not a live process's, not another host's or user's, not a link, not a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tore_engine.io import leftovers

PREFIX = ".test-leftover-"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="process ids and owners are POSIX's")


def ended_pid() -> int:
    """The id of a process that has just ended (not yet reused: ids are handed out in turn)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True, timeout=60)
    return int(done.stdout)


def made_by(folder: Path, pid: int, host: str | None = None) -> Path:
    made = folder / f"{PREFIX}{host or leftovers._host()}-{pid}-abc123"
    made.mkdir()
    return made


def test_the_prefix_names_this_host_and_process():
    assert leftovers.owned_prefix(PREFIX) == f"{PREFIX}{leftovers._host()}-{os.getpid()}-"


def test_only_folders_of_ended_processes_of_this_host_are_abandoned(tmp_path):
    gone = made_by(tmp_path, ended_pid())
    made_by(tmp_path, os.getpid())  # this process
    made_by(tmp_path, os.getppid())  # a live one
    made_by(tmp_path, ended_pid(), host="elsewhere")  # another host: its processes are not ours to see
    (tmp_path / f"{PREFIX}{leftovers._host()}-{ended_pid()}-file").write_text("a file, not a folder")
    (elsewhere := tmp_path / "elsewhere").mkdir()
    (tmp_path / f"{PREFIX}{leftovers._host()}-{ended_pid()}-link").symlink_to(made_by(elsewhere, ended_pid()))  # a link to a folder
    (tmp_path / f"other-{leftovers._host()}-{ended_pid()}-x").mkdir()  # another prefix
    assert leftovers.abandoned(tmp_path, PREFIX) == [gone]


def test_sweep_removes_what_is_abandoned_and_keeps_the_rest(tmp_path):
    gone, live = made_by(tmp_path, ended_pid()), made_by(tmp_path, os.getppid())
    (gone / "inside").mkdir()
    (gone / "inside" / "upload.json").write_text("{}")
    leftovers.sweep(tmp_path, PREFIX)
    assert not gone.exists() and live.is_dir()


def test_a_missing_folder_has_nothing_abandoned(tmp_path):
    assert leftovers.abandoned(tmp_path / "missing", PREFIX) == []
