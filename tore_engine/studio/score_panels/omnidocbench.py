"""OmniDocBench panel of the Scores page: layout-detection AP (exact, as the official evaluator) and
end-to-end scores (exact, as the official v1.6 evaluator, CDM aside), by page attribute and page by
page, with a page's ground-truth blocks drawn against the predicted layout.

Everything shown comes from `tore score omnidocbench` (`tore_engine.scorers.omnidocbench.score`) and the
engine's box matches; the panel computes no metric. By default it reads the real demo sample in
../shared/data/omnidocbench; paths on the server open the user's own files. A button opens the
Matrices page on the same ground truth and layout model, where TORE compares the two taxonomies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.scorers.common import MISSING
from tore_engine.scorers.omnidocbench import figures
from tore_engine.scorers.omnidocbench.box_matches import PageMatches
from tore_engine.scorers.omnidocbench.official import (
    DEMO_FILES,
    END_TO_END_RESULT,
    LAYOUT_RESULT,
    OfficialResult,
    official_numbers,
)
from tore_engine.studio import state
from tore_engine.studio.data_root import data_root, server_path
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.score_panels.common import (
    SCORE_DIGITS,
    Metric,
    chart,
    choosing_table,
    file_stamps,
    metric_row,
    page_image,
    shown,
)

SAMPLE_FOLDER = Path("shared") / "data" / "omnidocbench"  # relative to the data root
SAMPLE_TEXTS = {name: str(SAMPLE_FOLDER / path) for name, path in DEMO_FILES.items()}
INPUT_FIELDS = {
    "gt": ("Ground truth (OmniDocBench.json)", "page images are read from images/ beside it"),
    "layout": ("Layout-detection prediction (optional)",
               "the official {\"results\", \"categories\"} form, a COCO results list, or a layout JSON"),
    "markdown": ("Folder of Markdown predictions (optional)", "one <image stem>.md per page"),
}
MATRICES_PAGE = "matrices"  # app.PAGES' name
OPEN_MATRICES = state.OMNIDOCBENCH_OPEN  # query parameters of a requested switch to Matrices
BREAKDOWN_ATTRIBUTES = {"data_source": "data source", "language": "language", "layout": "layout"}
END_TO_END_SCORES = {  # key: (label, lower is better)
    "text_edit": ("text edit distance", True),
    "reading_order_edit": ("reading-order edit distance", True),
    "reading_order_edit_corrected": ("reading order, first-table quirk corrected (not official)", True),
    "table_teds": ("table TEDS", False),
    "table_teds_s": ("table TEDS-S (structure)", False),
    "formula_edit": ("formula edit distance", True),
    "overall": ("overall", False),
}
# Table columns of the page-level scores shown per attribute value and per page.
END_TO_END_COLUMNS = {"text_edit": "text edit ↓", "reading_order_edit": "reading order ↓", "table_teds": "table TEDS ↑",
                      "formula_edit": "formula edit ↓"}
INTRO = (
    "OmniDocBench (Ouyang et al., CVPR 2025) benchmarks document parsing on nine page types. The default "
    "input is its real 18-page demo: page images, ground truth, a real layout-detection prediction (with "
    "scores, in the 10-class DocStructBench taxonomy, not the ground truth's categories) and one unnamed "
    "model's real Markdown output per page. Nothing here is simulated."
)


@dataclass(frozen=True)
class Inputs:
    """The files to score, resolved inside the data root."""

    gt: Path
    layout: Path | None
    markdown: Path | None


# --- inputs and cached scoring -----------------------------------------------------------------


@st.cache_data(max_entries=8, show_spinner="Scoring OmniDocBench…")
def _score(gt: Path, layout: Path | None, markdown: Path | None, stamps: tuple) -> dict:
    from tore_engine.scorers.omnidocbench.score import score_omnidocbench

    return score_omnidocbench(gt, layout, markdown).panel()


@st.cache_data(max_entries=8, show_spinner=False)
def _box_matches(gt: Path, layout: Path, stamps: tuple) -> list[PageMatches]:
    from tore_engine.scorers.omnidocbench.box_matches import box_matches_at_iou50
    from tore_engine.scorers.omnidocbench.layout_predictions import (
        load_layout_prediction,
    )
    from tore_engine.scorers.omnidocbench.reference import load_reference

    reference = load_reference(gt)
    return box_matches_at_iou50(reference, load_layout_prediction(layout, reference))


def _read_inputs() -> Inputs | None:
    """Three paths on the server, the demo sample's by default; None (with a message) when unusable."""
    sample_present = (data_root() / SAMPLE_TEXTS["gt"]).is_file()
    defaults = SAMPLE_TEXTS if sample_present else dict.fromkeys(SAMPLE_TEXTS, "")
    if not sample_present:
        st.warning(f"The OmniDocBench demo sample is not at {plain_for_markdown(SAMPLE_FOLDER.as_posix())} in the server's data root; "
                   "give the paths of your own files below.")
    texts = {}
    with st.expander("Inputs: paths on the server", expanded=not sample_present):
        st.caption("Relative paths are read from the server's data root. The defaults are the real demo sample.")
        for name, (label, help_text) in INPUT_FIELDS.items():
            key = state.OMNIDOCBENCH(name)
            state.seed(key, defaults[name])
            texts[name] = st.text_input(label, key=key, help=help_text, persist_state="session").strip()
            state.share(**{key: texts[name] if texts[name] != defaults[name] else None})
    if not texts["gt"]:
        st.info("Give the path of an OmniDocBench.json ground truth to score.")
        return None
    try:
        return Inputs(server_path(texts["gt"]), _optional_path(texts["layout"]), _optional_path(texts["markdown"]))
    except InputError as error:
        show_input_error(error)
        return None


