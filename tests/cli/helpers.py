"""What the command-line tests share: `tore` run in this process (its output captured, a clean exit
checked), and a DocILE dataset folder made of one document."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from tests.helpers import DOCILE_ID
from tests.helpers import write_json as write
from tore_engine.cli import main


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def exits_cleanly(*args: str) -> None:
    code, out, err = run_cli(*args)
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.startswith("tore: error: ")


def docile_dataset(root: Path, annotation, ocr) -> Path:
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "ocr").mkdir(exist_ok=True)
    write(root / "annotations" / f"{DOCILE_ID}.json", annotation)
    write(root / "ocr" / f"{DOCILE_ID}.json", ocr)
    write(root / "dev.json", [DOCILE_ID])
    return root
