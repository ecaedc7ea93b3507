"""The short human summary `tore evaluate` prints (and `Evaluation.summary` returns). Every name
goes through `text_safety.terminal_text`, so a class name cannot rewrite the lines around it."""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.text_safety import terminal_text
from tore_engine.metrics.map_report import SWITCHED_OFF, MapReport, unscored_note
from tore_engine.metrics.sweep import MIN_SCORES, Curve, SweepReport
from tore_engine.writers.content import ReportContent


def _mean_line(means: dict) -> str:
    present, every = means["present_classes"], means["all_classes"]

    def scores(mean: dict) -> str:
        return f"recall {mean['recall']:.4f}, precision {mean['precision']:.4f}, F1 {mean['f1']:.4f}"

    first = f"over the {present['classes']} present on either side {scores(present)}" if present["classes"] else "no class present on either side"
    return f"Class means: {first}; over all {every['classes']}, Background and absent classes included (as docling-metrics-layout) {scores(every)}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def map_lines(report: MapReport | None, reason: str | None) -> list[str]:
    """mAP's line (or why there is none, unless switched off), and what unscored boxes do to it."""
    if report is None:
        return [] if reason in (None, SWITCHED_OFF) else [f"mAP: none ({reason})"]
    lines = [f"mAP ({report.convention}) {_number(report.map)}, mAP50 {_number(report.map_50)}, mAP75 {_number(report.map_75)}"]
    if report.unscored:
        lines.append(unscored_note(report.unscored, report.predicted))
    return lines


def _best(curve: Curve) -> str:
    best = curve.best
    return "n/a" if best is None else f"{_number(curve.f1[best])} at {MIN_SCORES[best]:.2f}"


def sweep_line(sweep: SweepReport) -> str:
    line = f"Best minimum score: Foreground F1 {_best(sweep.foreground)}"
    if sweep.detection is not None:
        line += f"; detection F1 at IoU 0.50 (mAP's matching) {_best(sweep.detection.pooled)}"
    return line + ("; each class's best in report.json" if sweep.per_class else "")


def summary(content: ReportContent, out: Path | None = None) -> str:
    """A few lines for the terminal: what was compared, the reduced view, the weakest classes of
    those that occur, and both means, each saying over which classes it averages. Names are
    escaped (`terminal_text`): a class name cannot rewrite the lines printed around it."""
    matrices = content.matrices
    reduced = matrices.reduced
    foreground_recall, foreground_precision = matrices.foreground
    lines = [
        f"TORE, {matrices.mode} taxonomy: {len(matrices.classes)} classes (Background included), "
        f"{len(content.page_ids)} pages, {content.pixels:,} pixels",
        f"Foreground recall {foreground_recall:.4f}, precision {foreground_precision:.4f}; "
        f"Background recall {reduced.recall[0, 0]:.4f}, precision {reduced.precision[0, 0]:.4f}",
        *map_lines(content.map, content.map_reason),
        *([sweep_line(content.sweep)] if content.sweep is not None else []),
    ]
    means = matrices.means  # None in dual mode, as per_class
    if matrices.per_class and means is not None:
        present = set(matrices.present_classes())
        ranked = sorted(((name, scores) for name, scores in matrices.per_class.items() if name in present), key=lambda item: item[1]["f1"])
        if ranked:
            lines.append("Lowest F1: " + ", ".join(f"{terminal_text(name)} {scores['f1']:.3f}" for name, scores in ranked[:5]))
        lines.append(_mean_line(means))
    if content.warnings:
        lines.append(f"{len(content.warnings)} warnings (listed in report.json)")
    if out is not None:
        lines.append(f"Wrote {terminal_text(str(out / 'report.json'))} and CSVs")
    return "\n".join(lines)
