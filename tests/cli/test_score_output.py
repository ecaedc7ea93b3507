"""What `tore score` prints (tore_engine.cli.score_output): names from the input reach the terminal
escaped, in the warnings, the human summary and the JSON."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from tests.cli.helpers import docile_dataset, run_cli
from tests.helpers import DOCILE_ID
from tests.helpers import write_json as write
from tore_engine.cli.score_output import print_result

CURSOR_UP_ERASE = "\x1b[2A\x1b[2K"


class NamedResult:
    """A scorer's result whose warnings and JSON carry hostile names."""

    warnings = [f"file a{CURSOR_UP_ERASE}b.json ignored", "two\nlines, reversed \u202eabc"]

    def to_json(self) -> dict[str, Any]:
        return {"page": "csi\x9b2J bidi\u2066x\u2069 nul\x00", "score": 0.5}

    def summary(self) -> str:
        return "a summary"


def test_warnings_are_one_escaped_line_each_and_json_is_ascii(capsys):
    assert print_result(NamedResult(), as_json=True) == 0
    out, err = capsys.readouterr()
    assert err == "tore: file a\\x1b[2A\\x1b[2Kb.json ignored\ntore: two\\nlines, reversed \\u202eabc\n"
    assert out.isascii() and json.loads(out) == NamedResult().to_json()


def test_a_docile_fieldtype_that_moves_the_cursor_is_shown_escaped(tmp_path, docile_files):
    _, annotation, ocr, predictions = docile_files
    hostile = f"total{CURSOR_UP_ERASE}\x00\nKILE: primary metric AP = 0.9990"
    original = annotation["field_extractions"][0]["fieldtype"]
    annotation = annotation | {"field_extractions": [field | {"fieldtype": hostile} if field["fieldtype"] == original else field
                                                     for field in annotation["field_extractions"]]}
    fields = [field | {"fieldtype": hostile} if field["fieldtype"] == original else field for field in predictions[DOCILE_ID]]
    root = docile_dataset(tmp_path / "dataset", annotation, ocr)
    write(tmp_path / "kile.json", {DOCILE_ID: fields})
    code, out, err = run_cli("score", "docile", "--dataset", str(root), "--split", "dev", "--kile", str(tmp_path / "kile.json"))
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert not [character for line in lines for character in line if unicodedata.category(character) == "Cc"]
    shown = [line for line in lines if "total\\x1b[2A\\x1b[2K\\x00\\nKILE: primary metric AP = 0.9990" in line]
    assert len(shown) == 1 and shown[0].startswith("  total")  # one row of the fieldtype table, not a forged headline
    assert [line for line in lines if line.startswith("KILE: primary metric")] == ["KILE: primary metric AP = 1.0000"]
