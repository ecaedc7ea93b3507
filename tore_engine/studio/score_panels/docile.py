"""DocILE panel of the Scores page: KILE AP and LIR F1 as the engine's scorer reports them (the
official docile-benchmark 0.3.5 rules), per field type, per document, and one document's overlay.

By default it scores the shared sample (../shared/data/docile, split `dev`) against the engine's
*simulated* model (`tore_engine.scorers.docile.simulated`), because the sample ships no predictions; the
user may give a dataset folder and prediction files on the server instead. Scoring is cached on
the inputs and the stamps of the files it reads (`common.file_stamps`); the cache holds the
result's plain JSON (`DocileResult.panel()`), which is all this panel draws.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.scorers.docile.figures import (
    document_overlay,
    page_fields,
    page_size,
)
from tore_engine.studio import state
from tore_engine.studio.data_root import data_root, server_path
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.score_panels.common import (
    Metric,
    chart,
    choosing_table,
    file_stamps,
    metric_row,
    page_image,
    shown,
)

SAMPLE_TEXT = "shared/data/docile"  # relative to the data root
DEFAULT_SPLIT = "dev"
MAX_SEED = 2**31 - 1
TASKS = {"kile": "KILE", "lir": "LIR"}
SOURCES = {"simulated": "Simulated model (made from the gold)", "files": "Prediction files on the server"}
METRIC_NAMES = {"AP": "AP", "f1": "F1", "precision": "Precision", "recall": "Recall", "TP": "TP", "FP": "FP", "FN": "FN"}
PRIMARY = {"kile": "AP", "lir": "f1"}
PRIMARY_HELP = {
    "kile": "Average precision over all predictions of the split ranked by score (the official ranking and tie-break).",
    "lir": "Micro F1 over fields, after the one-to-one assignment of line items that matches the most fields.",
}
TABLE_KEY = state.DOCILE("doc_table")
CONVENTION = (
    "PCC-based matching, as docile-benchmark 0.3.5: a prediction matches a gold field of the same type "
    "and page when both cover the same Pseudo-Character Centres of the OCR words (PCC IoU at least the "
    "threshold); a page without OCR words has no PCCs, so intersecting boxes there match."
)
SIMULATED_NOTE = (
    "Predictions are **simulated**: made by `tore_engine.scorers.docile.simulated` from the gold with seeded "
    "perturbations (exact, slightly padded, shifted, relabelled, dropped and extra boxes, with scores), "
    "because the sample has no model output. They are not a trained model's."
)


@dataclass(frozen=True)
class Inputs:
    """What to score: a dataset split and either a simulation seed or prediction files."""

    dataset_dir: Path
    split: str
    kile_file: Path | None
    lir_file: Path | None
    seed: int | None  # set: simulated predictions with this seed
    iou_threshold: float


@st.cache_data(max_entries=16, show_spinner="Scoring DocILE...")
def _scored(inputs: Inputs, stamps: tuple) -> dict:
    """`DocileResult.panel()` of the inputs (`stamps` only keys the cache); raises `InputError`."""
    from tore_engine.scorers.docile import score_docile
    from tore_engine.scorers.docile.simulated import score_simulated

    if inputs.seed is not None:
        return score_simulated(inputs.dataset_dir, inputs.split, inputs.seed, inputs.iou_threshold).panel()
    return score_docile(inputs.dataset_dir, inputs.split, inputs.kile_file, inputs.lir_file, inputs.iou_threshold).panel()


def score(inputs: Inputs) -> dict:
    """What the panel draws, cached on the files scoring reads (the PDFs are only drawn)."""
    root = inputs.dataset_dir
    return _scored(inputs, file_stamps(root / f"{inputs.split}.json", root / "annotations", root / "ocr", inputs.kile_file, inputs.lir_file))


# --- inputs ------------------------------------------------------------------------------------


def _resolved(texts: dict[str, str]) -> dict[str, Path | None] | None:
    """Each typed path inside the data root (None where left empty), or None after showing on the
    page why one is refused."""
    paths = {}
    for label, text in texts.items():
        try:
            paths[label] = server_path(text.strip()) if text.strip() else None
        except InputError as error:
            show_input_error(error, title=label)
            return None
    return paths


def _input_widgets() -> dict:
    """The input widgets, seeded from the URL and shared back to it; returns their values."""
    state.seed(state.DOCILE("dir"), SAMPLE_TEXT)
    state.seed(state.DOCILE("split"), DEFAULT_SPLIT)
    state.seed(state.DOCILE("preds"), "simulated", list(SOURCES))
    state.seed(state.DOCILE("kile"), "")
    state.seed(state.DOCILE("lir"), "")
    state.seed(state.DOCILE("iou"), 1.0, state.Interval(0.0, 1.0))
    state.seed(state.DOCILE("seed"), 0, range(MAX_SEED + 1))
    top = st.columns([3, 1, 2, 1])
    values = {
        "folder": top[0].text_input("Dataset folder", key=state.DOCILE("dir"), persist_state="session",
                                    help="the official layout (annotations/, ocr/, pdfs/, <split>.json), a path in the server's data root"),
        "split": top[1].text_input("Split", key=state.DOCILE("split"), persist_state="session").strip(),
        "source": top[2].radio("Predictions", list(SOURCES), format_func=SOURCES.get, key=state.DOCILE("preds"), persist_state="session"),
        "iou": float(top[3].number_input("PCC IoU threshold", 0.0, 1.0, step=0.05, key=state.DOCILE("iou"), persist_state="session",
                                         help="a prediction matches when its PCC IoU with the gold exceeds this minus 1e-6; official: 1.0")),
        "kile": "", "lir": "", "seed": None,
    }
    if values["source"] == "files":
        files = st.columns(2)
        values["kile"] = files[0].text_input("KILE predictions (JSON)", key=state.DOCILE("kile"), persist_state="session")
        values["lir"] = files[1].text_input("LIR predictions (JSON)", key=state.DOCILE("lir"), persist_state="session")
    else:
        values["seed"] = int(st.columns(4)[0].number_input("Simulation seed", 0, MAX_SEED, step=1, key=state.DOCILE("seed"), persist_state="session"))
    state.share(**{
        state.DOCILE("dir"): None if values["folder"] == SAMPLE_TEXT else values["folder"],
        state.DOCILE("split"): None if values["split"] == DEFAULT_SPLIT else values["split"],
        state.DOCILE("preds"): None if values["source"] == "simulated" else values["source"],
        state.DOCILE("kile"): values["kile"] or None, state.DOCILE("lir"): values["lir"] or None,
        state.DOCILE("iou"): None if values["iou"] == 1.0 else values["iou"], state.DOCILE("seed"): values["seed"] or None,
    })
    return values


def _inputs() -> Inputs | None:
    """What to score, or None with the reason on the page."""
    values = _input_widgets()
    if values["folder"].strip() == SAMPLE_TEXT and not (data_root() / SAMPLE_TEXT).is_dir():
        st.info(f"The shared DocILE sample is not at {plain_for_markdown(SAMPLE_TEXT)} in the server's data root (../shared/data/docile "
                "beside the repository): type a dataset folder on the server.")
        return None
    paths = _resolved({"Dataset folder": values["folder"], "KILE predictions": values["kile"], "LIR predictions": values["lir"]})
    if paths is None:
        return None
    if paths["Dataset folder"] is None:
        st.info("Type a DocILE dataset folder.")
        return None
    if values["source"] == "files" and paths["KILE predictions"] is None and paths["LIR predictions"] is None:
        st.info("Give a KILE or an LIR prediction file (or both).")
        return None
    return Inputs(paths["Dataset folder"], values["split"], paths["KILE predictions"], paths["LIR predictions"], values["seed"], values["iou"])


def prediction_file(task_result: dict) -> bytes:
    """The task's predictions as an official prediction file (the match column dropped), so that
    the simulated model can be scored outside the app (`tore score docile`)."""
    predictions = {
        docid: [{key: value for key, value in field.items() if key != "gold"} for field in document["predictions"]]
        for docid, document in task_result["documents"].items()
    }
    return json.dumps(predictions).encode()


def _simulated_downloads(result: dict, seed: int) -> None:
    columns = st.columns(len(TASKS))  # a half of the page each: the labels whole at 1280 pixels
    for column, (task, label) in zip(columns, TASKS.items()):
        if result[task]:
            column.download_button(f"Simulated {label} predictions (JSON)", prediction_file(result[task]),
                                   file_name=f"simulated_{task}_seed{seed}.json", mime="application/json", key=state.DOCILE("download", task))


# --- numbers -----------------------------------------------------------------------------------


def _headline(result: dict) -> None:
    for task, label in TASKS.items():
        task_result = result[task]
        metrics = task_result["metrics"] if task_result else {}
        order = [PRIMARY[task]] + [name for name in METRIC_NAMES if name != PRIMARY[task]]
        st.markdown(f"#### {label}")
        st.caption(f"primary: {METRIC_NAMES[PRIMARY[task]]}" if task_result else f"no {label} predictions: not evaluated")
        metric_row([Metric(f"{label} {METRIC_NAMES[name]}", shown(metrics.get(name)), PRIMARY_HELP[task] if name == PRIMARY[task] else None,
                           border=name == PRIMARY[task]) for name in order])
    st.caption(f"{CONVENTION} IoU threshold: {result['iou_threshold']:g} (official: 1).")


def _metrics_frame(rows: dict[str, dict], index_name: str) -> pd.DataFrame:
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(METRIC_NAMES)).rename(columns=METRIC_NAMES)
    frame.index.name = index_name
    return frame.reset_index()


RATE_COLUMNS = {name: st.column_config.NumberColumn(name, format="%.4f") for name in ("AP", "F1", "Precision", "Recall")}


def _same_text(result: dict) -> None:
    rows = {TASKS[task]: result[task]["metrics_same_text"] for task in TASKS if result[task]}
    with st.expander("Same-text variant (a location match whose text differs from the gold counts as FP + FN)"):
        st.dataframe(_metrics_frame(rows, "task"), hide_index=True, column_config=RATE_COLUMNS)


def _fieldtype_table(task_result: dict, label: str) -> None:
    frame = _metrics_frame(task_result["per_fieldtype"], "field type")
    frame["golds"] = frame["TP"] + frame["FN"]
    frame["predictions"] = frame["TP"] + frame["FP"]
    st.markdown(f"**{label} per field type** (sorted by AP; click a header to sort by it)")
    st.dataframe(frame.sort_values(["AP", "field type"], ascending=[False, True]), hide_index=True,
                 column_config=RATE_COLUMNS, key=state.DOCILE("fieldtypes"))


def _document_table(task_result: dict, label: str) -> str | None:
    """The per-document table; returns the chosen document (clicked row or the selectbox)."""
    docids = list(task_result["per_document"])
    frame = _metrics_frame(task_result["per_document"], "document")
    frame.insert(1, "pages", [task_result["documents"][docid]["page_count"] for docid in docids])
    st.markdown(f"**{label} per document** (click a row to open its page overlay)")
    choosing_table(frame, key=TABLE_KEY, choices=docids, choice_key=state.DOCILE("doc"), column_config=RATE_COLUMNS)
    state.seed(state.DOCILE("doc"), None, [None, *docids])
    docid = st.columns(2)[0].selectbox("Document", docids, index=None, key=state.DOCILE("doc"), placeholder="Choose a document",
                         persist_state="session")
    state.share(**{state.DOCILE("doc"): docid})
    return docid


# --- one document ------------------------------------------------------------------------------


def _field_frame(document: dict, page: int) -> pd.DataFrame:
    rows = [
        {"side": f.side, "index": f.index, "status": f.status, "field type": f.fieldtype, "text": f.text,
         "score": f.score, "matched with": f.partner, "line item": f.line_item_id}
        for f in page_fields(document, page)
    ]
    frame = pd.DataFrame(rows, columns=["side", "index", "status", "field type", "text", "score", "matched with", "line item"])
    return frame.astype({"matched with": "Int64", "line item": "Int64", "score": "Float64"})


def _document_view(task_result: dict, label: str, docid: str) -> None:
    document = task_result["documents"][docid]
    st.markdown(f"#### {label} fields of document {plain_for_markdown(docid)}")
    page = 0
    if document["page_count"] > 1:
        page = st.selectbox("Page", range(document["page_count"]), format_func=lambda k: f"page {k + 1}", key=state.DOCILE("page"))
    left, right = st.columns([3, 2])
    with left:
        chart(document_overlay(document, page, page_image(document["pdf"], page_size(document, page), pdf_page=page).uri),
              key=state.DOCILE("overlay"))
    with right:
        st.caption("Gold: solid outlines; predictions: dashed. Green: matched; red: missed gold (FN); "
                   "orange: unmatched prediction (FP). Hover a box for its type, text and score.")
        st.dataframe(_field_frame(document, page), hide_index=True, key=state.DOCILE("fields"),
                     column_config={"score": st.column_config.NumberColumn(format="%.3f")})


def render() -> None:
    st.subheader("DocILE: key information localisation (KILE) and line item recognition (LIR)")
    inputs = _inputs()
    if inputs is None:
        return
    try:
        result = score(inputs)
    except InputError as error:
        show_input_error(error)
        return
    if inputs.seed is not None:
        st.info(SIMULATED_NOTE)
        _simulated_downloads(result, inputs.seed)
    _headline(result)
    _same_text(result)
    tasks = [task for task in TASKS if result[task]]
    state.seed(state.DOCILE("task"), tasks[0], tasks)
    task = st.radio("Tables and overlay for", tasks, format_func=TASKS.get, key=state.DOCILE("task"), horizontal=True, persist_state="session")
    state.share(**{state.DOCILE("task"): None if task == tasks[0] else task})
    _fieldtype_table(result[task], TASKS[task])
    docid = _document_table(result[task], TASKS[task])
    if docid is not None:
        _document_view(result[task], TASKS[task], docid)
