"""The result of an evaluation (tore_engine.results.evaluation): its DataFrames hold the matrices' numbers;
dual mode has no per-class rows; an unknown class is a KeyError naming the valid ones; `plot` takes
a kind or a normalisation (never two that disagree) and a class subset; `summary` is what
`tore evaluate` prints; what a matrix view shows (class subsets, the "all" normalisation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.helpers import DEMO
from tore_engine.cli import main
from tore_engine.results.evaluation import MatrixFrames, plot_kind, shown_matrices


def test_dataframes_hold_the_matrices_numbers(demo_a):
    a = demo_a
    matrices = a.matrices
    assert a.classes == matrices.classes and a.classes[0] == "Background"
    for frame, values in ((a.confusion, matrices.full.confusion), (a.recall, matrices.full.recall), (a.precision, matrices.full.precision)):
        assert list(frame.index) == list(frame.columns) == a.classes
        assert np.array_equal(frame.to_numpy(), values)
    assert np.array_equal(a.trimmed.recall.to_numpy(), matrices.trimmed.recall)
    assert list(a.reduced.precision.index) == ["Background", "Foreground"]
    report = a.to_json()
    assert a.per_class[["recall", "precision", "f1"]].to_dict("index") == report["per_class"]
    support = a.confusion.sum(axis=1)
    assert np.allclose(a.per_class["support"], support.loc[a.per_class.index], rtol=1e-12)
    assert a.pages.index.tolist() == a.page_ids and a.pages["pixels"].tolist() == a.page_pixels.tolist()


def test_dual_mode_has_no_per_class_rows(demo_b):
    per_class = demo_b.per_class
    assert demo_b.matrices.mode == "dual" and demo_b.to_json()["per_class"] is None
    assert isinstance(per_class, pd.DataFrame) and per_class.empty
    assert per_class.index.name == "class" and list(per_class.columns) == ["recall", "precision", "f1", "support"]


def test_matrix_frames_are_typed_dataframes_with_a_one_line_repr(demo_a):
    trimmed = demo_a.trimmed
    assert isinstance(trimmed, MatrixFrames) and all(isinstance(frame, pd.DataFrame) for frame in (trimmed.confusion, trimmed.recall, trimmed.precision))
    rows, columns = trimmed.confusion.shape
    assert repr(trimmed) == f"MatrixFrames({rows} reference x {columns} predicted classes: .confusion, .recall, .precision)"


def test_an_unknown_class_is_a_key_error_naming_the_views_classes(demo_a):
    with pytest.raises(KeyError, match="'Txt' is no reference \\(row\\) class of the full view; those are 'Background', 'Caption', "):
        demo_a.pages_for_cell("Txt", "Table")
    with pytest.raises(KeyError, match="'Text' is no predicted \\(column\\) class of the reduced view; those are 'Background', 'Foreground'"):
        demo_a.pages_for_cell("Foreground", "Text", view="reduced")


def test_shown_matrices_keep_values_and_add_the_share_of_the_total(small):
    whole = shown_matrices(small.matrices, "full")
    assert whole.share.sum() == pytest.approx(1.0) and whole.share[0, 0] == pytest.approx((90 + 91) / 200)
    subset = shown_matrices(small.matrices, "full", ["Text", "Title"])
    assert subset.rows == subset.columns == ["Text", "Title"]
    assert subset.recall.tolist() == [[0.0, 0.6], [0.0, 1.0]]  # still over the whole Text row: 4 of 10 went to Background
    assert subset.share.tolist() == [[0.0, 6 / 200], [0.0, 4 / 200]]
    hidden = shown_matrices(small.matrices, "trimmed", hide_background=True)
    assert hidden.rows == ["Text", "Title"] and hidden.columns == ["Text", "Title"]
    assert shown_matrices(small.matrices, "reduced", hide_background=True).rows == ["Foreground"]


@pytest.mark.parametrize(("kind", "normalize", "shown"), [
    ("confusion", None, "confusion"), ("confusion", "row", "recall"), ("confusion", "column", "precision"), ("confusion", "all", "share"),
    ("recall", None, "recall"), ("recall", "row", "recall"), ("precision", "column", "precision"), ("share", "all", "share"),
])
def test_a_kind_and_a_normalisation_name_one_matrix(kind, normalize, shown):
    assert plot_kind(kind, normalize) == shown


@pytest.mark.parametrize(("kind", "normalize", "message"), [
    ("recall", "column", "kind 'recall' and normalize='column' \\(which gives precision\\) contradict each other"),
    ("share", "row", "contradict each other"),
    ("precision", "all", "contradict each other"),
    ("f1", None, "unknown kind 'f1'"),
    ("confusion", "true", "unknown normalize 'true'"),
])
def test_a_kind_and_a_normalisation_that_disagree_are_refused(kind, normalize, message):
    with pytest.raises(ValueError, match=message):
        plot_kind(kind, normalize)


def _shown_values(figure) -> np.ndarray:
    """The values a heatmap shows, from the hover markers (one per cell, row by row)."""
    rows, columns = len(figure.layout.yaxis.ticktext), len(figure.layout.xaxis.ticktext)
    return np.asarray(figure.data[1].customdata)[:, 0].reshape(rows, columns)


def test_plot_draws_the_chosen_matrix_of_a_class_subset(small, demo_b):
    pytest.importorskip("plotly")
    figure = small.plot(normalize="row", classes=["Text", "Title"])
    assert list(figure.layout.yaxis.ticktext) == list(figure.layout.xaxis.ticktext) == ["Text", "Title"]
    assert _shown_values(figure).tolist() == [[0.0, 0.6000000238418579], [0.0, 1.0]]  # float32 hover data: 0.6 of the whole Text row
    assert figure.layout.title.text == "recall, full view"
    share = small.plot("share", view="reduced")
    assert np.allclose(_shown_values(share), small.matrices.reduced.confusion / 200)
    assert list(demo_b.plot().layout.yaxis.ticktext) == demo_b.matrices.trimmed.rows  # dual mode: the trimmed view
    with pytest.raises(KeyError, match="'Txt' is no class of the full view; those are 'Background', 'Text', 'Title'"):
        small.plot("recall", classes=["Text", "Txt"])
    with pytest.raises(KeyError, match="'Text' is no class of the reduced view"):
        small.plot(view="reduced", classes=["Text"])
    with pytest.raises(TypeError, match="a list of class names"):
        small.plot(classes="Text")
    with pytest.raises(ValueError, match="contradict"):
        small.plot("recall", normalize="column")


def test_summary_is_what_tore_evaluate_prints(tmp_path, capsys, demo_a):
    out = tmp_path / "out"
    assert main(["evaluate", str(DEMO / "reference.json"), str(DEMO / "model_a.json"), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out == demo_a.summary(out) + "\n" and printed.err == ""
    assert demo_a.summary(out).startswith("TORE, single taxonomy: ")
