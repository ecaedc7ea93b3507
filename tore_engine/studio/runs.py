"""Runs: the evaluations saved under a folder of the data root (`tore evaluate --out`), listed from
their manifests alone (no state is opened to list them); any one opened, any two compared, any N
side by side in Models; and the history of the runs that share a reference: each headline figure
and each class's F1 over the runs, in order of date or of folder name, as a chart and a table.

Opening a run sets the sidebar's source to saved evaluations with the runs' folders as the models,
as `?saved=PATH` does.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from tore_engine.core.errors import InputError
from tore_engine.plots.run_history import run_history_figure
from tore_engine.results.saved import SavedEvaluation, saved_evaluations
from tore_engine.studio import state, tables
from tore_engine.studio.data_root import data_root, server_path
from tore_engine.studio.messages import show_input_error
from tore_engine.studio.panels import plotly_chart
from tore_engine.studio.sidebar import MODELS, saved_key

TABLE_KEY = state.RUNS_TABLE
MATRICES_PAGE, COMPARE_PAGE, MODELS_PAGE = "matrices", "compare", "models"  # app.PAGES' names
HEADLINES = {"Foreground F1": "foreground_f1", "mAP": "map", "mAP50": "map_50"}
ORDERS = {"date": "created", "name": "name"}  # a run's name: `tore evaluate --run-name`, else its folder's
MAX_RUNS = 500  # manifests read from one folder


def runs_table(found: list[SavedEvaluation], root: Path) -> pd.DataFrame:
    """One row a saved evaluation: where, what, when, by which version, its headline figures and options."""
    rows = []
    for saved in found:
        manifest, run = saved.manifest, saved.manifest.run
        summary = manifest.summary
        figures = summary.map or {}
        rows.append({
            "folder": str(saved.folder.relative_to(root)), "name": run.name or saved.folder.name, "model": run.prediction_name, "reference": run.reference_name,
            "created": manifest.created, "version": manifest.product_version, "pages": summary.pages,
            "foreground_f1": summary.foreground["f1"], "map": figures.get("map"), "map_50": figures.get("map_50"),
            "taxonomy": summary.mode, "min_score": run.min_score, "map_convention": run.map,
            "label_map": Path(run.label_map).name if run.label_map else None,
        })
    columns = ["folder", "name", "model", "reference", "created", "version", "pages", "foreground_f1", "map", "map_50", "taxonomy", "min_score",
               "map_convention", "label_map"]
    return pd.DataFrame(rows, columns=columns).astype({"foreground_f1": float, "map": float, "map_50": float})


def history(found: list[SavedEvaluation], root: Path, reference: str, order: str) -> pd.DataFrame:
    """The runs against `reference`, in `order` (a key of `ORDERS`): one row a run, the headline
    figures, then each class's F1 (`F1 <class>`; empty where the run has no such class)."""
    rows = []
    for saved in found:
        manifest = saved.manifest
        if manifest.run.reference_name != reference:
            continue
        figures = manifest.summary.map or {}
        rows.append({"folder": str(saved.folder.relative_to(root)), "name": manifest.run.name or saved.folder.name,
                     "model": manifest.run.prediction_name, "created": manifest.created,
                     "foreground_f1": manifest.summary.foreground["f1"], "map": figures.get("map"), "map_50": figures.get("map_50"),
                     **{f"F1 {name}": f1 for name, f1 in (manifest.summary.per_class_f1 or {}).items()}})
    table = pd.DataFrame(rows)
    return table.sort_values(ORDERS[order], kind="stable").reset_index(drop=True) if len(table) else table


def _open_runs(page: str, folders: list[str]) -> None:
    """Button callback: the runs' folders as the sidebar's saved models A, B, ..., then `page`."""
    values: dict[str, object] = {state.SOURCE: "saved", state.MODELS: max(len(folders), 1), **{saved_key(model): folder for model, folder in zip(MODELS, folders)}}
    for model in MODELS[len(folders):]:
        st.session_state.pop(saved_key(model), None)
    st.session_state.update(values)
    state.request_switch(page, **{key: str(value) for key, value in values.items()})


def _found(folder_text: str) -> tuple[Path, list[SavedEvaluation]] | None:
    try:
        folder = server_path(folder_text or ".")
    except InputError as error:
        show_input_error(error)
        return None
    if not folder.is_dir():
        st.info(f"{folder_text} is not a folder of the data root.")
        return None
    found = saved_evaluations(folder, limit=MAX_RUNS)
    for problem in (item for item in found if isinstance(item, InputError)):
        show_input_error(problem, title="a saved evaluation that cannot be listed")
    return data_root(), [item for item in found if isinstance(item, SavedEvaluation)]


def runs_view() -> None:
    """The page: the folder, the table of runs with its buttons, the history of one reference."""
    folder_text = st.text_input("Folder of saved evaluations", **state.bind(state.RUNS_FOLDER),
                                placeholder="a folder relative to the data folder (empty: the data folder itself)",
                                help="every folder below it that `tore evaluate --out DIR` wrote is listed").strip()
    found = _found(folder_text)
    if found is None:
        return
    root, runs = found
    if not runs:
        st.info("No saved evaluation here: `tore evaluate REFERENCE PREDICTION --out DIR` leaves one in DIR.")
        return
    table = runs_table(runs, root)
    score_columns = {name: tables.score_column() for name in ("foreground_f1", "map", "map_50")}
    st.dataframe(table, key=TABLE_KEY, hide_index=True, selection_mode="multi-row", on_select="rerun", width="stretch",
                 column_config=score_columns)
    chosen = [table["folder"].iloc[row] for row in st.session_state[TABLE_KEY].selection.rows]
    first, second, third = st.columns(3)
    first.button("Open", type="primary", disabled=len(chosen) != 1, on_click=_open_runs, args=(MATRICES_PAGE, chosen))
    second.button("Compare the two", disabled=len(chosen) != 2, on_click=_open_runs, args=(COMPARE_PAGE, chosen))
    third.button(f"Side by side in Models (at most {len(MODELS)})", disabled=not 1 <= len(chosen) <= len(MODELS), on_click=_open_runs,
                 args=(MODELS_PAGE, chosen))
    _history_view(runs, root)


def _history_view(runs: list[SavedEvaluation], root: Path) -> None:
    st.subheader("History of a reference")
    references = sorted({run.manifest.run.reference_name for run in runs if run.manifest.run.reference_name})
    if not references:
        return
    left, right = st.columns(2)
    reference = left.selectbox("Reference", references, **state.bind(state.RUNS_REFERENCE, references[0], references))
    order = right.radio("Order of the runs", list(ORDERS), horizontal=True, **state.bind(state.RUNS_ORDER, choices=list(ORDERS)))
    table = history(runs, root, reference, order)
    names, folders = table["name"].tolist(), table["folder"].tolist()
    headlines = {label: table[column].tolist() for label, column in HEADLINES.items() if table[column].notna().any()}
    plotly_chart(run_history_figure(names, folders, headlines, "Headline figures"), state.RUNS_CHARTS("headlines"), stretch=True)
    classes = {column: table[column].tolist() for column in table.columns if column.startswith("F1 ")}
    if classes:
        plotly_chart(run_history_figure(names, folders, classes, "Each class's F1"), state.RUNS_CHARTS("classes"), stretch=True)
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={name: tables.score_column() for name in table.columns if name in HEADLINES.values() or name.startswith("F1 ")})
