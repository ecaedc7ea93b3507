"""`tore` under hostile conditions: a bad --out, a failing disk, signals, a closed stdout, absurd
numbers, ambiguous classes, unexpected errors. Each ends in exit code 2 (or the signal's code),
one paragraph on stderr, nothing on stdout, never a traceback, and the previous results whole."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import tore_engine
from tests.cli.helpers import run_cli
from tests.helpers import DEMO, layout_json, write_json
from tests.io.test_leftovers import ended_pid
from tests.mutations import VALID_NATIVE, mutations
from tore_engine.io import leftovers
from tore_engine.results.saved import SAVED_FILES
from tore_engine.writers import outputs
from tore_engine.writers import staging as output
from tore_engine.writers.outputs import OUTPUT_FILES

BOXES = [("a", [0, 0, 6, 4]), ("b", [2, 2, 10, 10])]
PREDICTED = [("a", [0, 0, 5, 5]), ("c", [5, 5, 10, 10])]
HANG_BOUND_SECONDS = 120  # generous: a hang is minutes, an answer is seconds


def tore(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=HANG_BOUND_SECONDS, **options)


def native(name: str, boxes, pages: int = 2) -> dict:
    page = lambda k: {"id": f"p{k}", "width": 10, "height": 10, "boxes": [{"label": l, "bbox": b} for l, b in boxes]}
    return layout_json(name, [page(k) for k in range(pages)])


@pytest.fixture
def files(tmp_path):
    return write_json(tmp_path / "gt.json", native("gt", BOXES)), write_json(tmp_path / "model.json", native("model", PREDICTED, 1))


def assert_one_paragraph_error(code: int, stdout: str, stderr: str, *fragments: str) -> None:
    assert code == 2, stderr
    assert stdout == ""
    assert stderr.startswith("tore: error: ") and stderr.count("\n") == 1 and "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in stderr


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}


@pytest.fixture
def previous(files, tmp_path):
    """A folder holding a first run's results, and their bytes."""
    out = tmp_path / "out"
    code, _, err = run_cli("evaluate", *map(str, files), "--out", str(out), "--workers", "1")
    assert code == 0, err
    return out, snapshot(out)


# --- --out -----------------------------------------------------------------------------------------


def out_problems(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    (tmp_path / "a-file").write_text("not a folder")
    return {
        "an existing file": (tmp_path / "a-file", "it exists and is not a folder"),
        "under a file": (tmp_path / "a-file" / "out", "Not a directory"),
        "a name too long": (tmp_path / ("x" * 300), "File name too long"),
    }


@pytest.mark.parametrize("problem", ["an existing file", "under a file", "a name too long"])
def test_out_problems_are_found_before_any_work(tmp_path, problem):
    out, message = out_problems(tmp_path)[problem]
    missing = tmp_path / "missing.json"  # loading it would fail: --out must be checked first
    result = tore("evaluate", str(missing), str(missing), "--out", str(out))
    assert_one_paragraph_error(result.returncode, result.stdout, result.stderr, f"--out {out}", message)
    assert "missing.json" not in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_out_is_found_before_any_work(previous, files):
    out, before = previous
    out.chmod(0o500)
    try:
        result = tore("evaluate", *map(str, files), "--out", str(out))
    finally:
        out.chmod(0o700)
    assert_one_paragraph_error(result.returncode, result.stdout, result.stderr, "Permission denied")
    assert snapshot(out) == before


def test_read_only_file_system_is_found_before_any_work(previous, files, monkeypatch):
    out, before = previous

    def read_only(**_):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(out))

    monkeypatch.setattr(output.tempfile, "mkdtemp", read_only)
    monkeypatch.setattr("tore_engine.api.load_pair", lambda *a, **k: pytest.fail("loaded before --out was checked"))
    assert_one_paragraph_error(*run_cli("evaluate", *map(str, files), "--out", str(out)), "Read-only file system")
    assert snapshot(out) == before


def test_a_result_name_taken_by_a_folder_is_found_before_any_work(previous, files):
    out, before = previous
    (out / "confusion.csv").unlink()
    (out / "confusion.csv").mkdir()
    result = tore("evaluate", *map(str, files), "--out", str(out))
    assert_one_paragraph_error(result.returncode, result.stdout, result.stderr, "confusion.csv there is a folder")
    del before["confusion.csv"]
    assert snapshot(out) == before


