"""The page id map (tore_engine.formats.page_id_map): rules, tables in JSON and CSV checked as
untrusted input, and the rule suggested when no id matches, against a brute force over every affix."""

from __future__ import annotations

import json

import pytest

from tore_engine.core.errors import InputError
from tore_engine.formats.page_id_map import PageIdMap, apply_rule, page_id_map, suggested_rule, unmatched_ids_error


def test_rules_map_ids_and_leave_others_as_they_are():
    assert apply_rule(("strip-prefix", "doc_"), "doc_page_1") == "page_1"
    assert apply_rule(("strip-prefix", "doc_"), "page_1") == "page_1"
    assert apply_rule(("strip-suffix", ".png"), "p1.png") == "p1"
    assert apply_rule(("add-prefix", "a/"), "p1") == "a/p1"
    assert apply_rule(("add-suffix", "/1"), "doc") == "doc/1"
    both = page_id_map([{"odd": "page_9"}, "strip-prefix:doc_"])
    assert both.mapped(["odd", "doc_page_1", "page_2"]) == ["page_9", "page_1", "page_2"]  # the table first, then the rule


def test_tables_in_json_and_csv(tmp_path):
    (tmp_path / "map.json").write_text(json.dumps({"x1": "page_1", "x2": "page,2"}))
    (tmp_path / "map.csv").write_text('prediction,reference\nx1,page_1\nx2,"page,2"\n')
    assert page_id_map(tmp_path / "map.json").table == page_id_map(str(tmp_path / "map.csv")).table == (("x1", "page_1"), ("x2", "page,2"))


@pytest.mark.parametrize(("name", "text", "problem"), [
    ("map.json", '{"x": 3}', "JSON object of strings"),
    ("map.json", '["x", "y"]', "JSON object of strings"),
    ("map.json", '{"x": "a", "x": "b"}', "x"),
    ("map.json", '{"x": ""}', "non-empty string"),
    ("map.json", '{"": "a"}', "non-empty string"),
    ("map.csv", "from,to\nx,y\n", "header line prediction,reference"),
    ("map.csv", "prediction,reference\nx,y,z\n", "line 2"),
    ("map.csv", "prediction,reference\nx,y\nx,z\n", "mapped twice"),
    ("map.csv", "", "header line"),
])
def test_a_bad_table_is_an_input_error_naming_the_file(tmp_path, name, text, problem):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        page_id_map(path)
    assert problem in str(raised.value) and str(path) in str(raised.value)


def test_bad_rules_and_specs_are_refused():
    with pytest.raises(InputError, match="unknown page id rule"):
        PageIdMap(rule=("drop-prefix", "x"))
    with pytest.raises(InputError, match="the text of the page id rule strip-prefix must be a non-empty string"):
        page_id_map("strip-prefix:")  # a rule without its text, not a file of that name
    with pytest.raises(InputError, match="one rule at most"):
        page_id_map(["strip-prefix:a", "strip-suffix:b"])
    with pytest.raises(InputError, match="got int"):
        page_id_map([3])  # type: ignore[list-item]
    with pytest.raises(InputError, match="lone surrogate"):
        page_id_map({"x": "\ud800"})
    assert page_id_map([]) is None and page_id_map(None) is None


def _brute_force(reference: list[str], prediction: list[str]) -> int:
    """The most prediction ids any prefix or suffix rule maps onto reference ids, every affix of
    every id tried."""
    known, best = set(reference), 0
    rules = {rule for page_id in prediction for cut in range(len(page_id) + 1) for rule in (("strip-prefix", page_id[:cut]), ("strip-suffix", page_id[cut:]))}
    rules |= {rule for other in reference for cut in range(len(other) + 1) for rule in (("add-prefix", other[:cut]), ("add-suffix", other[cut:]))}
    for rule in rules:
        if rule[1]:
            best = max(best, sum(apply_rule(rule, p) in known for p in prediction))
    return best


@pytest.mark.parametrize(("reference", "prediction", "rule"), [
    ([f"page_{k:05d}" for k in range(8)], [f"doc_page_{k:05d}" for k in range(8)], ("strip-prefix", "doc_")),
    ([f"p{k}" for k in range(6)], [f"p{k}.png" for k in range(6)], ("strip-suffix", ".png")),
    ([f"scan/p{k}" for k in range(6)], [f"p{k}" for k in range(6)], ("add-prefix", "scan/")),
    ([f"d{k}/1" for k in range(6)], [f"d{k}" for k in range(3)] + ["other"], ("add-suffix", "/1")),
])
def test_the_suggested_rule_maps_as_many_ids_as_any_affix_rule(reference, prediction, rule):
    found = suggested_rule(reference, prediction)
    assert found is not None and found[0] == rule and found[1] == _brute_force(reference, prediction)
    assert sum(apply_rule(rule, page_id) in set(reference) for page_id in prediction) == found[1]


def test_no_rule_is_suggested_for_unrelated_ids_and_the_error_names_ids_of_each_side():
    assert suggested_rule(["a1", "a2"], ["zz", "yy"]) is None
    text = str(unmatched_ids_error(["a1", "a2", "a3", "a4"], ["zz", "yy"], None))
    assert "'a1', 'a2', 'a3' ... (4 pages)" in text and "'zz', 'yy'" in text and "--page-id-map (a rule such as strip-prefix:TEXT, or a table FILE" in text
    long = "x" * 10_000
    assert len(str(unmatched_ids_error([long], ["y" + long], None))) < 600  # a hostile id is cut in a message
