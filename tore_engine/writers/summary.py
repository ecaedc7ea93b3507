"""The short human summary `tore evaluate` prints (and `Evaluation.summary` returns). Every name
goes through `text_safety.terminal_text`, so a class name cannot rewrite the lines around it."""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.text_safety import terminal_text
from tore_engine.writers.content import ReportContent


def _mean_line(means: dict) -> str:
    present, every = means["present_classes"], means["all_classes"]

    def scores(mean: dict) -> str:
        return f"recall {mean['recall']:.4f}, precision {mean['precision']:.4f}, F1 {mean['f1']:.4f}"

    first = f"over the {present['classes']} present on either side {scores(present)}" if present["classes"] else "no class present on either side"
    return f"Class means: {first}; over all {every['classes']}, Background and absent classes included (as docling-metrics-layout) {scores(every)}"


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
    ]
    if matrices.per_class:
        present = set(matrices.present_classes())
        ranked = sorted(((name, scores) for name, scores in matrices.per_class.items() if name in present), key=lambda item: item[1]["f1"])
        if ranked:
            lines.append("Lowest F1: " + ", ".join(f"{terminal_text(name)} {scores['f1']:.3f}" for name, scores in ranked[:5]))
        lines.append(_mean_line(matrices.means))
    if content.warnings:
        lines.append(f"{len(content.warnings)} warnings (listed in report.json)")
    if out is not None:
        lines.append(f"Wrote {terminal_text(str(out / 'report.json'))} and CSVs")
    return "\n".join(lines)