def test_a_full_disk_leaves_the_previous_results_whole(previous, tmp_path, monkeypatch):
    out, before = previous
    other = write_json(tmp_path / "other.json", native("other", PREDICTED, 2))

    def full(*_):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs, "_write_pages_csv", full)  # report.json and the matrix CSVs are written by then
    code, stdout, stderr = run_cli("evaluate", str(other), str(other), "--out", str(out), "--workers", "1")
    assert_one_paragraph_error(code, stdout, stderr, f"--out {out}", "No space left on device")
    assert snapshot(out) == before
    assert [path.name for path in out.iterdir() if path.is_dir()] == []  # no staging folder left


def test_a_failing_swap_is_undone(previous, tmp_path, monkeypatch):
    out, before = previous
    other = write_json(tmp_path / "other.json", native("other", PREDICTED, 2))
    real_replace, calls = os.replace, []

    def fail_on_the_sixth(source, target):
        calls.append(target)
        if len(calls) == 6:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_replace(source, target)

    monkeypatch.setattr(output.os, "replace", fail_on_the_sixth)
    assert_one_paragraph_error(*run_cli("evaluate", str(other), str(other), "--out", str(out), "--workers", "1"), "Input/output error")
    assert snapshot(out) == before


def test_a_new_run_replaces_every_result_and_leaves_other_files(previous, tmp_path):
    out, before = previous
    (out / "notes.txt").write_text("mine")
    other = write_json(tmp_path / "other.json", native("other", PREDICTED, 3))
    assert run_cli("evaluate", str(other), str(other), "--out", str(out), "--workers", "1")[0] == 0
    after = snapshot(out)
    assert set(after) == set(OUTPUT_FILES) | set(SAVED_FILES) | {"notes.txt"} and after["notes.txt"] == b"mine"
    assert json.loads(after["report.json"])["pages"] == 3
    assert sorted(path.name for path in out.iterdir()) == sorted(after)


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run_and_its_moved_file_put_back(previous, tmp_path):
    out, before = previous
    killed = out / f"{output.STAGING_PREFIX}{leftovers._host()}-{ended_pid()}-x1y2"
    (killed / output.PREVIOUS).mkdir(parents=True)
    os.replace(out / "pages.csv", killed / output.PREVIOUS / "pages.csv")  # killed between its two renames
    (killed / "report.json").write_text("the killed run's unplaced file")
    running = out / f"{leftovers.owned_prefix(output.STAGING_PREFIX)}z9"  # this process's: still running
    running.mkdir()
    code, _, err = run_cli("evaluate", str(tmp_path / "none.json"), str(tmp_path / "none.json"), "--out", str(out))
    assert code == 2 and "none.json" in err
    assert snapshot(out) == before and not killed.exists() and running.is_dir()


def test_a_planted_staging_folder_moves_nothing_from_outside_out(previous, tmp_path):
    out, _ = previous
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pages.csv").write_text("someone else's")
    planted = out / f"{output.STAGING_PREFIX}{leftovers._host()}-{ended_pid()}-p1"
    planted.mkdir()
    (planted / output.PREVIOUS).symlink_to(elsewhere)
    os.remove(out / "pages.csv")
    assert run_cli("evaluate", str(tmp_path / "none.json"), str(tmp_path / "none.json"), "--out", str(out))[0] == 2
    assert (elsewhere / "pages.csv").read_text() == "someone else's" and not (out / "pages.csv").exists() and not planted.exists()


def test_a_failed_evaluation_removes_the_folder_it_created(tmp_path):
    out = tmp_path / "new" / "out"
    code, _, err = run_cli("evaluate", str(tmp_path / "none.json"), str(tmp_path / "none.json"), "--out", str(out))
    assert code == 2 and "none.json" in err
    assert not (tmp_path / "new").exists()


