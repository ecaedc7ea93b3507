"""The `tore` program (`cli.console`): it ends without the interpreter's teardown, yet with its
output whole, its exit handlers run and its exit code; and as usual while another thread runs.
Whether it unwound is told by a `finally` around it, which only a normal exit runs."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import DEMO

PROGRAM = """
import atexit, sys, threading
atexit.register(print, "exit handler")
unwound = threading.Event()
if {thread}:  # a thread that ends only once the program has unwound
    threading.Thread(target=lambda: (unwound.wait(), print("thread done", flush=True))).start()
sys.argv = ["tore", *{arguments!r}]
from tore_engine.cli import console
try:
    console()
finally:
    print("unwound", flush=True)
    unwound.set()
"""


def run(arguments: list[str], thread: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM.format(arguments=arguments, thread=thread)], capture_output=True, text=True, timeout=120)


def test_a_finished_command_skips_the_teardown_but_not_its_output_nor_the_exit_handlers(tmp_path):
    result = run(["evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(tmp_path / "out"), "--json", "--map", "off"])
    assert result.returncode == 0, result.stderr
    report, _, rest = result.stdout.rpartition("}\n")
    assert json.loads(report + "}") == json.loads((tmp_path / "out" / "report.json").read_text())
    assert rest == "exit handler\n"  # not unwound


def test_bad_input_keeps_its_exit_code_and_message(tmp_path):
    result = run(["evaluate", str(DEMO / "reference.json"), str(tmp_path / "missing.json"), "--out", str(tmp_path / "out")])
    assert result.returncode == 2 and result.stdout == "exit handler\n"
    assert result.stderr.startswith("tore: error: ") and "missing.json" in result.stderr


def test_while_another_thread_runs_the_interpreter_ends_as_usual(tmp_path):
    result = run(["evaluate", str(DEMO / "reference.json"), str(tmp_path / "missing.json"), "--out", str(tmp_path / "out")], thread=True)
    assert result.returncode == 2
    assert result.stdout.splitlines() == ["unwound", "thread done", "exit handler"]
