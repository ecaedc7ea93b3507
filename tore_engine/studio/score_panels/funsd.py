"""FUNSD / EC-FUNSD panel of the Scores page: the headline numbers with their conventions, per-class
tables, one row per form, and a form's ground-truth and predicted entities and links over its page.

Everything shown comes from `tore score funsd` / `tore score ec-funsd` (`score_funsd`,
`score_ec_funsd`); the panel computes no metric. The shared sample (../shared/data/funsd)
has gold forms but no model output, so by default the prediction is *simulated* from the gold by
`tore_engine.scorers.funsd.simulated` (seeded perturbations), and the panel says so. Folders on the server
open the user's own files.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.plain_text import plain_for_markdown
from tore_engine.scorers.funsd.figures import (
    OUTCOMES,
    funsd_overlay_figure,
    page_size,
)
from tore_engine.scorers.funsd.panel import scored_for_panel
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

KINDS = {"funsd": "FUNSD", "ec-funsd": "EC-FUNSD"}
SAMPLE_FOLDERS = {  # relative to the data root
    "funsd": Path("shared") / "data" / "funsd" / "funsd" / "testing_data" / "annotations",
    "ec-funsd": Path("shared") / "data" / "funsd" / "ec_funsd" / "jsons",
}
INPUT_KEYS = {"funsd": (state.FUNSD("ref"), state.FUNSD("pred")), "ec-funsd": (state.FUNSD("ec_ref"), state.FUNSD("ec_pred"))}
FAMILIES = {
    "funsd": "End-to-end numbers: the model outputs boxes, text, grouping, classes and links, matched to the "
             "ground truth at IoU >= 0.5. They are not comparable with a LayoutLM-style \"FUNSD F1\", which is "
             "SER on the ground-truth words (docs/benchmarks.md#reading-the-numbers).",
    "ec-funsd": "Given-ground-truth numbers: EC-FUNSD predictions label spans of the gold words (no detection, "
                "no OCR), so they are not comparable with FUNSD's end-to-end numbers.",
}
SIMULATED_NOTE = {
    "funsd": "The prediction is **simulated**: made by this project from the gold forms by seeded perturbations "
             "(small jitter of every box; entities dropped, displaced, merged with a neighbour, split, relabelled; "
             "OCR typos; links dropped and added), not by a trained model. Its numbers only show how the scores react.",
    "ec-funsd": "The prediction is **simulated**: made by this project from the gold spans by seeded perturbations "
                "(entities dropped, trimmed by one word, relabelled; links dropped and added), not by a trained model.",
}
MATCH_RULES = {"funsd": "at IoU >= 0.5 (one-to-one)", "ec-funsd": "over the same words"}
LINK_RULES = {
    "funsd": "Links are judged as the headline entity linking F1 (end to end, both ends matched with the right class, undirected).",
    "ec-funsd": "Links are judged as the end-to-end linking F1 (directed, both ends exact matches).",
}
COUNT_COLUMNS = {"funsd": ("gt_entities", "pred_entities"), "ec-funsd": ("gold_entities", "pred_entities")}
MAX_SEED = 2**31 - 1


def _text_table(rows: dict[str, dict], columns: list[str]) -> pd.DataFrame:
    """Rows of named values as a table of shown text (a missing value is "n/a"). The scores are
    text, so that the browser shows "n/a" for a missing one; the "Sort documents by" choice sorts
    the numbers themselves."""
    return pd.DataFrame.from_dict(
        {name: {column: shown(row.get(column)) for column in columns} for name, row in rows.items()}, orient="index"
    )


# --- inputs and cached scoring -----------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner="Scoring…")
def _score(kind: str, reference: Path, prediction: Path | None, seed: int, stamps: tuple) -> dict:
    """The engine's report with each form's overlay and page image, and the simulation when
    `prediction` is None (`scored_for_panel`); `stamps` keys the cache and names the simulation."""
    return scored_for_panel(kind, reference, prediction, seed=seed, version=stamps)


def _folder_input(label: str, key: str, default: str, help_text: str) -> Path | None:
    """A folder on the server, inside the data root; None when left empty. Raises InputError."""
    state.seed(key, default)
    text = st.text_input(label, key=key, help=f"{help_text} (a path in the server's data root)", persist_state="session").strip()
    state.share(**{key: text})
    return server_path(text) if text else None


def _inputs(kind: str) -> tuple[Path, Path | None, int] | None:
    """Reference folder, prediction folder (None: simulated) and simulation seed; None when unusable."""
    sample = SAMPLE_FOLDERS[kind]
    sample_present = (data_root() / sample).is_dir()
    if not sample_present:
        st.warning(f"The FUNSD sample is not at {plain_for_markdown(sample.as_posix())} in the server's data root; "
                   "give a folder of your own gold files below.")
    reference_key, prediction_key = INPUT_KEYS[kind]
    what = "FUNSD annotation JSON files ({\"form\": [...]}), page images beside them or in ../images" if kind == "funsd" \
        else "EC-FUNSD JSON files (document, label_entities, label_linkings)"
    columns = st.columns([5, 5, 2])
    with columns[0]:
        reference = _folder_input("Reference folder", reference_key, str(sample) if sample_present else "", what)
    with columns[1]:
        prediction = _folder_input("Prediction folder (empty: simulated)", prediction_key, "",
                                   "files of the same names; leave empty to score a simulated prediction made from the reference")
    with columns[2]:
        state.seed(state.FUNSD("seed"), 0, range(MAX_SEED + 1))
        seed = st.number_input("Simulation seed", min_value=0, max_value=MAX_SEED, step=1, key=state.FUNSD("seed"), persist_state="session",
                               disabled=prediction is not None)
        state.share(**{state.FUNSD("seed"): seed})
    if reference is None:
        st.info("Give a reference folder.")
        return None
    return reference, prediction, int(seed)


# --- headline, per-class and per-document tables ---------------------------------------------


def _headline(report: dict) -> None:
    metric_row([Metric(item["label"], shown(item["value"]), caption=item["convention"]) for item in report["headline"]])


def _per_class_tables(kind: str, report: dict) -> None:
    corpus = report["corpus"]
    tables = report["per_class"]
    columns = st.columns(len(tables))
    if "entity_labeling" in tables:
        labeling = corpus["entity_labeling"]
        rows = {**tables["entity_labeling"], "micro": labeling["micro"], "macro": labeling["macro"],
                "micro without other": labeling["micro_excluding_other"] or {}}
        with columns[0]:
            st.markdown("**Entity labeling** (end to end: matched entities, unmatched ones count as errors)")
            st.dataframe(_text_table(rows, ["precision", "recall", "f1", "support_gt", "n_pred"]), key=state.FUNSD("labeling_table"))
            st.caption(f"macro over {plain_for_markdown(', '.join(labeling['classes_in_macro']))}")
    seqeval = corpus["ser_seqeval"]
    rows = {**tables["ser_seqeval"], "overall": seqeval["overall"]}
    with columns[-1]:
        words = "the ground-truth words (via matched words)" if kind == "funsd" else "the gold words"
        st.markdown(f"**SER, seqeval** (IOB2 entity spans over {words})")
        st.dataframe(_text_table(rows, ["precision", "recall", "f1", "support"]), key=state.FUNSD("ser_table"))
        st.caption(f"token accuracy {shown(seqeval['token_accuracy'])}; spans tp/fp/fn "
                   f"{seqeval['span_counts']['tp']}/{seqeval['span_counts']['fp']}/{seqeval['span_counts']['fn']}")


def document_table(kind: str, report: dict) -> pd.DataFrame:
    """One row per document: its headline numbers (None stays None: missing) and entity counts."""
    labels = {item["key"]: item["label"] for item in report["headline"]}
    gold_count, pred_count = COUNT_COLUMNS[kind]
    rows = []
    for document in report["documents"]:
        counts = document["panel"]["counts"]
        rows.append({"document": document["doc"], **{labels[key]: value for key, value in document["row"].items()},
                     "gold entities": counts[gold_count], "predicted entities": counts[pred_count],
                     "prediction missing": document["prediction_missing"]})
    return pd.DataFrame(rows)


def _documents(kind: str, report: dict) -> str:
    """The sortable per-document table; a click on a row (or the selectbox) picks the document."""
    table = document_table(kind, report)
    metrics = [item["label"] for item in report["headline"]]
    state.seed(state.FUNSD("sort"), metrics[0], ["document", *metrics])
    sort_column, order_column = st.columns([4, 2])
    sort_by = sort_column.selectbox("Sort documents by", ["document", *metrics], key=state.FUNSD("sort"), persist_state="session")
    state.seed(state.FUNSD("desc"), False)
    descending = order_column.toggle("Best first", key=state.FUNSD("desc"), persist_state="session",
                                     help="off: lowest (worst) values first; n/a always last")
    state.share(**{state.FUNSD("sort"): sort_by, state.FUNSD("desc"): descending})
    table = table.sort_values(sort_by, ascending=not descending, na_position="last", kind="stable").reset_index(drop=True)
    documents = table["document"].tolist()
    choosing_table(table.assign(**{metric: table[metric].map(shown) for metric in metrics}), choices=documents, choice_key=state.FUNSD("doc"),
                   key=state.FUNSD("documents", kind, sort_by, descending), width="stretch")
    state.seed(state.FUNSD("doc"), documents[0], documents)
    st.caption("Click a row (or choose below) to draw the form. Click a column header to sort by it too.")
    document = st.selectbox("Document", documents, key=state.FUNSD("doc"), persist_state="session")
    state.share(**{state.FUNSD("doc"): document})
    return document


# --- one document ----------------------------------------------------------------------------


def _document_numbers(report: dict, document: dict) -> None:
    labels = {item["key"]: (item["label"], item["convention"]) for item in report["headline"]}
    table = pd.DataFrame(
        [{"number": labels[key][0], "value": value, "convention": labels[key][1]} for key, value in document["row"].items()]
    )
    st.dataframe(table.map(shown), hide_index=True, key=state.FUNSD("document_numbers"), width="stretch")


def _overlay(kind: str, overlay: dict, image_path: str | None, simulated: bool) -> None:
    picture = page_image(image_path, page_size(overlay))  # without an image, a frame that holds every box
    figure = funsd_overlay_figure(overlay, picture.uri, picture.width, picture.height, match_rule=MATCH_RULES[kind],
                                  prediction_title="prediction (simulated)" if simulated else "prediction")
    chart(figure, key=state.FUNSD("overlay"))
    outcome_text = "; ".join(text for text, *_ in OUTCOMES.values())
    caption = (f"Outlines: {outcome_text}; matched means {MATCH_RULES[kind]}. Colour: the entity's class. "
               f"{LINK_RULES[kind]} Hover a box for its match.")
    if overlay["dropped"] is not None:
        dropped = overlay["dropped"]
        caption += (f" Words with empty text are dropped (docs/benchmarks.md#valid-words-and-entities): {dropped['gt_blank_words']} ground-truth words "
                    f"and {dropped['gt_blank_entities']} entities made only of them on this form; "
                    f"{dropped['pred_blank_words']} and {dropped['pred_blank_entities']} in the prediction.")
    st.caption(caption)


def _document_view(kind: str, scored: dict, doc_id: str) -> None:
    report = scored["report"]
    document = next(d for d in report["documents"] if d["doc"] == doc_id)
    st.markdown(f"#### {plain_for_markdown(doc_id)}" + (" (no prediction file: scored against an empty prediction)" if document["prediction_missing"] else ""))
    _overlay(kind, document["overlay"], document["image"], simulated=scored["simulation"] is not None)
    _document_numbers(report, document)


# --- the panel ---------------------------------------------------------------------------------


def render() -> None:
    st.header("FUNSD / EC-FUNSD")
    st.caption("FUNSD (Jaume et al., 2019): noisy scanned forms with entities (header, question, answer, other) "
               "and key-value links. EC-FUNSD (Zhang et al., 2024) re-annotates them at entity level. FUNSD has no "
               "official scorer, so every number names its convention (docs/benchmarks.md#funsd-and-ec-funsd).")
    state.seed(state.FUNSD("kind"), "funsd", list(KINDS))
    kind = st.radio("Annotation", list(KINDS), format_func=KINDS.get, key=state.FUNSD("kind"), horizontal=True, persist_state="session")
    state.share(**{state.FUNSD("kind"): kind})
    try:
        inputs = _inputs(kind)
        if inputs is None:
            return
        reference, prediction, seed = inputs
        scored = _score(kind, reference, prediction, seed, file_stamps(reference, prediction))
    except InputError as error:
        show_input_error(error)
        return
    report, simulation = scored["report"], scored["simulation"]
    if simulation is not None:
        totals = ", ".join(f"{count} {name.replace('_', ' ')}" for name, count in sorted(simulation["totals"].items()))
        st.info(f"{SIMULATED_NOTE[kind]} Seed {seed}: {plain_for_markdown(totals or 'no perturbation')}.")
    for names, what in ((report["missing_predictions"], "have no prediction file and are scored against an empty prediction"),
                        (report["unused_predictions"], "are prediction files without a reference file, ignored")):
        if names:
            st.warning(f"{len(names)} documents {what}: {plain_for_markdown(', '.join(names))}")
    st.subheader(f"Corpus: {len(report['documents'])} forms")
    st.caption(FAMILIES[kind])
    _headline(report)
    if "aggregation" in report["corpus"]:
        st.caption(f"Over the corpus: {report['corpus']['aggregation']}.")
    _per_class_tables(kind, report)
    st.subheader("Documents")
    _document_view(kind, scored, _documents(kind, report))