def test_a_stop_signal_during_the_swap_ends_the_command_after_it(previous, tmp_path, monkeypatch):
    out, _ = previous
    other = write_json(tmp_path / "other.json", native("other", PREDICTED, 3))
    real_replace, calls = os.replace, []

    def signalled_at_the_third(source, target):  # report.json is in place, the old confusion.csv about to move aside
        calls.append(target)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        real_replace(source, target)

    monkeypatch.setattr(output.os, "replace", signalled_at_the_third)
    assert run_cli("evaluate", str(other), str(other), "--out", str(out), "--workers", "1") == (143, "", "tore: stopped by SIGTERM\n")
    after = snapshot(out)
    assert sorted(path.name for path in out.iterdir()) == sorted([*OUTPUT_FILES, *SAVED_FILES])  # no staging folder, no lock file
    assert json.loads(after["report.json"])["pages"] == 3 and after["pages.csv"].count(b"\n") == 4  # the whole new set


def layout_inside_out(out: Path, name: str) -> Path:
    out.mkdir(exist_ok=True)
    return write_json(out / name, native("gt", BOXES))


@pytest.mark.parametrize("name", ["report.json", "confusion.csv", "pages.csv"])
@pytest.mark.parametrize("link", [None, "symbolic", "hard"])
def test_an_input_that_is_one_of_the_results_is_refused_before_any_work(files, tmp_path, monkeypatch, name, link):
    out = tmp_path / "out"
    inside = layout_inside_out(out, name)
    given = {None: inside, "symbolic": tmp_path / "linked.json", "hard": tmp_path / "linked.json"}[link]
    if link == "symbolic":
        given.symlink_to(inside)
    elif link == "hard":
        os.link(inside, given)
    before = snapshot(out)
    monkeypatch.setattr("tore_engine.api.load_pair", lambda *a, **k: pytest.fail("loaded before the inputs were checked"))
    assert_one_paragraph_error(*run_cli("evaluate", str(files[0]), str(given), "--out", str(out)),
                               f"file {given}: is the same file as {inside}, which this run replaces with its results")
    assert snapshot(out) == before and sorted(path.name for path in out.iterdir()) == [name]


