"""The `tore` command line.

Each sub-command lives in its own module with an `add_parser(subparsers)` function that registers
it and sets `func`. Modules are imported lazily so that `tore evaluate` never pays for a scorer's
dependencies. Bad input ends as one paragraph on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tore_engine.errors import InputError

# (command group, module) in the order `tore --help` lists them.
EVALUATE_MODULE = "tore_engine.cli.evaluate"
APP_MODULE = "tore_engine.cli.app"
SCORE_MODULES: dict[str, str] = {
    "docile": "tore_engine.cli.score_docile",
    "funsd": "tore_engine.cli.score_funsd",  # also adds `ec-funsd`
    "omnidocbench": "tore_engine.cli.score_omnidocbench",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tore",
        description=(
            "TORE Studio: pixel-level, taxonomy-invariant evaluation of document layout analysis "
            "(multi-label confusion matrices after Krstinic et al. 2020), and the scores of "
            "DocILE, FUNSD/EC-FUNSD and OmniDocBench."
        ),
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    importlib.import_module(EVALUATE_MODULE).add_parser(commands)
    importlib.import_module(APP_MODULE).add_parser(commands)
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as error:
        print(f"tore: error: {error.paragraph()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tore: interrupted", file=sys.stderr)
        return 130
