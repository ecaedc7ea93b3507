"""mAP beside TORE: the scores line at the top of Matrices (the reduced view's Foreground recall,
precision and F1, then mAP, mAP@50 and mAP@75 of the same boxes, with the convention named and
said plainly when mAP is undefined or depends on the order of the boxes), and A against B on
Compare (each model's mAP and B minus A, per class AP too).

`map_tables` is plain pandas (tested without Streamlit); the rest wires `Evaluation.map` to the page.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import streamlit as st

from tore_engine.metrics.map_report import MapReport, unscored_note
from tore_engine.metrics.rates import f1_score
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.results.evaluation import Evaluation
from tore_engine.studio import tables
from tore_engine.studio.evaluations import Evaluated

FIGURES = {"map": "mAP", "map_50": "mAP@50", "map_75": "mAP@75"}  # MapReport's fields as shown
CONVENTIONS = {
    "coco": "convention coco: pycocotools' COCOeval (IoU 0.50:0.05:0.95, 101 recall points, at most 100 boxes a page, boxes as given)",
    "docling": "convention docling: docling-metrics-layout 0.17.0's numbers (its float32 thresholds and values, boxes as given), "
               "as docling-eval prints them",
}
HELPS = {"Foreground recall": "TORE, reduced 2x2 view: the reference's foreground pixels found as foreground",
         "Foreground precision": "TORE, reduced 2x2 view: the predicted foreground pixels that are foreground in the reference",
         "Foreground F1": "TORE, reduced 2x2 view: the harmonic mean of the two",
         "mAP": "COCO-style: AP averaged over IoU 0.50:0.95 and the classes, boxes ranked by score",
         "mAP@50": "AP at IoU 0.50, averaged over the classes", "mAP@75": "AP at IoU 0.75, averaged over the classes"}
ROLES = ("A", "B")
DIFFERENCE = "B − A"


def _shown(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def convention_note(report: MapReport) -> str:
    """What the mAP shown is, in which convention (Markdown)."""
    return f"mAP: COCO-style mean Average Precision of the same boxes, {CONVENTIONS.get(report.convention, report.convention)}."


def caveat(evaluation: Evaluation, who: str = "") -> str | None:
    """What a reader must know before reading this evaluation's mAP (Markdown, plain), if anything:
    why it is undefined, or that it ranked unscored boxes by their order. `who` names the model."""
    report = evaluation.map
    if report is None:
        return f"{who}mAP is undefined: {plain_for_markdown(evaluation.map_reason or 'not computed')}."
    if report.unscored:
        return f"{who}{unscored_note(report.unscored, report.predicted)} (TORE's scores do not)."
    return None


SHORT_LABELS = {"Foreground recall": "Foreground recall", "Foreground precision": "precision", "Foreground F1": "F1",
                "mAP": "mAP", "mAP@50": "@50", "mAP@75": "@75"}  # each group's figures after its first, as the line shows them


def score_group(values: dict[str, str]) -> str:
    """One group of the scores line as Markdown: "Foreground recall **0.928** · precision **0.961** · F1 **0.944**"."""
    return " · ".join(f"{SHORT_LABELS[label]} **{value}**" for label, value in values.items())


def _group_help(labels: list[str]) -> str:
    return "\n\n".join(f"**{label}**: {HELPS[label]}" for label in labels)


def scores_line(evaluated: Evaluated) -> Callable[[], None]:
    """TORE's Foreground scores, and beside them the place of mAP's, which the function returned
    fills (and with what to know about the mAP shown, where the page then is): the page calls it
    once its heatmap is on its way to the browser, because mAP's summary is made on first use (1 s
    at 100,000 pages). One line of text, each group's definitions in its help, so that on a
    laptop the heatmap follows at once (six `st.metric`s took two rows, 190 px)."""
    evaluation = evaluated.evaluation
    recall, precision = evaluation.matrices.foreground
    tore = {"Foreground recall": recall, "Foreground precision": precision, "Foreground F1": f1_score(precision, recall)}
    row = st.container(horizontal=True, gap="medium")  # on a narrow screen, mAP's group goes below TORE's
    row.markdown(score_group({label: _shown(value) for label, value in tore.items()}), help=_group_help(list(tore)), width="content")
    place = row.empty()

    def fill() -> None:
        """mAP's three numbers in their place, and its notes where the page is (after the matrix)."""
        notes = st.empty()
        report = evaluation.map
        place.markdown(score_group({label: _shown(None if report is None else getattr(report, field)) for field, label in FIGURES.items()}),
                       help=_group_help(list(FIGURES.values())), width="content")
        warning = caveat(evaluation)
        with notes.container():
            if report is None:
                st.info(warning, icon=":material/block:")
            st.caption(f"{convention_note(report) if report is not None else ''} {_min_score_note(evaluated)}")
            if report is not None and warning:
                st.warning(warning, icon=":material/sort:")

    return fill


