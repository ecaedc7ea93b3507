"""Errors and warnings about the input (tore_engine.core.errors): an `InputError` is a `ValueError`
that keeps its fields through pickling (a worker's failure crosses a process boundary), and a
notebook's one-line summary counts the warnings by kind."""

from __future__ import annotations

import pickle

import pytest

from tore_engine.core.errors import InputError, InputWarning, ToreWarning, warning_kind, warnings_summary


def test_an_input_error_is_a_value_error_that_pickles_whole():
    error = InputError("bbox has a NaN coordinate", file="gt.json", page="p7", box=3)
    assert isinstance(error, ValueError) and issubclass(ToreWarning, UserWarning)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is InputError and isinstance(back, ValueError)
    assert (back.problem, back.file, back.page, back.box) == ("bbox has a NaN coordinate", "gt.json", "p7", 3)
    assert str(back) == str(error) == "file gt.json, page 'p7', box 3: bbox has a NaN coordinate"
    with pytest.raises(ValueError, match="box 3: bbox"):
        raise back


def test_the_summary_counts_each_kind_most_frequent_first():
    clipped = [InputWarning("p1", k, "reference", f"box clipped at the edge of the 10 x 10 page: bbox [0, 0, {11 + k}, 5]") for k in range(3)]
    missing = InputWarning("p2", None, "prediction", "no prediction for this page; scored as all Background")
    odd = InputWarning("p3", None, "reference", "something new")
    text = warnings_summary([missing, *clipped, odd], "ev.warnings")
    assert text == "5 input warnings (3 boxes clipped, 1 page without prediction, 1 other): see ev.warnings"
    assert warnings_summary([missing], "x.warnings") == "1 input warning (1 page without prediction): see x.warnings"
    assert warning_kind(InputWarning("p", None, "prediction", "12 boxes scored below 0.5 dropped (minimum score)"))[1] == (
        "pages with boxes below the minimum score dropped")
