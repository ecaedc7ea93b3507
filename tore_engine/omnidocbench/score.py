"""`tore score omnidocbench`: one JSON-able object (omnidocbench.md section 6) that the CLI prints
and the app's panel renders directly.

Shape: `{"layout": {...} | null, "end_to_end": {...} | null, "pages": int, "reference": {...},
"per_page": [{"page", "image", "attributes": {data_source, language, layout, special_issue, subset},
"layout": {tp, fp, fn, precision, recall, f1} | null, "end_to_end": {text_edit, ...} | null}]}`.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.omnidocbench.categories import PAGE_ATTRIBUTES
from tore_engine.omnidocbench.reference import load_reference


def score_omnidocbench(
    reference_file: str | Path, layout_file: str | Path | None = None, markdown_folder: str | Path | None = None
) -> dict:
    """Layout-detection scores with `layout_file`, end-to-end scores with `markdown_folder`."""
    reference = load_reference(reference_file)
    layout = end_to_end = None
    if layout_file is not None:
        from tore_engine.omnidocbench.layout_ap import score_layout
        from tore_engine.omnidocbench.layout_predictions import load_layout_prediction

        layout = score_layout(reference, load_layout_prediction(layout_file, reference))
    if markdown_folder is not None:
        from tore_engine.omnidocbench.end_to_end import score_end_to_end
        from tore_engine.omnidocbench.markdown import load_markdown_predictions

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
    return {
        "layout": layout,
        "end_to_end": end_to_end,
        "pages": len(reference.pages),
        "reference": {
            "file": reference.source,
            "size_swapped_pages": reference.swapped_pages,
            "frame_sources": sorted({page.frame_source for page in reference.pages}),
        },
        "per_page": per_page,
    }


def _without_page(row: dict | None) -> dict | None:
    return None if row is None else {key: value for key, value in row.items() if key != "page"}
