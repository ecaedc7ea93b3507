"""report.json (docs/cli.md#reportjson): its content and its bytes."""

from __future__ import annotations

import json
from pathlib import Path

from tore_engine.writers.content import ReportContent


def build_report(content: ReportContent) -> dict:
    """report.json: docs/cli.md#reportjson, `map` (docs/cli.md#map-beside-tore; null with `map_reason` saying why) and
    `sweep` (null unless made)."""
    matrices = content.matrices
    trimmed = matrices.trimmed
    return {
        "mode": matrices.mode,
        "classes": matrices.classes,
        "pages": len(content.page_ids),
        "pixels": content.pixels,
        "matrices": matrices.full.to_json(),
        "trimmed": {"rows": trimmed.rows, "columns": trimmed.columns, **trimmed.to_json()},
        "reduced": {"classes": matrices.reduced.rows, **matrices.reduced.to_json()},
        "per_class": matrices.per_class,
        "means": matrices.means,
        "map": None if content.map is None else content.map.to_json(),
        "map_reason": content.map_reason,
        "sweep": None if content.sweep is None else content.sweep.to_json(),
        "warnings": [warning.to_json() for warning in content.warnings],
    }


def write_report_json(report: dict, path: Path) -> None:
    """report.json from `build_report`'s content; ASCII only (non-ASCII characters escaped), so any
    label is safe. Written as it is encoded: the whole text is never held (at 100,000 pages its
    pieces take about 100 MB)."""
    with Path(path).open("w", encoding="ascii") as handle:
        json.dump(report, handle, indent=1, ensure_ascii=True)
        handle.write("\n")