def _min_score_note(evaluated: Evaluated) -> str:
    if evaluated.min_score is None:
        return "Every box is kept (minimum score 0, under Evaluation in the sidebar)."
    return (f"Evaluated at minimum score {evaluated.min_score:g}: boxes scored below it are dropped on both sides, as "
            f"`tore evaluate --min-score {evaluated.min_score:g}` does (each page's dropped boxes are in the warnings).")


def _figures(report: MapReport | None) -> list[float]:
    return [math.nan if report is None or getattr(report, field) is None else getattr(report, field) for field in FIGURES]


def _with_difference(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """The table with B minus A after A's and B's columns named by `value` ("mAP", "AP")."""
    table[f"{value} {DIFFERENCE}"] = table[f"{value} B"] - table[f"{value} A"]
    return table


def map_tables(a: Evaluation, b: Evaluation) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two models' mAP side by side: mAP, mAP@50 and mAP@75 of A, of B and B minus A (NaN where
    undefined), and each class's AP likewise (the classes with a box in either evaluation, in the
    order they first come)."""
    overall = pd.DataFrame({"figure": list(FIGURES.values()), "mAP A": _figures(a.map), "mAP B": _figures(b.map)})
    per_a, per_b = (report.per_class if (report := evaluation.map) is not None else {} for evaluation in (a, b))
    names = list(dict.fromkeys([*per_a, *per_b]))

    def ap(per_class: dict[str, tuple[float | None, float | None]], name: str) -> float:
        value = per_class.get(name, (None, None))[0]
        return math.nan if value is None else value

    per_class = pd.DataFrame({"class": names, "AP A": [ap(per_a, name) for name in names], "AP B": [ap(per_b, name) for name in names]})
    return _with_difference(overall, "mAP"), _with_difference(per_class, "AP")


def _kept(table: pd.DataFrame, roles: list[str]) -> pd.DataFrame:
    """The table's columns of these models (B − A only when both are kept)."""
    def kept(name: str) -> bool:
        if name.endswith(DIFFERENCE):
            return len(roles) == 2
        return name in ("figure", "class") or name.split(" ")[-1] in roles

    return table[[name for name in table.columns if kept(name)]]


def compare_map(a: Evaluated, b: Evaluated) -> None:
    """Compare's mAP section: the two models' mAP and per-class AP, B minus A, and what to know
    about each (a model whose mAP is undefined has no column)."""
    st.subheader("mAP, A against B")
    reports = [evaluated.evaluation.map for evaluated in (a, b)]
    roles = [role for role, report in zip(ROLES, reports) if report is not None]
    caveats = [text for role, evaluated in zip(ROLES, (a, b)) if (text := caveat(evaluated.evaluation, f"{role}: "))]
    convention = next((convention_note(report) for report in reports if report is not None), "")
    st.caption(" ".join([convention, *caveats, *(["None: no reference box of the class (it is only predicted, or on neither side), so AP is undefined."] if roles else [])]))
    if not roles:
        return
    overall, per_class = (_kept(table, roles) for table in map_tables(a.evaluation, b.evaluation))
    left, right = st.columns([2, 3])
    config = {name: tables.score_column() for name in [*overall.columns[1:], *per_class.columns[1:]]}
    left.dataframe(overall, hide_index=True, width="stretch", column_config=config)
    if len(per_class):
        right.dataframe(per_class, hide_index=True, width="stretch", column_config=config, height=min(400, 38 + 35 * len(per_class)))
