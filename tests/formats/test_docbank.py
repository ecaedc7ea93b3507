"""DocBank token text: tokens grouped into DocBank's label spans, against a plain brute-force
grouping written here from DocBank's description (DocBankLoader's neighbour rule: same label, gaps
of at most 15 across and 16 down in the 0..1000 grid, groups joined through neighbours), on
generated pages and on DocBank's own sample pages; detection, frames, warnings and errors.

The real pages are DocBank's 100 preview samples (github.com/doc-analysis/DocBank,
`DocBank_samples/DocBank_samples/*.txt` and `*_ori.jpg`; the repository is Apache-2.0 but its README
asks that the data not be redistributed, so no sample is committed here): point DOCBANK_SAMPLES at
a folder holding them, else those tests skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import tore_engine as tore
from tests.cli.helpers import run_cli
from tore_engine.core.errors import InputError
from tore_engine.formats.detect import detect_format
from tore_engine.formats.docbank import read


def token_line(token: str, box, label: str, rgb=(0, 0, 0), font="CMR10") -> str:
    return "\t".join([token, *(str(v) for v in box), *(str(v) for v in rgb), font, label])


def brute_force_spans(tokens: list[tuple[list[float], str]]) -> list[tuple[str, list[float]]]:
    """From each token not yet taken, in file order, a breadth-first search through same-label
    neighbours (every token compared with every other); each group's label and bounding box."""
    def neighbours(a, b):
        (box0, label0), (box1, label1) = a, b
        return (label0 == label1 and box1[1] - box0[3] <= 16 and box0[1] - box1[3] <= 16
                and box1[0] - box0[2] <= 15 and box0[0] - box1[2] <= 15)

    taken = [False] * len(tokens)
    spans = []
    for first in range(len(tokens)):
        if taken[first]:
            continue
        taken[first] = True
        group, queue = [], [first]
        while queue:
            current = queue.pop(0)
            group.append(current)
            for other in range(len(tokens)):
                if not taken[other] and neighbours(tokens[current], tokens[other]):
                    taken[other] = True
                    queue.append(other)
        boxes = [tokens[k][0] for k in group]
        spans.append((tokens[first][1], [min(b[0] for b in boxes), min(b[1] for b in boxes),
                                         max(b[2] for b in boxes), max(b[3] for b in boxes)]))
    return spans


def write_page(path: Path, tokens: list[tuple[list[float], str]]) -> None:
    path.write_text("\r\n".join(token_line(f"w{k}", box, label) for k, (box, label) in enumerate(tokens)) + "\r\n")


def test_tokens_are_grouped_into_label_spans(tmp_path):
    tokens = [([100, 100, 140, 112], "paragraph"), ([150, 100, 200, 112], "paragraph"),  # gap 10: one span
              ([216, 100, 260, 112], "paragraph"),  # gap 16 > 15 across: a span of its own
              ([100, 128, 150, 140], "paragraph"),  # 16 below the first: joins it
              ([100, 60, 300, 80], "title"), ([500, 900, 520, 912], "footer")]
    write_page(tmp_path / "page_0.txt", tokens)
    layout = read(tmp_path / "page_0.txt")
    page = layout.pages[0]
    assert (page.id, page.width, page.height) == ("page_0", 1000, 1000)  # no image: DocBank's grid
    assert page.labels == ["paragraph", "paragraph", "title", "footer"]
    assert page.bboxes.tolist() == [[100, 100, 200, 140], [216, 100, 260, 112], [100, 60, 300, 80], [500, 900, 520, 912]]
    assert [label for label, _ in brute_force_spans(tokens)] == page.labels
    no_image = [w for w in layout.warnings if "no page image" in w.message]
    assert len(no_image) == 1 and no_image[0].page == "page_0" and "page_0.txt" in no_image[0].message


box_strategy = st.tuples(st.integers(0, 200), st.integers(0, 200), st.integers(0, 40), st.integers(0, 30)).map(
    lambda t: [t[0], t[1], t[0] + t[2], t[1] + t[3]])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(box_strategy, st.sampled_from(["paragraph", "table", "equation"])), max_size=25))
def test_grouping_equals_brute_force(tmp_path_factory, tokens):
    folder = tmp_path_factory.mktemp("docbank")
    write_page(folder / "p.txt", tokens)
    page = read(folder / "p.txt").pages[0]
    expected = brute_force_spans(tokens)
    assert page.labels == [label for label, _ in expected]
    assert page.bboxes.tolist() == [box for _, box in expected]


def test_the_page_image_gives_the_frame(tmp_path):
    write_page(tmp_path / "doc_3.txt", [([100, 200, 500, 300], "table")])
    Image.new("RGB", (850, 1100)).save(tmp_path / "doc_3_ori.jpg")
    page = read(tmp_path).pages[0]
    assert (page.width, page.height) == (850, 1100)
    assert page.bboxes.tolist() == [[85, 220, 425, 330]]
    assert page.image is not None and page.image.path.name == "doc_3_ori.jpg"


