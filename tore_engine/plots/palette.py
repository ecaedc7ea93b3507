"""One colour per class, the same on every page, pane and figure.

Colours are keyed by the lower-cased class name, so that "Table" in the reference and "table" in a
coarser model's taxonomy look alike. Common document-layout classes have fixed colours; any other
name gets one from a hash of the name, so it never changes between runs or pages.

The agreement view has a palette of its own, which must never read as a class: Okabe-Ito colours
(a colour-blind safe set, none of them a class colour here) and a hatch a category, so the
categories also differ without colour.
"""

from __future__ import annotations

import zlib

from tore_engine.engine.agreement import (
    BOTH,
    DIFFERENT_CLASS,
    ONLY_PREDICTION,
    ONLY_REFERENCE,
    SAME_CLASS,
)

FIXED = {
    "caption": "#e6194b",
    "footnote": "#9a6324",
    "formula": "#911eb4",
    "list-item": "#f58231",
    "page-footer": "#808000",
    "page-header": "#469990",
    "header_footer": "#469990",
    "picture": "#3cb44b",
    "chart": "#3cb44b",
    "infographic": "#bfef45",
    "section-header": "#f032e6",
    "table": "#4363d8",
    "text": "#42d4f4",
    "title": "#800000",
    "document index": "#000075",
    "code": "#a9a9a9",
    "checkbox-selected": "#ffe119",
    "checkbox-unselected": "#dcbeff",
    "form": "#aaffc3",
    "key-value region": "#fabed4",
}
HASHED = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
    "#e6550d", "#31a354", "#756bb1", "#636363", "#fd8d3c", "#74c476", "#9e9ac8", "#6baed6",
]


def class_color(name: str) -> str:
    """The class's colour as `#rrggbb`."""
    key = name.strip().lower()
    if key in FIXED:
        return FIXED[key]
    return HASHED[zlib.crc32(key.encode("utf-8")) % len(HASHED)]


# Agreement category -> (Okabe-Ito colour, its hatch: "\\", "/", "x" or "." lines, "" solid).
AGREEMENT_STYLES = {
    ONLY_REFERENCE: ("#D55E00", "\\"),  # vermillion
    ONLY_PREDICTION: ("#0072B2", "/"),  # blue
    SAME_CLASS: ("#009E73", ""),  # bluish green
    DIFFERENT_CLASS: ("#CC79A7", "x"),  # reddish purple
    BOTH: ("#E69F00", "."),  # orange
}

# A box's outcome (boxes.csv's outcome, or TIDE's error type) -> (legend name, Okabe-Ito colour, line
# style): a right box solid, a wrong prediction dashed, a reference box no prediction found dotted.
OUTCOME_STYLES = {
    "tp": ("matched (TP)", "#009E73", "solid"),  # bluish green
    "Cls": ("Cls: other class, IoU ≥ 0.5", "#E69F00", "dash"),  # orange
    "Loc": ("Loc: same class, IoU 0.1-0.5", "#56B4E9", "dash"),  # sky blue
    "Both": ("Both: other class, IoU 0.1-0.5", "#CC79A7", "dash"),  # reddish purple
    "Dupe": ("Dupe: a second box on a matched one", "#0072B2", "dash"),  # blue
    "Bkg": ("Bkg: on background, IoU < 0.1", "#D55E00", "dash"),  # vermillion
    "Miss": ("Miss: no prediction near it", "#000000", "dot"),
    "fn": ("unmatched, a wrong prediction on it (FN)", "#777777", "dot"),
    "ignored": ("ignored by TIDE", "#BBBBBB", "dot"),
}
