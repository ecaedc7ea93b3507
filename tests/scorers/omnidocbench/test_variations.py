"""The held-out variations of the demo (tests/omnidocbench/variations.py: merged and split
paragraphs, reordered blocks, dropped tables, pipe, LaTeX and HTML tables, inline against display
formulas, changed delimiters, hallucinated text, empty and missing pages, alternative file names),
generated here from the demo and scored: every metric and every page equals what the official
evaluator gave on the same files (variation_results.json, see its `_source`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import shared_path
from tests.scorers.omnidocbench.helpers import DEMO, assert_close
from tests.scorers.omnidocbench.variations import VARIATIONS, write_variation
from tore_engine.scorers.omnidocbench.end_to_end import score_end_to_end
from tore_engine.scorers.omnidocbench.markdown import load_markdown_predictions

EXPECTED = json.loads((Path(__file__).parent / "variation_results.json").read_text(encoding="utf-8"))
PAGE_KEYS = ("text_edit", "formula_edit", "table_edit", "table_teds", "table_teds_s", "reading_order_edit")


@pytest.mark.parametrize("name", VARIATIONS)
def test_variation_equals_the_official(name, reference, tmp_path):
    folder = write_variation(name, shared_path(*DEMO, "pred_end2end_markdown"), tmp_path / name)
    scores = score_end_to_end(reference, load_markdown_predictions(folder, reference))
    expected = EXPECTED[name]
    official = scores["official"]
    assert_close({element: official[element]["all"] for element in expected["all"]}, expected["all"])
    assert_close({key: official[key.split(".")[0]]["page"][key.split(".")[1]]["ALL"] for key in expected["page_all"]},
                 expected["page_all"])
    pages = {row["page"]: {key: row[key] for key in PAGE_KEYS if row[key] is not None} for row in scores["per_page"]}
    assert_close({page: values for page, values in pages.items() if values}, expected["pages"])
