"""The Python API of docs/api.md (tore_engine/__init__.py: `tore.evaluate`, `tore.compare`,
`tore.load`), its one summary warning (and the CLI's silence about it), and the example at the top of
docs/api.md run as written."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import tore_engine as tore
from tests.helpers import DEMO, REPOSITORY, load_vector, write_json
from tests.helpers import small_layout as _layout
from tore_engine.cli import main


@pytest.fixture(scope="module")
def demo():
    return tore.evaluate(DEMO / "reference.json", DEMO / "model_a.json"), tore.evaluate(DEMO / "reference.json", DEMO / "model_b.json")


def test_reprs_are_one_short_line(demo):
    a, b = demo
    for text in (repr(a), repr(b), repr(tore.compare(a, b)), repr(tore.load(DEMO / "reference.json"))):
        assert "\n" not in text and len(text) < 160


def test_paths_and_layout_sets_give_the_same_evaluation(tmp_path):
    paper = load_vector("tore_paper_example.json")
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
    text = (REPOSITORY / "docs" / "api.md").read_text(encoding="utf-8")
    match = re.search(r"# The Python API\n.*?```python\n(.*?)```", text, re.DOTALL)
    assert match, "docs/api.md opens with a python block"
    return match.group(1)


def test_the_readme_example_runs(tmp_path, monkeypatch):
    example = readme_example()
    assert len(example.strip().splitlines()) <= 12
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(example.replace("tore_engine/demo/data", str(DEMO)), "docs/api.md", "exec"), namespace)
    assert isinstance(namespace["ev"], tore.Evaluation)


def _every_engine_warning(tmp_path):
    """Paths of a reference and a prediction, and a label map, that between them make every kind of
    warning the readers and the engine report for native files."""
    reference = {"name": "gt", "pages": [
        {"id": "p1", "width": 10, "height": 10, "image": "/etc/passwd", "boxes": [
            {"label": "Text", "bbox": [0, 0, 12, 2]}, {"label": "Text", "bbox": [20, 20, 30, 30]}]},
        {"id": "p2", "width": 10, "height": 10, "boxes": [{"label": "Text", "bbox": [0, 0, 5, 5]}]},
    ]}
    prediction = {"name": "model", "pages": [
        {"id": "p1", "width": 10, "height": 10, "boxes": [{"label": "Text", "bbox": [0, 0, 5, 5], "score": 0.1}]},
        {"id": "extra", "width": 10, "height": 10, "boxes": []},
    ]}
    return write_json(tmp_path / "gt.json", reference), write_json(tmp_path / "model.json", prediction), {"Tabel": "Table"}


def _tore_warnings(caught) -> list[str]:
    return [str(warning.message) for warning in caught if issubclass(warning.category, tore.ToreWarning)]


def test_one_warning_sums_up_an_evaluations_input_warnings(tmp_path):
    reference, prediction, label_map = _every_engine_warning(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = tore.evaluate(reference, prediction, label_map=label_map, min_score=0.5)
    assert _tore_warnings(caught) == [
        "7 input warnings (1 unused label-map key, 1 page image outside its folder, 1 prediction page without reference, "
        "1 page with boxes below the minimum score dropped, 1 box painting no pixel, 1 box clipped, 1 page without prediction): "
        "see the evaluation's .warnings"]
    assert len(ev.warnings) == 7 and caught[0].filename == __file__  # the notebook's own line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        layout = tore.load(reference)
        pair = tore.load_pair(reference, prediction)
        tore.evaluate(*pair)
    assert _tore_warnings(caught) == [
        "1 input warning (1 page image outside its folder): see the layout set's .warnings",
        "1 input warning (1 page image outside its folder): see the layout sets' .warnings",
        "5 input warnings (1 page image outside its folder, 1 prediction page without reference, 1 box painting no pixel, 1 box clipped, "
        "1 page without prediction): see the evaluation's .warnings"]
    assert layout.warnings == pair[0].warnings


def test_an_evaluation_without_input_warnings_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = tore.evaluate(_layout("gt", [("p", [{"label": "Text", "bbox": [0, 0, 5, 5]}])]), _layout("m", [("p", [])]))
    assert ev.warnings == []


def test_the_cli_lists_the_warnings_in_report_json_and_says_nothing_of_them(tmp_path, capsys):
    reference, prediction, label_map = _every_engine_warning(tmp_path)
    mapping = write_json(tmp_path / "map.json", label_map)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["evaluate", str(reference), str(prediction), "--label-map", str(mapping), "--min-score", "0.5", "--out", str(tmp_path / "out")])
    assert code == 0 and _tore_warnings(caught) == [] and capsys.readouterr().err == ""
    assert len(json.loads((tmp_path / "out" / "report.json").read_text())["warnings"]) == 7


def test_evaluate_maps_page_ids_and_refuses_ids_that_match_nothing():
    """Issue 36 N2 in the notebook: `page_id_map=` as the CLI's --page-id-map."""
    import dataclasses

    from tore_engine.core.errors import InputError

    reference, prediction = tore.load(DEMO / "reference.json"), tore.load(DEMO / "model_a.json")
    prefixed = dataclasses.replace(prediction, pages=[dataclasses.replace(page, id=f"doc_{page.id}") for page in prediction.pages])
    with pytest.raises(InputError, match="strip-prefix:doc_"):
        tore.evaluate(reference, prefixed, map="off")
    mapped = tore.evaluate(reference, prefixed, map="off", page_id_map="strip-prefix:doc_")
    assert mapped.to_json() == tore.evaluate(reference, prediction, map="off").to_json()
    assert mapped.paired_pages == len(reference.pages)
    with pytest.warns(tore.ToreWarning):  # a table key that is no prediction page id is said, not ignored
        typo = tore.evaluate(reference, prefixed, map="off", page_id_map=[{"doc_no such page": "x"}, "strip-prefix:doc_"])
    assert "page id map key 'doc_no such page' is no prediction page id; it had no effect" in [w["message"] for w in typo.warnings]