def test_a_label_map_that_is_one_of_the_results_is_refused(files, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    label_map = write_json(out / "report.json", {"a": "b"})
    assert_one_paragraph_error(*run_cli("evaluate", *map(str, files), "--out", str(out), "--label-map", str(label_map)),
                               f"file {label_map}: is the same file as {label_map}")
    assert json.loads(label_map.read_text()) == {"a": "b"}


def test_a_file_of_an_input_folder_that_is_one_of_the_results_is_refused(tmp_path):
    """A folder of DoclingDocuments used as --out: one named report.json is read, so it is not replaced."""
    pytest.importorskip("docling_core", reason="needs the 'docling' extra")
    from tests.helpers import small_layout
    from tore_engine.formats import docling

    folder = tmp_path / "documents"
    docling.write(small_layout("docs", [("report/1", [{"label": "text", "bbox": [0, 0, 5, 5]}]),
                                        ("other/1", [{"label": "text", "bbox": [2, 2, 8, 8]}])]), folder)
    before = snapshot(folder)
    assert_one_paragraph_error(*run_cli("evaluate", str(folder), str(folder), "--format", "docling", "--out", str(folder)),
                               f"file {folder / 'report.json'}: is the same file as {folder / 'report.json'}")
    assert snapshot(folder) == before and sorted(path.name for path in folder.iterdir()) == ["other.json", "report.json"]


# --- output modes ----------------------------------------------------------------------------------


def test_json_prints_the_report_file_byte_for_byte(files, tmp_path):
    result = subprocess.run([sys.executable, "-m", "tore_engine", "evaluate", *map(str, files), "--out", str(tmp_path / "o"), "--json"],
                            capture_output=True, timeout=HANG_BOUND_SECONDS)
    assert result.returncode == 0 and result.stderr == b""
    assert result.stdout == (tmp_path / "o" / "report.json").read_bytes()
    assert json.loads(result.stdout)["pages"] == 2


def test_quiet_prints_nothing(files, tmp_path):
    result = tore("evaluate", *map(str, files), "--out", str(tmp_path / "o"), "-q")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert sorted(path.name for path in (tmp_path / "o").iterdir()) == sorted([*OUTPUT_FILES, *SAVED_FILES])  # every result written all the same
    assert json.loads((tmp_path / "o" / "report.json").read_text())["pages"] == 2


def test_version():
    result = tore("--version")
    assert (result.returncode, result.stdout) == (0, f"tore {tore_engine.__version__}\n")


@pytest.mark.parametrize("mode", [["--json"], []])
def test_a_closed_stdout_ends_quietly(files, tmp_path, mode):
    """`tore evaluate ... | head -2` once head has gone: the results are written, and not a word."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    command = [sys.executable, "-m", "tore_engine", "evaluate", *map(str, files), "--out", str(tmp_path / "o"), "--workers", "1", *mode]
    try:
        result = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=HANG_BOUND_SECONDS)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (141, "")  # as a program that SIGPIPE ended, without a word
    assert json.loads((tmp_path / "o" / "report.json").read_text())["pages"] == 2


def test_the_summary_ranks_only_classes_the_reference_has_and_names_the_undefined_cases(tmp_path):
    # a on both sides, b only in the reference (never predicted), c only predicted, unused on neither side
    gt = write_json(tmp_path / "gt.json", layout_json("gt", native("gt", BOXES)["pages"], ["a", "b", "c", "unused"]))
    model = write_json(tmp_path / "model.json", native("model", PREDICTED))
    result = tore("evaluate", str(gt), str(model), "--out", str(tmp_path / "o"), "--workers", "1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    lowest = next(line for line in lines if line.startswith("Lowest F1: "))
    assert {"a", "b"} == {item.split()[0] for item in lowest[len("Lowest F1: "):].split(", ")}
    assert "Predicted only (no reference pixel: recall undefined, not ranked): c" in lines
    assert "Never predicted (no predicted pixel: precision undefined): b" in lines
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    per_class, means = report["per_class"], report["means"]
    assert (per_class["c"]["recall"], per_class["b"]["precision"]) == (None, None)
    assert per_class["unused"] == {"recall": None, "precision": None, "f1": None}
    assert per_class["c"]["precision"] == per_class["c"]["f1"] == per_class["b"]["recall"] == per_class["b"]["f1"] == 0.0
    assert (means["present_classes"]["classes"], means["present_classes"]["precision_classes"], means["all_classes"]["classes"]) == (2, 1, 5)
    assert means["present_classes"]["recall"] == (per_class["a"]["recall"] + 0.0) / 2
    assert means["present_classes"]["precision"] == per_class["a"]["precision"]
    assert f"over the 2 present in the reference recall {means['present_classes']['recall']:.4f}" in result.stdout
    assert "(precision over the 1 of them predicted)" in result.stdout
    assert f"over all 5, Background and absent classes included (as docling-metrics-layout) recall {means['all_classes']['recall']:.4f}" in result.stdout


# --- absurd numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["evaluate", "a", "b", "--out", "o", "--workers", "0"], "--workers: must be from 1 to 256, got '0'"),
        (["evaluate", "a", "b", "--out", "o", "--workers", "-2"], "--workers: must be from 1 to 256"),
        (["evaluate", "a", "b", "--out", "o", "--workers", "100000"], "--workers: must be from 1 to 256"),
        (["evaluate", "a", "b", "--out", "o", "--workers", "two"], "--workers: expected an integer, got 'two'"),
        (["evaluate", "a", "b", "--out", "o", "--min-score", "nan"], "--min-score: expected a finite number, got 'nan'"),
        (["score", "docile", "--dataset", "d", "--split", "s", "--iou-threshold", "nan"], "--iou-threshold: expected a finite number"),
        (["score", "docile", "--dataset", "d", "--split", "s", "--iou-threshold", "inf"], "--iou-threshold: expected a finite number"),
        (["score", "docile", "--dataset", "d", "--split", "s", "--iou-threshold", "1.5"], "--iou-threshold: must be from 0 to 1"),
        (["app", "--port", "0"], "--port: must be from 1 to 65535"),
        (["app", "--port", "70000"], "--port: must be from 1 to 65535"),
    ],
)
def test_numeric_options_are_checked_by_the_parser(argv, fragment):
    result = tore(*argv)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and fragment in result.stderr and "Traceback" not in result.stderr


# --- ambiguous classes -----------------------------------------------------------------------------


def test_classes_that_collide_after_prefixing_are_an_error(tmp_path):
    gt = write_json(tmp_path / "gt.json", native("r", [("a_b", [0, 0, 5, 5])]))
    model = write_json(tmp_path / "model.json", native("r_a", [("b", [0, 0, 5, 5])]))
    result = tore("evaluate", str(gt), str(model), "--out", str(tmp_path / "o"), "--taxonomy", "dual")
    assert_one_paragraph_error(result.returncode, result.stdout, result.stderr, "'r_a_b' (reference label 'a_b' and prediction label 'b')")
    assert not (tmp_path / "o").exists()


def test_a_box_labelled_background_is_an_error(tmp_path, files):
    model = write_json(tmp_path / "bg.json", native("model", [("Background", [0, 0, 5, 5])]))
    result = tore("evaluate", str(files[0]), str(model), "--out", str(tmp_path / "o"))
    assert_one_paragraph_error(result.returncode, result.stdout, result.stderr, "the prediction uses the label 'Background'", "--label-map")


def test_unused_label_map_keys_are_warned_in_the_report(tmp_path, files):
    label_map = write_json(tmp_path / "map.json", {"c": "a", "Tabel": "Table"})
    assert tore("evaluate", *map(str, files), "--out", str(tmp_path / "o"), "--label-map", str(label_map)).returncode == 0
    warnings = json.loads((tmp_path / "o" / "report.json").read_text())["warnings"]
    assert warnings[0] == {"page": None, "box": None, "side": None, "message": "label map key 'Tabel' is no label of the reference or the prediction; it had no effect"}
    assert not any("'c'" in w["message"] for w in warnings)


def test_a_label_that_is_not_valid_unicode_is_refused_before_anything_is_written(tmp_path, files):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(native("model", [("x", [0, 0, 5, 5])])).replace('"x"', '"\\ud800"'), encoding="ascii")
    result = tore("evaluate", str(files[0]), str(bad), "--out", str(tmp_path / "o"))
    assert_one_paragraph_error(result.returncode, result.stdout, result.stderr, str(bad))
    assert not (tmp_path / "o").exists()


# --- unexpected errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error, fragment",
    [
        (RuntimeError("boom"), "internal error (RuntimeError: boom); this is a bug in tore, please report it"),
        (MemoryError(), "out of memory"),
        (RecursionError("deep"), "nested too deeply"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "not valid UTF-8"),
        (PermissionError(errno.EACCES, "Permission denied", "/some/file"), "/some/file: Permission denied"),
    ],
)
def test_any_error_is_one_paragraph_without_a_traceback(files, tmp_path, monkeypatch, error, fragment):
    def fail(*_, **__):
        raise error

    monkeypatch.setattr("tore_engine.run.runner.evaluate_dataset", fail)
    monkeypatch.delenv("TORE_DEBUG", raising=False)
    assert_one_paragraph_error(*run_cli("evaluate", *map(str, files), "--out", str(tmp_path / "o"), "--workers", "1"), fragment)
    assert not (tmp_path / "o").exists()


def test_tore_debug_shows_the_traceback(files, tmp_path, monkeypatch):
    monkeypatch.setattr("tore_engine.run.runner.evaluate_dataset", lambda *_, **__: 1 / 0)
    monkeypatch.setenv("TORE_DEBUG", "1")
    code, stdout, stderr = run_cli("evaluate", *map(str, files), "--out", str(tmp_path / "o"), "--workers", "1")
    assert (code, stdout) == (2, "")
    assert "Traceback" in stderr and stderr.endswith("tore: error: internal error (ZeroDivisionError: division by zero); this is a bug in tore, please report it with the command line (set TORE_DEBUG=1 to see the traceback)\n")


# --- signals and orphaned workers ------------------------------------------------------------------

WORKER_EXIT_BOUND_SECONDS = 15  # workers notice within about a second (PARENT_POLL_SECONDS)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    """Inputs that keep two workers busy for several seconds."""
    folder = tmp_path_factory.mktemp("long")
    pages = [{"id": f"p{k}", "width": 1000, "height": 1000,
              "boxes": [{"label": f"c{j % 5}", "bbox": [(k * 37 + j * 101) % 800, (k * 53 + j * 67) % 900, (k * 37 + j * 101) % 800 + 150, (k * 53 + j * 67) % 900 + 80]} for j in range(12)]}
             for k in range(30_000)]  # about 4.5 s on 2 cores: the tests stop it long before
    return write_json(folder / "gt.json", layout_json("gt", pages)), write_json(folder / "model.json", layout_json("model", pages[::-1]))


def start_with_workers(long_run, out: Path) -> tuple[subprocess.Popen, list[int]]:
    command = [sys.executable, "-m", "tore_engine", "evaluate", *map(str, long_run), "--out", str(out), "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TORE_PAGE_KERNEL": "numpy"})
    deadline = time.monotonic() + HANG_BOUND_SECONDS
    while len(workers := children(process.pid)) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    return process, workers


def wait_until_gone(pids: list[int]) -> None:
    """Wait for the workers to end; kill any left over, so that a failure leaves no orphan behind."""
    deadline = time.monotonic() + WORKER_EXIT_BOUND_SECONDS
    try:
        while any(alive(pid) for pid in pids):
            assert time.monotonic() < deadline, f"workers still alive: {[pid for pid in pids if alive(pid)]}"
            time.sleep(0.1)
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


pytestmark_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytestmark_linux
def test_workers_exit_when_their_parent_is_killed(long_run, tmp_path):
    process, workers = start_with_workers(long_run, tmp_path / "o")
    process.kill()
    try:
        process.communicate(timeout=WORKER_EXIT_BOUND_SECONDS)  # it hung while the workers held the pipes
    finally:
        wait_until_gone(workers)
    assert not (tmp_path / "o" / "report.json").exists()
    left = sorted(path.name for path in (tmp_path / "o").iterdir())  # the killed run's: its lock ended with it
    assert len(left) == 2 and left[0] == output.LOCK_NAME and left[1].startswith(output.STAGING_PREFIX)
    small = write_json(tmp_path / "small.json", native("small", BOXES))
    assert run_cli("evaluate", str(small), str(small), "--out", str(tmp_path / "o"), "--workers", "1")[0] == 0
    assert sorted(path.name for path in (tmp_path / "o").iterdir()) == sorted([*OUTPUT_FILES, *SAVED_FILES])  # swept by the next run


@pytestmark_linux
@pytest.mark.parametrize("number, name", [(signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP"), (signal.SIGINT, None)])
def test_stop_signals_stop_the_workers_with_a_one_line_message(long_run, tmp_path, number, name):
    process, workers = start_with_workers(long_run, tmp_path / "o")
    process.send_signal(number)
    try:
        stdout, stderr = process.communicate(timeout=WORKER_EXIT_BOUND_SECONDS)
    finally:
        if process.poll() is None:  # hung: leave no process behind
            process.kill()
            process.communicate()
        wait_until_gone(workers)
    assert (process.returncode, stdout) == (128 + number, ""), stderr
    assert stderr == (f"tore: stopped by {name}\n" if name else "tore: interrupted\n")
    assert not (tmp_path / "o").exists()  # its staging folder removed, then the folder made for the run


@pytestmark_linux
def test_a_second_run_into_the_same_out_fails_at_once_and_mixes_nothing(long_run, previous):
    out, before = previous
    first, workers = start_with_workers(long_run, out)  # it holds --out from before its workers start
    try:
        second = tore("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(out))
    finally:
        first.send_signal(signal.SIGTERM)
        try:
            first.communicate(timeout=WORKER_EXIT_BOUND_SECONDS)
        finally:
            wait_until_gone(workers)
    assert_one_paragraph_error(second.returncode, second.stdout, second.stderr,
                               f"another tore run is writing into --out {out} (process {first.pid}); wait for it to end")
    assert first.returncode == 128 + signal.SIGTERM
    assert snapshot(out) == before and sorted(path.name for path in out.iterdir()) == sorted(before)


class SignalsWhenCollected:
    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # handled inside this finaliser, where Python drops exceptions


def test_a_stop_dropped_inside_a_finaliser_is_raised_again(files, tmp_path, monkeypatch):
    def evaluate(*_, **__):
        SignalsWhenCollected()
        time.sleep(HANG_BOUND_SECONDS)
        pytest.fail("the stop was lost")

    monkeypatch.setattr("tore_engine.run.runner.evaluate_dataset", evaluate)
    assert run_cli("evaluate", *map(str, files), "--out", str(tmp_path / "o"), "--workers", "1") == (143, "", "tore: stopped by SIGTERM\n")
    assert not (tmp_path / "o").exists()


# --- mutated and damaged input files ---------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations(VALID_NATIVE), mutations(VALID_NATIVE))
def test_evaluate_on_mutated_files_exits_0_or_2(tmp_path, reference, prediction):
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(reference), encoding="utf-8")
    model = tmp_path / "model.json"
    model.write_text(json.dumps(prediction), encoding="utf-8")
    code, out, err = run_cli("evaluate", str(gt), str(model), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.startswith("tore: error: ") and err.count("\n") == 1


@pytest.mark.parametrize("damage", ["truncate", "latin1", "empty", "binary"])
def test_damaged_files_give_one_paragraph(tmp_path, damage):
    text = json.dumps(VALID_NATIVE).encode()
    data = {"truncate": text[: len(text) // 2], "latin1": text.replace(b'"m"', b'"\xe9"'), "empty": b"", "binary": bytes(range(256))}[damage]
    (tmp_path / "gt.json").write_bytes(data)
    write_json(tmp_path / "model.json", VALID_NATIVE)
    code, out, err = run_cli("evaluate", str(tmp_path / "gt.json"), str(tmp_path / "model.json"), "--out", str(tmp_path / "o"))
    assert code == 2 and out == "" and str(tmp_path / "gt.json") in err


def test_a_run_leaves_no_report_of_a_previous_run_beside_its_own(tmp_path):
    """Issue 42 C3 (tore_engine.writers.staging): run 1 (model A) asks for the workbook, cells.csv
    and the sweep, run 2 (model B) into the same --out for none of them: --out then holds run 2's
    files only, and the user's own file."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("the user's")
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(out), "--xlsx", "--cells", "--sweep", "-q")
    assert code == 0, err
    assert {"report.xlsx", "cells.csv", "sweep.csv"} <= {path.name for path in out.iterdir()}
    code, _, err = run_cli("evaluate", str(DEMO / "reference.json"), str(DEMO / "model_b.json"), "--out", str(out), "-q")
    assert code == 0, err
    assert sorted(path.name for path in out.iterdir()) == sorted([*outputs.output_files(), *SAVED_FILES, "notes.txt"])


