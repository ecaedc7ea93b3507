"""The official evaluator's results shipped with OmniDocBench's demo sample, to set beside this
project's numbers.

The demo sample (18 pages, ../shared/data/omnidocbench) comes with the official evaluator's output
for its own predictions: the layout AP, which `score_omnidocbench` reproduces exactly, and the v1.6
end-to-end result (without CDM), which it reproduces. Those numbers describe those inputs only,
so `official_numbers` gives them only when the files scored are the sample's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.io.json import read_json

DEMO_FILES = {  # input name -> its path inside the demo sample
    "gt": Path("OmniDocBench_demo.json"),
    "layout": Path("pred_layout_detection") / "detection_prediction.json",
    "markdown": Path("pred_end2end_markdown"),
}
MAX_RESULT_BYTES = 2**20  # an official result file of the sample is a few kilobytes


@dataclass(frozen=True)
class OfficialResult:
    """One official result file of the demo sample and where its numbers are."""

    file: Path  # inside the demo sample
    inputs: tuple[str, ...]  # the `DEMO_FILES` it was computed from
    keys: dict[str, tuple[str, ...]]  # this project's score name -> its path of keys in the file


LAYOUT_RESULT = OfficialResult(
    Path("reference_results") / "layout_detection_official_demo_mAP.json",
    ("gt", "layout"),
    {"mAP": ("bbox_mAP",), "AP50": ("bbox_mAP_50",), "AP75": ("bbox_mAP_75",)},
)
END_TO_END_RESULT = OfficialResult(
    Path("reference_results") / "v1.6_official_rerun_noCDM" / "end2end_quick_match_metric_result.json",
    ("gt", "markdown"),
    {
        "text_edit": ("text_block", "all", "Edit_dist", "ALL_page_avg"),
        "reading_order_edit": ("reading_order", "all", "Edit_dist", "ALL_page_avg"),
        "table_teds": ("table", "page", "TEDS", "ALL"),
        "table_teds_s": ("table", "page", "TEDS_structure_only", "ALL"),
        "formula_edit": ("display_formula", "all", "Edit_dist", "ALL_page_avg"),
    },
)


def is_demo_input(sample: Path, inputs: Mapping[str, Path | None], names: tuple[str, ...]) -> bool:
    """Whether the inputs `names` are the demo sample's own files (after `..` and links)."""
    return all((given := inputs.get(name)) is not None and Path(given).resolve() == (sample / DEMO_FILES[name]).resolve()
               for name in names)


def official_numbers(result: OfficialResult, sample: Path, inputs: Mapping[str, Path | None]) -> dict[str, float | None] | None:
    """The numbers of `result` by this project's score names (None where the file has no number),
    when `inputs` (by `DEMO_FILES` name) are the files it was computed from; None when they are
    other files or the result file cannot be read."""
    if not is_demo_input(sample, inputs, result.inputs):
        return None
    try:
        data = read_json(sample / result.file, max_bytes=MAX_RESULT_BYTES)
    except InputError:
        return None
    return {name: _number_at(data, path) for name, path in result.keys.items()}


def _number_at(data: object, path: tuple[str, ...]) -> float | None:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return float(data) if isinstance(data, Real) and not isinstance(data, bool) else None
