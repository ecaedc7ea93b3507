"""The short human summary `tore evaluate` prints (and `Evaluation.summary` returns). Every name
goes through `text_safety.terminal_text`, so a class name cannot rewrite the lines around it."""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.text_safety import terminal_text
from tore_engine.metrics.map_report import SWITCHED_OFF, MapReport, unscored_note
from tore_engine.metrics.matrices import NEVER_PREDICTED, PREDICTED_ONLY, ToreMatrices
from tore_engine.metrics.sweep import MIN_SCORES, Curve, SweepReport
from tore_engine.writers.content import ReportContent


def _mean_line(means: dict) -> str:
    present, every = means["present_classes"], means["all_classes"]

    def scores(mean: dict) -> str:
        return f"recall {_number(mean['recall'])}, precision {_number(mean['precision'])}, F1 {_number(mean['f1'])}"

    first = "no class present in the reference"
    if present["classes"]:
        first = f"over the {present['classes']} present in the reference {scores(present)}"
        if present["precision_classes"] < present["classes"]:
            first += f" (precision over the {present['precision_classes']} of them predicted)"
    return f"Class means: {first}; over all {every['classes']}, Background and absent classes included (as docling-metrics-layout) {scores(every)}"


def undefined_lines(matrices: ToreMatrices) -> list[str]:
    """The classes whose scores are not all defined, by case: left out of the ranking and the means
    (predicted only), or ranked with precision undefined (never predicted)."""
    cases = ((PREDICTED_ONLY, "no reference pixel: recall undefined, not ranked"), (NEVER_PREDICTED, "no predicted pixel: precision undefined"))
    return [f"{case.capitalize()} ({why}): {', '.join(terminal_text(name) for name in names)}"
            for case, why in cases if (names := matrices.classes_in(case))]


def _number(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def map_lines(report: MapReport | None, reason: str | None) -> list[str]:
    """mAP's line (or why there is none, unless switched off), and what unscored boxes do to it."""
    if report is None:
        return [] if reason in (None, SWITCHED_OFF) else [f"mAP: none ({reason})"]
    lines = [f"mAP ({report.convention}) {_number(report.map)}, mAP50 {_number(report.map_50)}, mAP75 {_number(report.map_75)}"]
    if report.unscored:
        lines.append(unscored_note(report.unscored, report.predicted))
    return lines


def error_lines(errors: dict | None, reason: str | None) -> list[str]:
    """Where AP@50 goes by TIDE's error types (docs/cli.md#box-outcomes-and-tides-error-types), largest first, or why there is
    no such line."""
    if errors is None:
        return [f"Box errors (TIDE): none ({reason})"] if reason else []
    counts = errors["counts"]
    found = sorted(((name, value) for name, value in errors["dap"].items() if value or counts[name]), key=lambda item: -item[1])
    head = f"Box errors (TIDE, IoU {errors['iou']}): AP50 {_number(errors['ap50'])}; "
    if not found:
        return [head + "no box error"]
    return [head + "fixing each type would add "
            + ", ".join(f"{name} {_number(value)} ({counts[name]} box{'' if counts[name] == 1 else 'es'})" for name, value in found)]


def _best(curve: Curve) -> str:
    best = curve.best
    return "n/a" if best is None else f"{_number(curve.f1[best])} at {MIN_SCORES[best]:.2f}"


def sweep_line(sweep: SweepReport) -> str:
    """The best minimum score of the Foreground (and of mAP's detection view), or why there is none."""
    if sweep.notice is not None:
        return f"Minimum score sweep: {sweep.notice}"
    line = f"Best minimum score: Foreground F1 {_best(sweep.foreground)}"
    if sweep.detection is not None:
        line += f"; detection F1 at IoU 0.50 (mAP's matching) {_best(sweep.detection.pooled)}"
    return line + ("; each class's best in report.json" if sweep.per_class else "")


def pairing_note(paired: int | None, pages: int) -> str | None:
    """What to say first when at most half of the reference pages found a prediction page by id
    (none at all is an error: `page_id_map.unmatched_ids_error`): the others score as all
    Background, and every figure with them."""
    if paired is None or not pages or 2 * paired > pages:
        return None
    return (f"Only {paired:,} of {pages:,} reference pages have a prediction page with their id: the other {pages - paired:,} "
            "are scored as all Background, which pulls every figure down (map the ids with --page-id-map)")


def summary(content: ReportContent, out: Path | None = None) -> str:
    """A few lines for the terminal: how few pages paired (when at most half did), what was compared, the reduced view, the weakest classes of
    those that occur, and both means, each saying over which classes it averages. Names are
    escaped (`terminal_text`): a class name cannot rewrite the lines printed around it."""
    matrices = content.matrices
    reduced = matrices.reduced
    foreground_recall, foreground_precision = matrices.foreground
    lines = [
        *filter(None, [pairing_note(content.paired_pages, len(content.page_ids))]),
        f"TORE, {matrices.mode} taxonomy: {len(matrices.classes)} classes (Background included), "
        f"{len(content.page_ids)} pages, {content.pixels:,} pixels",
        f"Foreground recall {foreground_recall:.4f}, precision {foreground_precision:.4f}; "
        f"Background recall {reduced.recall[0, 0]:.4f}, precision {reduced.precision[0, 0]:.4f}",
        *map_lines(content.map, content.map_reason),
        *error_lines(content.errors, content.errors_reason),
        *([sweep_line(content.sweep)] if content.sweep is not None else []),
    ]
    means, per_class = matrices.means, matrices.per_class  # None in dual mode
    if per_class is not None and means is not None:
        ranked = sorted(((name, per_class[name]["f1"]) for name in matrices.present_classes()), key=lambda item: item[1] or 0.0)
        if ranked:
            lines.append("Lowest F1: " + ", ".join(f"{terminal_text(name)} {_number(f1, 3)}" for name, f1 in ranked[:5]))
        lines += undefined_lines(matrices)
        lines.append(_mean_line(means))
    if content.warnings:
        lines.append(f"{len(content.warnings)} warnings (listed in report.json)")
    if out is not None:
        lines.append(f"Wrote {terminal_text(str(out / 'report.json'))} and CSVs")
    return "\n".join(lines)
