"""The Python API of formats.md section 7 (tore_engine/__init__.py: `tore.evaluate`, `tore.compare`,
`tore.load`), and the README's "From Python" example run as written."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tore_engine as tore
from tests.helpers import DEMO, REPOSITORY, load_shared_json


@pytest.fixture(scope="module")
def demo():
    return tore.evaluate(DEMO / "reference.json", DEMO / "model_a.json"), tore.evaluate(DEMO / "reference.json", DEMO / "model_b.json")


def test_reprs_are_one_short_line(demo):
    a, b = demo
    for text in (repr(a), repr(b), repr(tore.compare(a, b)), repr(tore.load(DEMO / "reference.json"))):
        assert "\n" not in text and len(text) < 160


def test_paths_and_layout_sets_give_the_same_evaluation(tmp_path):
    paper = load_shared_json("vectors", "tore_paper_example.json")
    from tore_engine.formats.native import from_document

    reference, prediction = from_document(paper["reference"]), from_document(paper["prediction"])
    by_sets = tore.evaluate(reference, prediction)
    assert [[float(v) for v in row] for row in by_sets.confusion.to_numpy()] == by_sets.matrices.full.confusion.tolist()
    assert by_sets.trimmed.confusion.to_numpy().round(2).tolist() == [[1.0, 0.33, 0.33, 0.33], [0.83, 4.67, 0.5, 0.0], [1.33, 1.0, 1.67, 0.0], [1.0, 0.0, 0.5, 1.5]]


def test_compare_gives_per_class_and_per_page_deltas(demo):
    a, b = demo
    comparison = tore.compare(a, b)
    pages = comparison.pages
    assert pages.index.tolist() == a.page_ids
    f1 = a.pages["foreground_f1"].to_dict()
    assert pages["f1_a"].to_dict() == f1
    assert np.allclose(pages["b_minus_a"], pages["f1_b"] - pages["f1_a"])
    shares = comparison.per_class
    for model in ("a", "b"):
        assert np.allclose(shares[[f"background_{model}", f"own_class_{model}", f"elsewhere_{model}"]].sum(axis=1), 1.0)
    text = a.matrices.full.recall[a.classes.index("Text")]
    assert shares.loc["Text", "own_class_a"] == text[a.classes.index("Text")] and shares.loc["Text", "background_a"] == text[0]


def readme_example() -> str:
    text = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    match = re.search(r"## From Python\n.*?```python\n(.*?)```", text, re.DOTALL)
    assert match, "README has a 'From Python' section with a python block"
    return match.group(1)


def test_the_readme_example_runs(tmp_path, monkeypatch):
    example = readme_example()
    assert len(example.strip().splitlines()) <= 12
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(example.replace("tore_engine/demo/data", str(DEMO)), "README.md", "exec"), namespace)
    assert isinstance(namespace["ev"], tore.Evaluation)
