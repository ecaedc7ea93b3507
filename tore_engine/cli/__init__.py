"""The `tore` command line.

Each sub-command lives in its own module with an `add_parser(subparsers)` function that registers
it and sets `func`. Modules are imported lazily so that `tore evaluate` never pays for a scorer's
dependencies. Every command runs under one guard (`main`): whatever goes wrong, bad input or a
full disk or a bug, ends as one paragraph on stderr, nothing on stdout and exit code 2
(docs/cli.md#tore-score); a traceback only when TORE_DEBUG=1 asks for it.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import signal
import sys
import threading
import traceback
import warnings
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from typing import NoReturn

from tore_engine import __version__
from tore_engine.core.errors import InputError, ToreWarning
from tore_engine.core.extras import install_command
from tore_engine.core.signals import Stopped, describe, stops_raised
from tore_engine.core.text_safety import terminal_text

DEBUG_VARIABLE = "TORE_DEBUG"  # set to 1: print the traceback of an unexpected error too
EXIT_ERROR = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_BROKEN_PIPE = 128 + 13  # as a program killed by SIGPIPE

# (command group, module) in the order `tore --help` lists them.
EVALUATE_MODULE = "tore_engine.cli.evaluate"
APP_MODULE = "tore_engine.cli.app"
EXPORT_MODULE = "tore_engine.cli.export"
SCORE_MODULES: dict[str, str] = {
    "docile": "tore_engine.cli.score_docile",
    "funsd": "tore_engine.cli.score_funsd",  # also adds `ec-funsd`
    "omnidocbench": "tore_engine.cli.score_omnidocbench",
}
# The extra (pyproject.toml) that installs each optional library: a command that needs a missing one
# says which extra to install instead of reporting a bug.
EXTRA_OF_MODULE: dict[str, str] = {
    **dict.fromkeys(("scipy", "sklearn", "seqeval", "rapidfuzz", "faster_coco_eval", "apted", "lxml", "pylatexenc"), "scores"),
    **dict.fromkeys(("streamlit", "plotly", "pymupdf", "fitz"), "app"),
    **dict.fromkeys(("dask", "distributed"), "dask"),
    "docling_core": "docling",
    "pyarrow": "parquet",
}


class ToreParser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (the usage block would make it several)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = ToreParser(
        prog="tore",
        description=(
            "TORE Studio: pixel-level, taxonomy-invariant evaluation of document layout analysis "
            "(multi-label confusion matrices after Krstinic et al. 2020), and the scores of "
            "DocILE, FUNSD/EC-FUNSD and OmniDocBench."
        ),
    )
    parser.add_argument("--version", action="version", version=f"tore {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    importlib.import_module(EVALUATE_MODULE).add_parser(commands)
    importlib.import_module(APP_MODULE).add_parser(commands)
    importlib.import_module(EXPORT_MODULE).add_parser(commands)
    if SCORE_MODULES:
        score = commands.add_parser(
            "score",
            help="benchmark scores computed as their official evaluators do",
            description="Benchmark scores computed as their official evaluators do.",
        )
        benchmarks = score.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
        for module in SCORE_MODULES.values():
            importlib.import_module(module).add_parser(benchmarks)
    return parser


def _paragraph(error: Exception) -> str:
    """What went wrong, in one paragraph a user can act on."""
    if isinstance(error, InputError):
        return error.paragraph()
    if isinstance(error, ModuleNotFoundError) and (extra := EXTRA_OF_MODULE.get(library := (error.name or "").partition(".")[0])):
        return f"this needs the '{extra}' extra ({library} is not installed): {install_command(extra)}"
    if isinstance(error, BrokenProcessPool):
        return "a worker process ended abruptly (killed, or out of memory); try fewer --workers"
    if isinstance(error, MemoryError):
        return "out of memory: the input is too large for this machine (fewer --workers need less)"
    if isinstance(error, RecursionError):
        return "the input is nested too deeply to process"
    if isinstance(error, UnicodeError):
        return f"text that is not valid UTF-8 or Unicode: {error}"
    if isinstance(error, OSError):
        return f"{error.filename}: {error.strerror}" if error.filename and error.strerror else f"system error: {error}"
    return (
        f"internal error ({type(error).__name__}: {error}); this is a bug in tore, please report it with "
        f"the command line (set {DEBUG_VARIABLE}=1 to see the traceback)"
    )


def _say(message: str) -> None:
    """One line on stderr; a name in it (a file name in an OSError) shows its control characters escaped."""
    with suppress(OSError):  # stderr itself may be closed
        print(f"tore: {terminal_text(' '.join(message.split()))}", file=sys.stderr)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the flush at exit fails no more."""
    with suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def console() -> NoReturn:
    """The `tore` program: `main`, then the process ends without the interpreter's teardown, which
    frees every module one by one and, once numba's kernels are loaded, takes 0.15-0.2 s of every
    run (a 1,000-page evaluation is 0.8 s). A finished command has written and closed its files;
    the exit handlers still run (temporary folders, multiprocessing's), and standard output and
    error are flushed. While a thread other than the main one still runs (a server's), or where a
    flush fails, the interpreter ends as usual."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate() if thread is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    with suppress(OSError, ValueError):  # what the handlers wrote
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run one `tore` command; usage errors leave through argparse (exit 2, one line), everything
    else through this guard."""
    try:
        with stops_raised(_say), warnings.catch_warnings():
            warnings.simplefilter("ignore", ToreWarning)  # the notebook's summary: report.json lists the warnings themselves
            args = build_parser().parse_args(argv)
            code = int(args.func(args) or 0)
            sys.stdout.flush()  # a closed stdout must fail here, inside the guard
        return code
    except BrokenPipeError:  # `tore ... | head`: the reader has what it wanted
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Stopped as stop:
        _say(describe(stop.signum))
        return 128 + stop.signum
    except KeyboardInterrupt:
        _say("interrupted")
        return EXIT_INTERRUPTED
    except Exception as error:
        if os.environ.get(DEBUG_VARIABLE) == "1":
            traceback.print_exc()
        _say(f"error: {_paragraph(error)}")
        return EXIT_ERROR
