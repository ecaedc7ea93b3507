"""The official results shipped with the OmniDocBench demo sample: read only for the sample's own inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import shared_path
from tore_engine.scorers.omnidocbench.official import (
    DEMO_FILES,
    END_TO_END_RESULT,
    LAYOUT_RESULT,
    OfficialResult,
    is_demo_input,
    official_numbers,
)

RESULT = OfficialResult(Path("results.json"), ("gt", "layout"), {"mAP": ("bbox", "mAP"), "AP50": ("bbox", "AP50"), "AP75": ("AP75",)})


def _sample(tmp_path: Path, result: object) -> tuple[Path, dict[str, Path | None]]:
    """A folder laid out as the demo sample, with `result` as its official result file."""
    for path in DEMO_FILES.values():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("{}")
    (tmp_path / RESULT.file).write_text(json.dumps(result))
    return tmp_path, {name: tmp_path / path for name, path in DEMO_FILES.items()}


def test_the_samples_own_inputs_get_the_official_numbers(tmp_path):
    sample, inputs = _sample(tmp_path, {"bbox": {"mAP": 0.5, "AP50": 1}, "AP75": "n/a"})
    assert official_numbers(RESULT, sample, inputs) == {"mAP": 0.5, "AP50": 1.0, "AP75": None}  # a missing or non-number entry is None


def test_other_inputs_get_none(tmp_path):
    sample, inputs = _sample(tmp_path, {"bbox": {"mAP": 0.5}})
    elsewhere = tmp_path / "other.json"
    elsewhere.write_text("{}")
    assert official_numbers(RESULT, sample, {**inputs, "layout": elsewhere}) is None
    assert official_numbers(RESULT, sample, {**inputs, "layout": None}) is None
    assert official_numbers(RESULT, sample, {**inputs, "markdown": None}) == {"mAP": 0.5, "AP50": None, "AP75": None}  # not an input of this result


def test_the_same_file_through_dot_dot_is_the_samples(tmp_path):
    sample, inputs = _sample(tmp_path, {})
    assert is_demo_input(sample, {**inputs, "gt": sample / "pred_end2end_markdown" / ".." / DEMO_FILES["gt"]}, ("gt",))


@pytest.mark.parametrize("content", [b"not json", b"[" * 100 + b"]" * 100])
def test_an_unreadable_result_file_gives_none(tmp_path, content):
    sample, inputs = _sample(tmp_path, {})
    (sample / RESULT.file).write_bytes(content)
    assert official_numbers(RESULT, sample, inputs) is None
    (sample / RESULT.file).unlink()
    assert official_numbers(RESULT, sample, inputs) is None


def test_the_demo_samples_official_results():
    sample = shared_path("data", "omnidocbench")
    inputs = {name: sample / path for name, path in DEMO_FILES.items()}
    layout = json.loads((sample / LAYOUT_RESULT.file).read_text())
    assert official_numbers(LAYOUT_RESULT, sample, inputs) == {
        "mAP": layout["bbox_mAP"], "AP50": layout["bbox_mAP_50"], "AP75": layout["bbox_mAP_75"]}
    assert round(official_numbers(LAYOUT_RESULT, sample, inputs)["mAP"], 4) == 0.5999
    end_to_end = official_numbers(END_TO_END_RESULT, sample, inputs)
    assert set(end_to_end) == set(END_TO_END_RESULT.keys) and all(isinstance(value, float) for value in end_to_end.values())
    assert round(end_to_end["text_edit"], 4) == 0.3356
    # issue 23 cause 6: the leaderboard's table TEDS is the page-level mean, not the mean over tables (0.7967)
    assert (end_to_end["table_teds"], end_to_end["table_teds_s"]) == (0.8144908741318889, 0.9145518147659233)
