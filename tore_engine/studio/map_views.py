"""mAP beside TORE: the scores line at the top of Matrices (the reduced view's Foreground recall,
precision and F1, then mAP, mAP@50 and mAP@75 of the same boxes, with the convention named and
said plainly when mAP is undefined or depends on the order of the boxes), and A against B on
Compare (each model's mAP and B minus A, per class AP too).

`map_tables` is plain pandas (tested without Streamlit); the rest wires `Evaluation.map` to the page.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from tore_engine.metrics.map_report import MapReport
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
ROLES = ("A", "B")
DIFFERENCE = "B − A"


def _shown(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def map_notes(evaluation: Evaluation, who: str = "") -> list[str]:
    """What a reader must know about this mAP (Markdown, plain): its convention, or why it is
    undefined, and whether it ranked unscored boxes by their order. `who` names the model."""
    report = evaluation.map
    if report is None:
        return [f"{who}mAP is undefined: {plain_for_markdown(evaluation.map_reason or 'not computed')}."]
    notes = [f"{who}mAP: COCO-style mean Average Precision of the same boxes, {CONVENTIONS.get(report.convention, report.convention)}."]
    if report.unscored:
        notes.append(f"{who}**{report.unscored:,} of {report.predicted:,} prediction boxes have no score**: mAP ranks them as score 1.0, "
                     "in file order, so its result depends on the order of the boxes (TORE's scores do not).")
    return notes


def scores_line(evaluated: Evaluated) -> None:
    """TORE's Foreground scores and mAP side by side, and what to know about the mAP shown."""
    evaluation = evaluated.evaluation
    recall, precision = evaluation.matrices.foreground
    report = evaluation.map
    values: dict[str, float | None] = {"Foreground recall": recall, "Foreground precision": precision, "Foreground F1": f1_score(precision, recall)}
    values |= {label: None if report is None else getattr(report, field) for field, label in FIGURES.items()}
    helps = {"Foreground recall": "TORE, reduced 2x2 view: the reference's foreground pixels found as foreground",
             "Foreground precision": "TORE, reduced 2x2 view: the predicted foreground pixels that are foreground in the reference",
             "Foreground F1": "TORE, reduced 2x2 view: the harmonic mean of the two",
             "mAP": "COCO-style: AP averaged over IoU 0.50:0.95 and the classes, boxes ranked by score",
             "mAP@50": "AP at IoU 0.50, averaged over the classes", "mAP@75": "AP at IoU 0.75, averaged over the classes"}
    for column, (label, value) in zip(st.columns(len(values)), values.items()):
        column.metric(label, _shown(value), help=helps[label])
    convention, *unscored = map_notes(evaluation)
    if report is None:
        st.info(convention, icon=":material/block:")
    st.caption(f"{convention if report is not None else ''} {_min_score_note(evaluated)}")
    if unscored:
        st.warning(unscored[0], icon=":material/sort:")


def _min_score_note(evaluated: Evaluated) -> str:
    if evaluated.min_score is None:
        return "Every box is kept (minimum score 0, in the sidebar)."
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


def compare_map(a: Evaluated, b: Evaluated) -> None:
    """Compare's mAP section: the two models' mAP and per-class AP, B minus A, and the notes of each."""
    st.subheader("mAP, A against B")
    overall, per_class = map_tables(a.evaluation, b.evaluation)
    notes = [note for role, evaluated in zip(ROLES, (a, b)) for note in map_notes(evaluated.evaluation, f"{role}: ")]
    st.caption(" ".join(notes) + " B − A: blank where either is undefined.")
    left, right = st.columns([2, 3])
    config = {name: tables.score_column() for name in [*overall.columns[1:], *per_class.columns[1:]]}
    left.dataframe(overall, hide_index=True, width="stretch", column_config=config)
    if len(per_class):
        right.dataframe(per_class, hide_index=True, width="stretch", column_config=config, height=min(400, 38 + 35 * len(per_class)))