def _optional_path(text: str) -> Path | None:
    """The path of an optional input inside the data root; None when left empty."""
    return server_path(text) if text else None


# --- headline -----------------------------------------------------------------------------------


def _official_check(result: OfficialResult, inputs: Inputs, ours: dict, labels: dict[str, str], title: str, note: str = "") -> None:
    """Our numbers beside the official evaluator's, as shown (four decimals), when the inputs are
    the demo sample's own files, for which the sample ships that result; `note` under them."""
    official = official_numbers(result, data_root() / SAMPLE_FOLDER, asdict(inputs))
    if official is None:
        return
    table = pd.DataFrame({"score": [labels[name] for name in official], "TORE Studio": [shown(ours.get(name)) for name in official],
                          "official evaluator": [shown(value) for value in official.values()]})
    with st.expander(title):
        st.dataframe(table, hide_index=True, width="content")
        if note:
            st.caption(note)


def _layout_headline(layout: dict, inputs: Inputs) -> None:
    st.markdown("**Layout detection**, COCO box AP over the 10 classes of the official configuration "
                ":green-badge[exact: reproduces the official evaluator]")
    metric_row([*(Metric(key, shown(layout[key])) for key in ("mAP", "AP50", "AP75")),
                Metric("F1 at IoU 0.5", shown(layout["iou50"]["f1"]),
                       "project metric, not in the official evaluator: greedy COCO matching at IoU 0.5")])
    st.caption(
        f"{layout['boxes_in_eval_classes']:,} predicted boxes in the eval classes against {layout['reference_boxes_in_eval_classes']:,} "
        f"ground-truth blocks. {layout['provenance']['AP']}. F1 at IoU 0.5 (precision {shown(layout['iou50']['precision'], 3)}, "
        f"recall {shown(layout['iou50']['recall'], 3)}) is a project metric."
        + ("" if layout["has_scores"] else " This prediction has no scores, so its AP only reflects box order: read F1 instead.")
    )
    _official_check(LAYOUT_RESULT, inputs, layout, {key: key for key in LAYOUT_RESULT.keys},
                    "Check: the official layout result shipped with this sample")


def _end_to_end_headline(end_to_end: dict, inputs: Inputs) -> None:
    badge = (":green-badge[leaderboard-comparable]" if end_to_end["leaderboard_comparable"]
             else ":orange-badge[approximation: not leaderboard numbers]")
    st.markdown(f"**End to end, page level** {badge}")
    metric_row([Metric(f"{label} {'↓' if lower_is_better else '↑'}", shown(end_to_end[key]), end_to_end["provenance"].get(key))
                for key, (label, lower_is_better) in END_TO_END_SCORES.items()])
    st.caption(
        "↓ lower is better, ↑ higher is better. "
        "These are the official OmniDocBench v1.6 evaluator's numbers: its matching (quick_match), normalisation and "
        "quirks are reproduced, so they are leaderboard numbers (leaderboard_comparable: "
        f"{str(end_to_end['leaderboard_comparable']).lower()}). Table TEDS is the leaderboard's page-level mean. The "
        "official reading order leaves out a table matched to the page's first predicted table; the corrected value "
        "beside it keeps that table and is not official. What still differs: formula CDM is not computed, so "
        f"{end_to_end['provenance']['overall']}; LaTeX tables count as missing, as in the official run without latexmlc."
    )
    if end_to_end["missing_pages"]:
        st.warning(f"{len(end_to_end['missing_pages'])} page(s) have no Markdown file and are scored as empty.")
    _official_check(END_TO_END_RESULT, inputs, end_to_end, {key: label for key, (label, _) in END_TO_END_SCORES.items()},
                    "Check: the official end-to-end result shipped with this sample (v1.6 evaluator, no CDM)",
                    "Equal to the official evaluator on this sample, page by page and element by element.")


