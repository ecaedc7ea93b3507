"""The `--out` folder (tore_engine.writers.staging) under interruptions, other runs and hostile inputs: a swap
stopped anywhere leaves exactly one run's whole set; one run at a time; no input is an output."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.io.test_leftovers import ended_pid
from tore_engine.core.errors import InputError
from tore_engine.core.signals import Stopped
from tore_engine.io import files, leftovers
from tore_engine.writers import staging as output

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals, links and locks are POSIX's")

NAMES = ("report.json", "confusion.csv", "report.xlsx")  # the last one new in the second run
OLD = {"report.json": b"old report", "confusion.csv": b"old confusion"}
NEW = {name: f"new {name}".encode() for name in NAMES}
SWAP_RENAMES = len(OLD) + len(NAMES)  # each old file moved aside, each new one placed


def contents(folder: Path) -> dict[str, bytes]:
    """Every entry of `folder` (hidden ones too): its bytes for a file, None for anything else."""
    return {path.name: path.read_bytes() if path.is_file() and not path.is_symlink() else None for path in folder.iterdir()}


@pytest.fixture
def out(tmp_path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    for name, data in OLD.items():
        (folder / name).write_bytes(data)
    (folder / "notes.txt").write_bytes(b"the user's")
    return folder


def write_new(folder: Path) -> None:
    for name, data in NEW.items():
        (folder / name).write_bytes(data)


def save(out: Path, names=NAMES, inputs_read=()) -> None:
    with output.staged_output(out, names, inputs_read) as staging:
        staging.save(write_new)


def renames_failing_at(monkeypatch, call: int, error: BaseException) -> None:
    """os.replace, as tore_engine.writers.staging calls it, raising `error` instead of its `call`-th rename."""
    real, calls = os.replace, []

    def replace(source, target):
        calls.append(target)
        if len(calls) == call:
            raise error
        real(source, target)

    monkeypatch.setattr(output.os, "replace", replace)


# --- the swap ----------------------------------------------------------------------------------


@pytest.mark.parametrize("error", [Stopped(signal.SIGTERM), KeyboardInterrupt(), OSError(errno.EIO, "Input/output error")],
                         ids=["Stopped", "KeyboardInterrupt", "OSError"])
@pytest.mark.parametrize("call", range(1, SWAP_RENAMES + 1))
def test_a_swap_interrupted_at_any_rename_leaves_the_previous_set(out, monkeypatch, call, error):
    renames_failing_at(monkeypatch, call, error)
    with pytest.raises(InputError if isinstance(error, OSError) else type(error)):
        save(out)
    assert contents(out) == {**OLD, "notes.txt": b"the user's"}


def test_an_uninterrupted_swap_places_the_new_set_and_leaves_nothing_else(out):
    save(out)
    assert contents(out) == {**NEW, "notes.txt": b"the user's"}


def stop_handler(signum, _frame):
    raise Stopped(signum)


@pytest.fixture
def stop_signals():
    """The CLI's stop handlers (a `Stopped` raised in the main thread), and Python's own for SIGINT
    (a KeyboardInterrupt), restored afterwards: a process started in the background by a shell
    without job control (`cmd &`, as CI runners and nohup do) inherits SIGINT ignored."""
    previous = {number: signal.signal(number, stop_handler) for number in (signal.SIGTERM, signal.SIGHUP)}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for number, handler in previous.items():
        signal.signal(number, handler)


def renames_signalling_at(monkeypatch, call: int, send) -> None:
    """os.replace, as tore_engine.writers.staging calls it, sending a signal (`send()`) before its `call`-th rename."""
    real, calls = os.replace, []

    def replace(source, target):
        calls.append(target)
        if len(calls) == call:
            send()
        real(source, target)

    monkeypatch.setattr(output.os, "replace", replace)


@pytest.mark.parametrize("number, raised", [(signal.SIGTERM, Stopped), (signal.SIGHUP, Stopped), (signal.SIGINT, KeyboardInterrupt)])
@pytest.mark.parametrize("call", range(1, SWAP_RENAMES + 1))
def test_a_stop_signal_during_the_swap_takes_effect_once_it_is_done(out, monkeypatch, stop_signals, call, number, raised):
    renames_signalling_at(monkeypatch, call, lambda: os.kill(os.getpid(), number))
    with pytest.raises(raised):
        save(out)
    assert contents(out) == {**NEW, "notes.txt": b"the user's"}
    assert signal.getsignal(number) in (stop_handler, signal.default_int_handler)  # the handlers are back


def test_a_stop_signal_that_reaches_another_thread_during_the_swap_waits_too(out, monkeypatch, stop_signals):
    """Python runs every handler in the main thread, whichever thread the signal reached: blocking
    the signal in the main thread alone would not hold it back."""
    done = threading.Event()
    other = threading.Thread(target=done.wait, daemon=True)
    other.start()

    def send() -> None:
        signal.pthread_kill(other.ident, signal.SIGTERM)
        time.sleep(0.2)  # the other thread runs its C handler meanwhile; the main thread then runs the Python one

    renames_signalling_at(monkeypatch, 2, send)
    try:
        with pytest.raises(Stopped):
            save(out)
    finally:
        done.set()
    assert contents(out) == {**NEW, "notes.txt": b"the user's"}


def test_a_file_that_cannot_be_put_back_is_kept_for_the_next_run(out, monkeypatch):
    real, calls = os.replace, []

    def fail_from_the_third(source, target):  # report.json is moved aside and placed; then every rename fails
        calls.append(target)
        if len(calls) >= 3:
            raise OSError(errno.EIO, "Input/output error")
        real(source, target)

    monkeypatch.setattr(output.os, "replace", fail_from_the_third)
    with pytest.raises(InputError, match="could not put back report.json") as raised:
        save(out)
    kept = [path for path in out.iterdir() if path.name.startswith(output.STAGING_PREFIX)]
    assert len(kept) == 1 and str(kept[0]) in str(raised.value)
    assert (kept[0] / output.PREVIOUS / "report.json").read_bytes() == OLD["report.json"]
    monkeypatch.undo()
    kept[0].rename(out / f"{output.STAGING_PREFIX}{leftovers._host()}-{ended_pid()}-k2")  # as the next process sees it
    with output.staged_output(out, NAMES):
        pass
    assert contents(out) == {**OLD, "notes.txt": b"the user's"}


def killed_runs_staging(out: Path) -> Path:
    """The staging folder of a run killed outright (SIGKILL: no undo of its own) before the first
    of its renames, with the files of NEW staged."""
    staging = out / f"{output.STAGING_PREFIX}{leftovers._host()}-{ended_pid()}-k1"
    staging.mkdir()
    write_new(staging)
    return staging


@pytest.mark.parametrize("renames", range(SWAP_RENAMES + 1))
def test_a_swap_killed_after_any_rename_is_undone_by_the_next_run(out, monkeypatch, renames):
    staging = killed_runs_staging(out)
    killed = output.StagedOutput(out, NAMES, staging)
    renames_failing_at(monkeypatch, renames + 1, SystemExit("killed"))
    monkeypatch.setattr(output, "_undo_swap", lambda *_: [])  # SIGKILL: the killed run undoes nothing itself
    with pytest.raises(SystemExit):
        killed._swap()
    monkeypatch.undo()
    with output.staged_output(out, NAMES):  # the next run: fails before writing anything
        pass
    assert contents(out) == {**OLD, "notes.txt": b"the user's"}


def test_a_swap_killed_after_its_last_rename_is_kept_by_the_next_run(out):
    staging = killed_runs_staging(out)
    output.StagedOutput(out, NAMES, staging)._swap()  # done, but the process was killed before removing its staging folder
    with output.staged_output(out, NAMES):
        pass
    assert contents(out) == {**NEW, "notes.txt": b"the user's"}


# --- one run at a time -------------------------------------------------------------------------


def test_a_second_run_into_the_same_out_fails_at_once_naming_the_first(out):
    with output.staged_output(out, NAMES):
        lock = out / output.LOCK_NAME
        assert lock.read_text() == f"{os.getpid()}\n"
        with pytest.raises(InputError) as raised:
            save(out)
        assert str(raised.value) == (f"another tore run is writing into --out {out} (process {os.getpid()}); "
                                     f"wait for it to end, or choose another --out (its lock file {lock} goes when it ends)")
        assert contents(out)[output.LOCK_NAME] == f"{os.getpid()}\n".encode()
    assert contents(out) == {**OLD, "notes.txt": b"the user's"}  # the lock file is removed with the lock


def test_the_lock_file_of_a_killed_run_does_not_stop_the_next(out):
    (out / output.LOCK_NAME).write_text(f"{ended_pid()}\n")  # a flock ends with its process: the file alone holds nothing
    save(out)
    assert contents(out) == {**NEW, "notes.txt": b"the user's"}


def test_a_lock_file_removed_while_it_was_taken_is_taken_again(out, monkeypatch):
    """The first run removes the lock file when it ends: a run that opened it just before holds a
    lock on a file nobody else sees, and must take the lock on the file at the path instead."""
    real_open, opened = os.open, []

    def open_then_replaced(path, flags, mode=0o777, **where):
        descriptor = real_open(path, flags, mode, **where)
        if Path(path).name == output.LOCK_NAME and not opened:
            opened.append(descriptor)
            os.unlink(path)  # the previous holder ends: its file is removed ...
            (out / output.LOCK_NAME).write_text("")  # ... and a third run has made a new one
        return descriptor

    monkeypatch.setattr(output.os, "open", open_then_replaced)
    with output.staged_output(out, NAMES):
        assert opened
        with pytest.raises(InputError, match="another tore run is writing into --out"):  # the lock is on the file at the path
            save(out)
    assert contents(out) == {**OLD, "notes.txt": b"the user's"}


def test_a_link_planted_as_the_lock_file_is_not_followed(out, tmp_path):
    (tmp_path / "elsewhere").write_text("keep")
    (out / output.LOCK_NAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match=f"its lock file {out / output.LOCK_NAME} is a symbolic link"):
        save(out)
    assert (tmp_path / "elsewhere").read_text() == "keep" and (out / output.LOCK_NAME).is_symlink()
    assert contents(out) == {**OLD, "notes.txt": b"the user's", output.LOCK_NAME: None}


def test_a_folder_created_for_a_failed_run_is_removed_with_its_lock_file(tmp_path):
    with pytest.raises(InputError), output.staged_output(tmp_path / "new" / "out", NAMES):
        raise InputError("the evaluation failed")
    assert not (tmp_path / "new").exists()


# --- inputs that are outputs -------------------------------------------------------------------


def ways_to_reach(out: Path, name: str, tmp_path: Path) -> dict[str, Path]:
    """Paths other than `out / name` that open the same file."""
    (tmp_path / "link-to-out").symlink_to(out)
    (tmp_path / "symlink.json").symlink_to(out / name)
    os.link(out / name, tmp_path / "hardlink.json")
    return {"itself": out / name, "through a linked folder": tmp_path / "link-to-out" / name,
            "a symbolic link": tmp_path / "symlink.json", "a hard link": tmp_path / "hardlink.json",
            "with dots": out / ".." / out.name / name}


@pytest.mark.parametrize("way", ["itself", "through a linked folder", "a symbolic link", "a hard link", "with dots"])
def test_an_input_that_is_an_output_is_refused_before_any_work(out, tmp_path, way):
    given = ways_to_reach(out, "confusion.csv", tmp_path)[way]
    with pytest.raises(InputError) as raised:
        save(out, inputs_read=[tmp_path / "notes.json", given])
    assert str(raised.value) == (f"file {given}: is the same file as {out / 'confusion.csv'}, which this run replaces with its "
                                 "results; move it out of --out, or choose another --out")
    assert contents(out) == {**OLD, "notes.txt": b"the user's"}


def test_no_file_the_run_reads_is_an_output(out, tmp_path):
    """Files found inside an input folder, page images, re-read spans: every read goes through
    `files.open_regular`, which refuses the outputs as long as the run holds `--out`."""
    os.link(out / "report.json", tmp_path / "page.png")
    with output.staged_output(out, NAMES):
        for path in (out / "report.json", tmp_path / "page.png"):
            with pytest.raises(InputError, match=f"is the same file as {out / 'report.json'}"):
                files.read_bytes(path)
        assert files.read_bytes(out / "notes.txt") == b"the user's"  # not an output
    assert files.read_bytes(tmp_path / "page.png") == OLD["report.json"]  # the run is over


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))


@pytest.mark.parametrize(("make", "kind"), [(Path.mkdir, "a folder"), (_fifo, "a named pipe (FIFO)"), (_socket, "a socket"),
                                            (lambda path: path.symlink_to("nowhere"), "a symbolic link")])
def test_a_lock_file_that_is_no_regular_file_is_named_with_how_to_free_out(out, make, kind):
    """Issue 42 C10: each blocked --out for good with "Invalid argument", "Is a directory", ...;
    a FIFO is never opened (a blocking open would hang here)."""
    lock = out / output.LOCK_NAME
    make(lock)
    with pytest.raises(InputError) as raised:
        save(out)
    assert str(raised.value) == (f"cannot take the lock of --out {out}: its lock file {lock} is {kind}, which no tore run makes (a run's "
                                 f"lock is a regular file, removed when it ends); when no tore run is writing into --out, remove {lock} and run again")
    assert contents(out) == {**OLD, "notes.txt": b"the user's", output.LOCK_NAME: None}  # left as it was
    if lock.is_dir() and not lock.is_symlink():
        lock.rmdir()
    else:
        lock.unlink()
    save(out)  # freed as the message says
    assert contents(out) == {**NEW, "notes.txt": b"the user's"}


def test_a_lock_held_by_another_program_is_not_called_a_tore_run(out):
    """Issue 42 C10: a live process that is no tore run holds the lock file, whose content is garbage
    that reads as a process id."""
    lock = out / output.LOCK_NAME
    lock.write_text("1\n")
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); "
                               "print('held', flush=True); sys.stdin.read()", str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(InputError) as raised:
            save(out)
    finally:
        holder.communicate("")
    assert str(raised.value) == (f"--out {out} is locked by a process that is not a tore run (process {holder.pid}): it holds the lock "
                                 f"file {lock}, which holds no tore run's process id; end that process, or choose another --out")


def test_another_run_s_reports_this_run_does_not_write_go_with_the_swap(out):
    """Issue 42 C3: a run into an --out that holds a previous run's extra reports leaves one run's files."""
    (out / "report.html").write_bytes(b"the previous run's")
    (out / "sweep.csv").mkdir()  # a folder of that name is the user's
    with output.staged_output(out, NAMES, stale=("report.html", "sweep.csv", "cells.csv")) as staging:
        staging.save(write_new)
    assert contents(out) == {**NEW, "notes.txt": b"the user's", "sweep.csv": None}


def test_a_failed_swap_puts_another_run_s_reports_back(out, monkeypatch):
    (out / "report.html").write_bytes(b"the previous run's")
    renames_failing_at(monkeypatch, SWAP_RENAMES + 1, OSError(errno.ENOSPC, "No space left on device"))  # the stale file's move fails
    with pytest.raises(InputError), output.staged_output(out, NAMES, stale=("report.html",)) as staging:
        staging.save(write_new)
    assert contents(out) == {**OLD, "notes.txt": b"the user's", "report.html": b"the previous run's"}
