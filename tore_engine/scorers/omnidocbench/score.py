"""`tore score omnidocbench`: an `OmniDocBenchResult` around one JSON-able object
(docs/benchmarks.md#omnidocbench-output), which the CLI prints whole and the app's panel renders directly.

Shape: `{"layout": {...} | null, "end_to_end": {...} | null, "pages": int, "reference": {...},
"per_page": [{"page", "image", "attributes": {data_source, language, layout, special_issue, subset},
"layout": {tp, fp, fn, precision, recall, f1} | null, "end_to_end": {text_edit, ...} | null}]}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tore_engine.scorers.common import format_score, headline_item
from tore_engine.scorers.omnidocbench.categories import AP_STATS, PAGE_ATTRIBUTES
from tore_engine.scorers.omnidocbench.reference import load_reference

LAYOUT_CONVENTION = "COCO box AP over the 10 classes of the official configuration; exact as the official evaluator"
END_TO_END_ROWS = (  # key, note in the summary, in the headline
    ("text_edit", "lower is better", True),
    ("reading_order_edit", "lower is better", True),
    ("reading_order_edit_corrected", "lower is better; first-table quirk corrected, not official", False),
    ("table_teds", "higher is better; page level, the leaderboard's", True),
    ("table_teds_s", "higher is better; page level", False),
    ("table_teds_all", "higher is better; mean over tables", False),
    ("table_edit", "lower is better", False),
    ("formula_edit", "lower is better", False),
    ("overall", "needs formula CDM", True),
)
END_TO_END_CONVENTION = "official OmniDocBench v1.6 evaluator (quick_match), CDM aside: leaderboard-comparable"
UNKNOWN_SHOWN = 5  # names listed in a warning


@dataclass(frozen=True)
class OmniDocBenchResult:
    """The scores of one reference file: `data` is the whole `--json` object."""

    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data

    def panel(self) -> dict[str, Any]:
        """The app's panel draws the whole object."""
        return self.data

    def headline(self) -> list[dict[str, Any]]:
        """Layout mAP, AP50, AP75 and the end-to-end page scores, for the parts that were scored."""
        layout, end_to_end = self.data["layout"], self.data["end_to_end"]
        items = [headline_item(key, key, layout[key], LAYOUT_CONVENTION) for key in AP_STATS[:3]] if layout else []
        if end_to_end:
            items += [headline_item(key, key, end_to_end[key], END_TO_END_CONVENTION) for key, _, shown in END_TO_END_ROWS if shown]
        return items

    @property
    def warnings(self) -> list[str]:
        layout, end_to_end = self.data["layout"], self.data["end_to_end"]
        notes = []
        if layout and layout["unknown_pages"]:
            notes.append(f"layout predictions for {len(layout['unknown_pages'])} page(s) not in the reference, "
                         f"ignored: {', '.join(layout['unknown_pages'][:UNKNOWN_SHOWN])}")
        if end_to_end and end_to_end["missing_pages"]:
            notes.append(f"{len(end_to_end['missing_pages'])} page(s) without a Markdown file, scored as empty (as upstream)")
        if end_to_end and end_to_end["unknown_files"]:
            notes.append(f"Markdown file(s) read by no reference page, ignored: {', '.join(end_to_end['unknown_files'][:UNKNOWN_SHOWN])}")
        return notes

    def summary(self) -> str:
        lines = [f"OmniDocBench: {self.data['pages']} page(s)"]
        swapped = self.data["reference"]["size_swapped_pages"]
        if swapped:
            lines.append(f"  page_info width/height swapped (corrected) on {len(swapped)} page(s)")
        if self.data["layout"]:
            lines += ["", *_layout_summary(self.data["layout"])]
        end_to_end = self.data["end_to_end"]
        if end_to_end:
            lines += ["", "End to end (as the official OmniDocBench v1.6 evaluator, CDM aside; leaderboard-comparable):"]
            lines += [f"  {key:<28} {format_score(end_to_end[key])}   ({note})" for key, note, _ in END_TO_END_ROWS]
        return "\n".join(lines)


def _layout_summary(layout: dict[str, Any]) -> list[str]:
    iou50 = layout["iou50"]
    return [
        "Layout detection (COCO box AP, 10 classes; exact as the official evaluator):",
        *(f"  {key:<10} {format_score(layout[key])}" for key in AP_STATS),
        "  per class AP@[.5:.95]:",
        *(f"    {name:<16} {format_score(value)}" for name, value in layout["per_class"].items()),
        f"  at IoU 0.5: precision {format_score(iou50['precision'])}, recall {format_score(iou50['recall'])}, "
        f"F1 {format_score(iou50['f1'])} (project metric{'' if layout['has_scores'] else '; no scores, AP not meaningful'})",
    ]


def score_omnidocbench(
    reference_file: str | Path, layout_file: str | Path | None = None, markdown_folder: str | Path | None = None
) -> OmniDocBenchResult:
    """Layout-detection scores with `layout_file`, end-to-end scores with `markdown_folder`."""
    reference = load_reference(reference_file)
    layout = end_to_end = None
    if layout_file is not None:
        from tore_engine.scorers.omnidocbench.layout_ap import score_layout
        from tore_engine.scorers.omnidocbench.layout_predictions import (
            load_layout_prediction,
        )

        layout = score_layout(reference, load_layout_prediction(layout_file, reference))
    if markdown_folder is not None:
        from tore_engine.scorers.omnidocbench.end_to_end import score_end_to_end
        from tore_engine.scorers.omnidocbench.markdown import load_markdown_predictions

        end_to_end = score_end_to_end(reference, load_markdown_predictions(markdown_folder, reference))
    layout_pages = layout.pop("per_page") if layout else [None] * len(reference.pages)
    end_to_end_pages = end_to_end.pop("per_page") if end_to_end else [None] * len(reference.pages)
    per_page = []
    for page, layout_row, end_to_end_row in zip(reference.pages, layout_pages, end_to_end_pages):
        per_page.append(
            {
                "page": page.id,
                "image": str(page.image_path) if page.image_path is not None else None,
                "attributes": {attribute: page.attributes.get(attribute) for attribute in PAGE_ATTRIBUTES},
                "layout": _without_page(layout_row),
                "end_to_end": _without_page(end_to_end_row),
            }
        )
    return OmniDocBenchResult({
        "layout": layout,
        "end_to_end": end_to_end,
        "pages": len(reference.pages),
        "reference": {
            "file": reference.source,
            "size_swapped_pages": reference.swapped_pages,
            "frame_sources": sorted({page.frame_source for page in reference.pages}),
        },
        "per_page": per_page,
    })


def _without_page(row: dict | None) -> dict | None:
    return None if row is None else {key: value for key, value in row.items() if key != "page"}