# --- TORE matrices of the same pair ------------------------------------------------------------


def matrices_query(gt: Path, layout: Path) -> dict[str, str]:
    """The Matrices page's URL for this ground truth against this layout model: the sidebar's
    "Paths on the server" source, the OmniDocBench format, taxonomy mode auto (dual here), and the
    zero-trimmed view (ground-truth classes down, the model's across)."""
    root = data_root()
    return {state.SOURCE: "path", state.REFERENCE_INPUT: str(gt.relative_to(root)), state.MODEL_INPUTS["A"]: str(layout.relative_to(root)),
            state.REFERENCE_FORMAT: "omnidocbench", state.TAXONOMY: "auto", state.VIEW: "trimmed"}


def _request_matrices(query: dict[str, str]) -> None:
    """Button callback: set the sidebar's choices (a callback runs before the widgets exist, so it
    may) and ask `render` to switch page."""
    st.session_state.update({**query, state.MODEL_INPUTS["B"]: "", state.LABEL_MAP: ""})
    st.session_state[OPEN_MATRICES] = query


def _matrices_link(gt: Path, layout: Path) -> None:
    query = matrices_query(gt, layout)
    left, right = st.columns([2, 3], vertical_alignment="center")
    left.button("Open the TORE matrices of this model against this ground truth", key=state.OMNIDOCBENCH("matrices"),
                on_click=_request_matrices, args=(query,), icon=":material/grid_on:")
    right.caption(
        "When the model's classes differ from the ground truth's (the demo's model predicts plain text, abandon, ... "
        "where the ground truth has text_block, header, ...), the Matrices page compares them in dual-taxonomy mode: "
        "ground-truth categories down, the model's across, pixel by pixel, without the 10-class merge of the AP. "
        f"[Shareable link](matrices?{urlencode(query)})"
    )


# --- per class, per attribute, per page ----------------------------------------------------------


def _pages_by_value(per_page: list[dict], attribute: str) -> dict[str, int]:
    return dict(Counter(str(row["attributes"][attribute]) for row in per_page))


def _breakdowns(result: dict) -> None:
    layout, end_to_end = result["layout"], result["end_to_end"]
    st.subheader("By page attribute")
    st.caption("Each score recomputed on the pages with that attribute value (layout mAP: the official AP on those pages only).")
    tabs = st.tabs(list(BREAKDOWN_ATTRIBUTES.values()))
    for tab, attribute in zip(tabs, BREAKDOWN_ATTRIBUTES):
        pages = _pages_by_value(result["per_page"], attribute)
        table = pd.DataFrame({"value": list(pages), "pages": list(pages.values())})
        if layout:
            groups = layout["by_attribute"][attribute]
            table["layout mAP"] = [groups.get(value, {}).get("mAP") for value in pages]
            table["layout F1 @0.5"] = [groups.get(value, {}).get("f1_iou50") for value in pages]
        if end_to_end:
            for key, column in END_TO_END_COLUMNS.items():
                table[column] = [end_to_end["by_attribute"][key][attribute].get(value) for value in pages]
        table = _numeric_scores(table, ["value"]).sort_values("value", ignore_index=True)
        with tab:
            bars, numbers = st.columns([2, 3])
            if layout:
                chart(figures.attribute_bars(dict(zip(table["value"], table["layout mAP"])), pages, metric="layout mAP",
                                             title=f"layout mAP by {BREAKDOWN_ATTRIBUTES[attribute]}"),
                      key=state.OMNIDOCBENCH("bars", attribute), where=bars)
            numbers.dataframe(_scores_styled(table), placeholder=MISSING, hide_index=True, key=state.OMNIDOCBENCH("by", attribute))


def _numeric_scores(table: pd.DataFrame, text_columns: list[str]) -> pd.DataFrame:
    """Score columns as numbers (a missing score, None, becomes NaN)."""
    for column in table.columns.difference(text_columns):
        table[column] = pd.to_numeric(table[column])
    return table


def _scores_styled(table: pd.DataFrame) -> pd.io.formats.style.Styler:
    """A table of scores with four decimals; shown with `placeholder=MISSING`, a missing score reads
    "n/a" (never 0, never "None") and the numbers still sort as numbers."""
    return table.style.format(precision=SCORE_DIGITS)