@pytest.mark.parametrize(("box", "score", "convention"), [([-1e300, -1e300, 1e300, 1e300], 0.9, "coco"), ([-1e300, -1e300, 1e300, 1e300], 0.9, "docling"),
                                                         ([10, 10, 50, 50], 1e308, "docling")])
def test_a_successful_map_run_with_values_beyond_the_float_range_keeps_stderr_clean(tmp_path, box, score, convention):
    """Issue 42 C6 (tore_engine.metrics.map_types, map_numpy): NumPy's overflow warnings, with their
    source lines, reached stderr of a run that succeeded."""
    reference = layout_json("gt", [{"id": "p1", "width": 100, "height": 100, "boxes": [{"label": "Text", "bbox": [10, 10, 50, 50]}]}])
    prediction = layout_json("model", [{"id": "p1", "width": 100, "height": 100, "boxes": [{"label": "Text", "bbox": box, "score": score},
                                                                                          {"label": "Text", "bbox": [10, 10, 50, 50], "score": 0.5}]}])
    code, out, err = run_cli("evaluate", str(write_json(tmp_path / "gt.json", reference)), str(write_json(tmp_path / "model.json", prediction)),
                             "--out", str(tmp_path / "out"), "--map", convention, "-q")
    assert (code, out, err) == (0, "", "")
    assert json.loads((tmp_path / "out" / "report.json").read_text())["map"]["map"] is not None
