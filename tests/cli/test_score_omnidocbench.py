"""`tore score omnidocbench` as a user runs it (docs/cli.md#tore-score, docs/benchmarks.md#omnidocbench-output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.cli.helpers import exits_cleanly, run_cli
from tests.helpers import load_shared_json, shared_path, write_json
from tests.helpers import write_json as write
from tests.mutations import EXAMPLES, any_mutation, mutated

DEMO = ("data", "omnidocbench")


def tore(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tore_engine", *args], capture_output=True, text=True, timeout=300)


def test_json_output_on_the_demo():
    result = tore(
        "score", "omnidocbench", "--json",
        "--reference", str(shared_path(*DEMO, "OmniDocBench_demo.json")),
        "--layout", str(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")),
        "--markdown", str(shared_path(*DEMO, "pred_end2end_markdown")),
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    expected = load_shared_json(*DEMO, "reference_results", "layout_detection_official_demo_mAP.json")
    layout = output["layout"]
    assert layout["mAP"] == pytest.approx(0.5999473124324551, abs=1e-9)
    assert layout["AP50"] == pytest.approx(expected["bbox_mAP_50"], abs=1e-9)
    assert layout["AP75"] == pytest.approx(expected["bbox_mAP_75"], abs=1e-9)
    assert list(layout["per_class"]) == ["title", "text", "abandon", "figure", "figure_caption", "table",
                                         "table_caption", "table_footnote", "isolate_formula", "formula_caption"]
    assert layout["per_class"]["table_footnote"] == pytest.approx(0.6999999999999998, abs=1e-9)
    end_to_end = output["end_to_end"]
    assert {"text_edit", "reading_order_edit", "table_teds", "overall"} <= set(end_to_end)
    assert end_to_end["overall"] is None and end_to_end["text_edit"] == pytest.approx(0.3356214754013134, abs=1e-9)
    assert end_to_end["leaderboard_comparable"] is True and end_to_end["match_method"] == "official-quick-match-v1.6"
    assert end_to_end["table_teds"] == pytest.approx(0.8144908741318889, abs=1e-9)  # page level, the leaderboard's
    assert end_to_end["reading_order_edit"] == pytest.approx(0.22430037417144588, abs=1e-9)
    assert end_to_end["reading_order_edit_corrected"] == pytest.approx(0.1761776635487353, abs=1e-9)
    assert end_to_end["official"]["text_block"]["all"]["Edit_dist"]["edit_whole"] == pytest.approx(0.47507405534282204, abs=1e-9)
    assert output["pages"] == 18 and len(output["per_page"]) == 18
    row = output["per_page"][0]
    assert row["page"] == "yanbaopptmerge_SE05.pdf_7.jpg" and row["attributes"]["data_source"] == "PPT2PDF"
    assert row["attributes"]["layout"] == "single_column"
    assert set(row["layout"]) >= {"f1", "tp"} and "text_edit" in row["end_to_end"]


def test_sections_not_requested_are_null_and_the_summary_is_readable():
    reference = str(shared_path(*DEMO, "OmniDocBench_demo.json"))
    result = tore("score", "omnidocbench", "--reference", reference, "--json")
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["layout"] is None and output["end_to_end"] is None and output["pages"] == 18
    human = tore("score", "omnidocbench", "--reference", reference,
                 "--layout", str(shared_path(*DEMO, "pred_layout_detection", "detection_prediction.json")))
    assert human.returncode == 0 and "mAP        0.5999" in human.stdout


def test_bad_input_is_one_paragraph_and_exit_2(tmp_path):
    reference = str(shared_path(*DEMO, "OmniDocBench_demo.json"))
    bad = write_json(tmp_path / "pred.json", {"results": "nope", "categories": {}})
    result = tore("score", "omnidocbench", "--reference", reference, "--layout", str(bad), "--json")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("tore: error:") and "pred.json: expected array, got str (at results)" in result.stderr
    assert "Traceback" not in result.stderr


# --- hostile input (issue 10, safe to serve) ----------------------------------------------------------


@EXAMPLES
@given(data=st.data())
def test_omnidocbench_mutated_reference_and_layout(tmp_path, omnidocbench_files, data):
    reference, layout = omnidocbench_files
    side = data.draw(st.sampled_from(["reference", "layout"]))
    documents = {"reference": reference, "layout": layout}
    documents[side] = mutated(documents[side], *data.draw(any_mutation(documents[side])))
    write(tmp_path / "OmniDocBench.json", documents["reference"])
    write(tmp_path / "layout.json", documents["layout"])
    exits_cleanly("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"), "--layout", str(tmp_path / "layout.json"), "--json")


@pytest.fixture
def omnidocbench_pages(tmp_path, omnidocbench_files):
    reference, _ = omnidocbench_files
    write(tmp_path / "OmniDocBench.json", reference)
    markdown = tmp_path / "markdown"
    markdown.mkdir()
    stems = [Path(page["page_info"]["image_path"]).stem for page in reference]
    (markdown / f"{stems[1]}.md").write_text("Some text.\n", encoding="utf-8")
    return tmp_path / "OmniDocBench.json", markdown, stems[0]


def _special_entry(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:  # a symbolic-link loop
        path.symlink_to(path)


@pytest.mark.parametrize("kind, problem", [
    ("fifo", "is not a regular file (a device, pipe or socket); expected a file"),
    ("folder", "is a folder; expected a file"),
    ("loop", "cannot be resolved (a symbolic-link loop, or an invalid name)"),
])
def test_a_markdown_entry_that_is_not_a_regular_file_is_refused_never_waited_on(omnidocbench_pages, kind, problem):
    reference, markdown, stem = omnidocbench_pages
    _special_entry(kind, markdown / f"{stem}.md")
    code, out, err = run_cli("score", "omnidocbench", "--reference", str(reference), "--markdown", str(markdown), "--json")
    assert (code, out) == (2, "") and problem in err and f"{stem}.md" in err


def test_a_markdown_link_out_of_the_folder_is_refused(omnidocbench_pages, tmp_path):
    reference, markdown, stem = omnidocbench_pages
    (tmp_path / "secret.md").write_text("outside\n", encoding="utf-8")
    (markdown / f"{stem}.md").symlink_to(tmp_path / "secret.md")
    code, _, err = run_cli("score", "omnidocbench", "--reference", str(reference), "--markdown", str(markdown))
    assert code == 2 and "Markdown file" in err and "is outside the folder it must stay in" in err


@pytest.mark.parametrize("option", ["--layout", "--reference"])
def test_a_device_given_as_a_file_is_refused_before_reading(omnidocbench_pages, option):
    reference, _, _ = omnidocbench_pages
    args = {"--reference": str(reference), option: "/dev/zero"}
    code, out, err = run_cli("score", "omnidocbench", *(item for pair in args.items() for item in pair))
    assert (code, out) == (2, "") and err == "tore: error: file /dev/zero: is not a regular file (a device, pipe or socket); expected a file\n"


def test_a_page_image_name_cannot_leave_the_images_folder(tmp_path, omnidocbench_files):
    reference, _ = omnidocbench_files
    escaped = json.loads(json.dumps(reference))
    escaped[0]["page_info"]["image_path"] = "../../etc/hostname"
    write(tmp_path / "OmniDocBench.json", escaped)
    code, _, err = run_cli("score", "omnidocbench", "--reference", str(tmp_path / "OmniDocBench.json"))
    assert code == 2 and "page image (page_info.image_path) '../../etc/hostname' is outside the folder it must stay in" in err