def test_detected_as_a_file_and_as_a_folder(tmp_path):
    write_page(tmp_path / "a.txt", [([1, 2, 3, 4], "paragraph")])
    assert detect_format(tmp_path / "a.txt") == "docbank" and detect_format(tmp_path) == "docbank"


@pytest.mark.parametrize("first_token", ["{", "[1]", "<b>", "{\\bf"])
def test_detected_whatever_the_first_token(tmp_path, first_token):
    """A first token that opens like JSON or markup (a reference's "[1]") is still DocBank."""
    (tmp_path / "a.txt").write_text(token_line(first_token, [1, 2, 3, 4], "reference") + "\n")
    assert detect_format(tmp_path / "a.txt") == "docbank"


@pytest.mark.parametrize(("line", "problem"), [
    ("word\t1\t2\t3\t4\t0\t0\t0\tfont", "9 tab-separated fields"),
    ("word\t1\ttwo\t3\t4\t0\t0\t0\tfont\tparagraph", "must be numbers"),
    ("word\t10\t2\t3\t4\t0\t0\t0\tfont\tparagraph", "not x0 <= x1"),
    ("word\t1\t2\t3\t4\t0\t0\t300\tfont\tparagraph", "not colours"),
    ("word\t1\t2\t3\t4\t0\t0\t0\tfont\t ", "label"),
])
def test_bad_lines_are_errors_naming_file_page_and_line(tmp_path, line, problem):
    (tmp_path / "p.txt").write_text(token_line("ok", [1, 2, 3, 4], "paragraph") + "\n" + line + "\n")
    with pytest.raises(InputError) as error:
        read(tmp_path / "p.txt")
    message = str(error.value)
    assert problem in message and "line 2" in message and "p.txt" in message and "'p'" in message


def test_a_coordinate_beyond_the_grid_is_kept_with_a_warning(tmp_path):
    write_page(tmp_path / "p.txt", [([10, 10, 20, 20], "title"), ([990, 10, 1010, 20], "footer")])
    layout = read(tmp_path / "p.txt")
    beyond = [w for w in layout.warnings if "outside" in w.message]
    assert len(beyond) == 1 and beyond[0].page == "p" and beyond[0].box == 1
    assert "p.txt line 2" in beyond[0].message and "footer" in beyond[0].message and "region 1" in beyond[0].message
    assert layout.pages[0].bboxes.tolist() == [[10, 10, 20, 20], [990, 10, 1010, 20]]


def test_a_bad_file_exits_2_without_stdout(tmp_path):
    (tmp_path / "p.txt").write_text("word\t1\t2\t3\t4\t0\t0\t0\tfont\tparagraph\nbroken\n")
    code, stdout, stderr = run_cli("evaluate", str(tmp_path), str(tmp_path), "--format", "docbank", "--out", str(tmp_path / "out"))
    assert code == 2 and stdout == "" and "p.txt" in stderr and "line 2" in stderr


def samples() -> Path:
    folder = os.environ.get("DOCBANK_SAMPLES")
    if not folder or not Path(folder).is_dir():
        pytest.skip("DocBank's sample pages are not redistributed with the tests: set DOCBANK_SAMPLES to a folder of "
                    "github.com/doc-analysis/DocBank's DocBank_samples/DocBank_samples (*.txt, *_ori.jpg)")
    return Path(folder)


def _tokens_of(path: Path) -> list[tuple[list[float], str]]:
    tokens = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        tokens.append(([float(v) for v in fields[1:5]], fields[9]))
    return tokens


def test_real_pages_read_to_the_brute_force_spans():
    folder = samples()
    files = sorted(folder.glob("*.txt"))
    layout = read(folder)
    assert [page.id for page in layout.pages] == [f.stem for f in files]
    checked = 0
    for file, page in zip(files, layout.pages):
        tokens = _tokens_of(file)
        if len(tokens) > 800:  # the brute force compares every pair in Python: the smaller pages
            continue
        expected = brute_force_spans(tokens)
        with Image.open(folder / f"{file.stem}_ori.jpg") as image:
            width, height = image.size
        assert (page.width, page.height) == (width, height)
        assert page.labels == [label for label, _ in expected]
        pixels = [[x0 * width / 1000, y0 * height / 1000, x1 * width / 1000, y1 * height / 1000] for _, (x0, y0, x1, y1) in expected]
        assert page.bboxes.tolist() == pixels
        checked += 1
    assert checked >= 40


def test_real_pages_evaluate():
    folder = samples()
    with pytest.warns(tore.ToreWarning):  # two zero-width spans paint no pixel, and mAP notes the missing scores
        evaluation = tore.evaluate(folder, folder)
    assert len(evaluation.pages) == len(list(folder.glob("*.txt")))
    assert evaluation.matrices.foreground == (1.0, 1.0)
    assert any("paints no pixel" in warning["message"] for warning in evaluation.warnings)
