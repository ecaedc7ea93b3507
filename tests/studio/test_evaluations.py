"""The evaluation store: the label map applied once, the cache keyed by all that is shown, pages
looked up one at a time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.helpers import DEMO
from tests.studio.helpers import _app, _axes, _figures, _heatmaps, _no_exception, _title, open_page
from tore_engine.api import evaluate as api_evaluate
from tore_engine.api import load_pair
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet, Page, PageColumns
from tore_engine.studio import evaluations
from tore_engine.studio.data_root import DATA_ROOT_VARIABLE


def _fresh_store(monkeypatch) -> evaluations.EvaluationStore:
    store = evaluations.EvaluationStore()
    monkeypatch.setattr(evaluations, "evaluation_store", lambda: store)
    return store


def test_a_chained_label_map_is_applied_once_to_the_numbers_and_the_boxes(tmp_path, monkeypatch):
    mapping = {"Title": "Section-header", "Section-header": "Text", "No such class": "Text"}
    (tmp_path / "map.json").write_text(json.dumps(mapping), encoding="utf-8")
    monkeypatch.setenv(DATA_ROOT_VARIABLE, "/")
    store = _fresh_store(monkeypatch)
    at = _app(map=str(tmp_path / "map.json"))
    _no_exception(at)
    (evaluated,) = store._entries.values()
    engine = api_evaluate(*load_pair(DEMO / "reference.json", DEMO / "model_a.json"), label_map=mapping)
    assert np.array_equal(evaluated.evaluation.matrices.full.confusion, engine.matrices.full.confusion)
    assert [w.to_json() for w in evaluated.evaluation.input_warnings] == [w.to_json() for w in engine.input_warnings]
    assert "label map key 'No such class'" in evaluated.evaluation.input_warnings[0].message
    original, _ = load_pair(DEMO / "reference.json", DEMO / "model_a.json")
    for page_id in ("report-a/p1", "paper-b/p1"):  # boxes drawn with the labels the matrix counted
        assert evaluated.reference_page(page_id).labels == [mapping.get(label, label) for label in original.pages[
            original.page_ids().index(page_id)].labels]
    drawn = {label for page_id in engine.page_ids for label in evaluated.reference_page(page_id).labels}
    assert "Title" not in drawn and "Section-header" in drawn  # once: Title became Section-header, not Text
    assert _axes(_heatmaps(at)[0])[0] == ["Background", *[c for c in engine.matrices.full.rows[1:]]]


def test_each_model_keeps_its_own_title_when_both_are_the_same_file(monkeypatch):
    monkeypatch.setenv(DATA_ROOT_VARIABLE, "/")
    _fresh_store(monkeypatch)
    model = str(DEMO / "model_a.json")
    at = _app(src="path", ref=str(DEMO / "reference.json"), a=model, b=model)
    open_page(at, "compare").run()
    _no_exception(at)
    titles = [_title(chart).split(": ", 1)[1] for chart in _figures(at)[:2]]
    assert titles == ["model A (model-a)", "model B (model-a)"]  # the layout's own name


class CountingColumns(PageColumns):
    """Page columns that count the pages made from them."""

    made = 0

    def __getitem__(self, position):
        CountingColumns.made += 1
        return super().__getitem__(position)


def test_pages_are_made_one_at_a_time_on_demand():
    pages = [Page(f"p{k}", 100, 50, ["Text"], [[k, 0, k + 10, 10]]) for k in range(1000)]
    reference = LayoutSet("gt", CountingColumns.from_pages(pages))
    prediction = LayoutSet("model", CountingColumns.from_pages(pages[::-1]))
    CountingColumns.made = 0
    evaluated = evaluations.Evaluated("model A", reference, prediction, evaluation=None)
    assert evaluated.reference_page("p7").bboxes.tolist() == [[7, 0, 17, 10]]
    assert evaluated.prediction_page("p7").id == "p7" and evaluated.prediction_page("nowhere") is None
    assert CountingColumns.made == 2


def _demo_evaluated() -> evaluations.Evaluated:
    from tore_engine.api import evaluate_pair

    pair = evaluate_pair(DEMO / "reference.json", DEMO / "model_a.json")
    return evaluations.Evaluated("model A", pair.reference, pair.prediction, pair.evaluation)


def test_held_bytes_counts_the_evaluations_and_the_layouts_arrays_once():
    evaluated = _demo_evaluated()
    evaluation, columns = evaluated.evaluation, evaluated.reference.pages
    assert isinstance(columns, PageColumns)
    some = sum(array.nbytes for array in (evaluation.contribution_offsets, evaluation.contribution_cell, evaluation.contribution_value,
                                          columns.bboxes, columns.codes, columns.offsets))
    held = evaluations.held_bytes(evaluated)
    assert some <= held < 8 * some  # and mAP's records, TIDE's per-box decisions, the page scores: not a copy of all
    assert evaluations.held_bytes([evaluated, evaluated, evaluated.titled("again")]) == held  # shared arrays counted once


def test_the_store_keeps_what_its_budget_holds_the_newest_always():
    first, second = _demo_evaluated(), _demo_evaluated()
    size = evaluations.held_bytes(first)
    roomy = evaluations.EvaluationStore(budget=3 * size)
    roomy.put(("a",), first)
    roomy.put(("b",), second)
    assert roomy.get(("a",)) is first and roomy.get(("b",)) is second
    tight = evaluations.EvaluationStore(budget=size + size // 2)
    tight.put(("a",), first)
    tight.put(("b",), second)  # both would hold more than the budget: the least recently used leaves
    assert tight.get(("a",)) is None and tight.get(("b",)) is second
    tiny = evaluations.EvaluationStore(budget=1)
    tiny.put(("a",), first)
    assert tiny.get(("a",)) is first  # the one just made is kept whatever its size


def test_the_store_budget_comes_from_the_operator(monkeypatch):
    monkeypatch.setenv(evaluations.STORE_BUDGET_VARIABLE, "3")
    assert evaluations.EvaluationStore()._budget == 3 * 2**20
    monkeypatch.setenv(evaluations.STORE_BUDGET_VARIABLE, "lots")
    with pytest.raises(InputError, match="TORE_STUDIO_STORE_BUDGET is not a whole number of megabytes"):
        evaluations.EvaluationStore()
