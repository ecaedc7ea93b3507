"""The tables that the Excel workbook and the HTML report both show, with one set of headers:
per class (with support), per page, warnings. Kept here so that the two reports cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from tore_engine.core.errors import InputWarning
from tore_engine.metrics.map_report import MapReport, unscored_note
from tore_engine.metrics.matrices import ToreMatrices

MATRIX_KINDS = ("confusion", "recall", "precision")
MATRIX_CORNER = "reference \\ prediction"  # a matrix table's first header cell (CSV, workbook)
PER_CLASS_COLUMNS = ("class", "recall", "precision", "f1", "support")
# pages.csv's header (report.py), so that a reader finds the same names in every output
PAGE_COLUMNS = ("page", "pixels", "foreground_recall", "foreground_precision", "foreground_f1")
MAP_PAGE_COLUMNS = ("map", "map_50", "map_75")  # pages.csv's columns when there is mAP
MAP_CLASS_COLUMNS = ("ap", "ar_100")  # the per-class table's columns when there is mAP
WARNING_COLUMNS = ("page", "box", "side", "message")
SUPPORT_NOTE = "support: the class's reference pixels (its confusion row summed)"
UNDEFINED_NOTE = ("blank recall: no reference pixel of the class (predicted only); blank precision: no predicted pixel (never predicted); "
                  "F1 is 2 tp / (2 tp + fp + fn), 0 when one side only has the class, blank when neither has it")


def per_class_rows(matrices: ToreMatrices) -> list[tuple[str, float | None, float | None, float | None, float]]:
    """(class, recall, precision, F1, support) of every taxonomy class, Background excluded, None
    where undefined (`matrices.per_class_scores`); empty in dual mode, where the diagonal means
    nothing (docs/algorithm.md#dual-taxonomy). Support is the
    exact row sum, rounded once."""
    if matrices.per_class is None:
        return []
    exact = matrices.exact
    rows = []
    for k, (name, scores) in enumerate(matrices.per_class.items(), start=1):
        support = int(exact.numerators[k].sum()) / exact.denominator
        rows.append((name, scores["recall"], scores["precision"], scores["f1"], support))
    return rows


def ap_note(report: MapReport) -> str:
    """What the per-class `ap` and `ar_100` columns are, in which convention."""
    return (f"ap, ar_100: COCO-style AP (IoU 0.50:0.95) and AR@100 of each class, {report.convention} convention; "
            "blank where undefined (no reference box of the class)")


def map_notes(report: MapReport | None) -> tuple[str, ...]:
    """What a reader of mAP's numbers must know: the convention and, when some prediction boxes had
    no score, that the ranking fell back to their order."""
    if report is None:
        return ()
    return (ap_note(report), *([unscored_note(report.unscored, report.predicted)] if report.unscored else []))


def warning_rows(warnings: Sequence[InputWarning]) -> list[tuple[str | None, int | None, str | None, str]]:
    return [(warning.page, warning.box, warning.side, warning.message) for warning in warnings]