def page_table(result: dict) -> pd.DataFrame:
    """One row a page, worst first: lowest layout F1 at IoU 0.5, then highest text edit distance."""
    rows = []
    for row in result["per_page"]:
        record = {"page": row["page"], **{label: row["attributes"][key] for key, label in BREAKDOWN_ATTRIBUTES.items()}}
        if row["layout"] is not None:
            record.update({"TP": row["layout"]["tp"], "FP": row["layout"]["fp"], "FN": row["layout"]["fn"],
                           "precision": row["layout"]["precision"], "recall": row["layout"]["recall"], "F1 @0.5": row["layout"]["f1"]})
        if row["end_to_end"] is not None:
            record.update({column: row["end_to_end"][key] for key, column in END_TO_END_COLUMNS.items()})
        rows.append(record)
    table = pd.DataFrame(rows)
    table = _numeric_scores(table, ["page", *BREAKDOWN_ATTRIBUTES.values()])
    order = [column for column in ("F1 @0.5", END_TO_END_COLUMNS["text_edit"]) if column in table]
    if order:
        table = table.sort_values(order, ascending=[column == "F1 @0.5" for column in order], na_position="last", kind="stable")
    return table.reset_index(drop=True)


def _overlay(matches: list[PageMatches], page_id: str, result: dict) -> None:
    page = next(page for page in matches if page.page == page_id)
    row = next(row for row in result["per_page"] if row["page"] == page_id)
    attributes = ", ".join(f"{key} {value}" for key, value in row["attributes"].items() if value not in (None, []))
    counts = row["layout"]
    st.markdown(f"**{plain_for_markdown(page_id)}**: {plain_for_markdown(attributes)}")
    st.caption(
        f"At IoU 0.5 in the 10 eval classes: {counts['tp']} matched, {counts['fn']} ground-truth blocks missed, "
        f"{counts['fp']} predicted boxes unmatched. Solid green: matched; dashed red: unmatched; dotted grey: a "
        "class outside the 10 eval classes (not evaluated). Boxes are filled in their class colour; hover a box "
        "for its class, score and partner. Drag to zoom both panes, double-click to reset."
        + (" This page's page_info swaps width and height; the frame is the image's."
           if page_id in result["reference"]["size_swapped_pages"] else "")
    )
    chart(figures.page_match_overlay(page, page_image(page.image, (page.width, page.height)).uri), key=state.OMNIDOCBENCH("overlay"))


def _per_page(result: dict, inputs: Inputs) -> None:
    st.subheader(f"Pages ({result['pages']}), worst first")
    table = page_table(result)
    page_ids = table["page"].tolist()
    choosing_table(_scores_styled(table), key=state.OMNIDOCBENCH("table"), choices=page_ids, choice_key=state.OMNIDOCBENCH("page"),
                   placeholder=MISSING, width="stretch", height=min(420, 38 + 35 * len(table)))
    if inputs.layout is None:
        st.info("Give a layout-detection prediction to draw a page's ground-truth blocks against predicted boxes.")
        return
    state.seed(state.OMNIDOCBENCH("page"), page_ids[0], page_ids)
    page_id = st.selectbox("Page to draw (or select a row above)", page_ids, key=state.OMNIDOCBENCH("page"), persist_state="session")
    state.share(**{state.OMNIDOCBENCH("page"): page_id})
    _overlay(_box_matches(inputs.gt, inputs.layout, file_stamps(inputs.gt, inputs.layout)), page_id, result)


# --- the panel -----------------------------------------------------------------------------------


def render() -> None:
    """The OmniDocBench panel."""
    if (query := st.session_state.pop(OPEN_MATRICES, None)) is not None:
        state.switch_to(MATRICES_PAGE, query)
    st.caption(INTRO)
    inputs = _read_inputs()
    if inputs is None:
        return
    try:
        result = _score(inputs.gt, inputs.layout, inputs.markdown, file_stamps(inputs.gt, inputs.layout, inputs.markdown))
    except InputError as error:
        show_input_error(error)
        return
    if result["reference"]["size_swapped_pages"]:
        st.caption(f"{len(result['reference']['size_swapped_pages'])} of {result['pages']} pages have width and height "
                   "swapped in page_info; their frame is taken from the page image.")
    if inputs.layout is not None:  # a layout prediction always has its scores in result["layout"]
        _layout_headline(result["layout"], inputs)
        _matrices_link(inputs.gt, inputs.layout)
    if result["end_to_end"]:
        _end_to_end_headline(result["end_to_end"], inputs)
    if result["layout"]:
        st.subheader("AP by class")
        chart(figures.per_class_ap_bars(result["layout"]["per_class"], title="AP@[.5:.95] per eval class"), key=state.OMNIDOCBENCH("per_class"))
    _breakdowns(result)
    _per_page(result, inputs)
