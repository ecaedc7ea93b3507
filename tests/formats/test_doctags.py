"""DocTags pages: the SmolDocling outputs of the shared data, checked against an independent count,
and every kind of malformed input named by file, line and column."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import shared_path
from tore_engine.api import detect_format, load, load_pair
from tore_engine.core.errors import InputError
from tore_engine.core.layout import LayoutSet, Page
from tore_engine.formats import doctags
from tore_engine.run.runner import evaluate_dataset

SAMPLES = ("data", "layouts", "doclaynet_readme_example_and_smoldocling")
# An element and its four locations, found by a regular expression instead of the parser's scan.
LOCATED = re.compile(r"<([a-z0-9_]+)><loc_(\d+)><loc_(\d+)><loc_(\d+)><loc_(\d+)>")


def test_the_smoldocling_pages_give_one_box_per_located_element():
    folder = shared_path(*SAMPLES)
    files = sorted(folder.glob("*.dt"))
    assert detect_format(folder) == "doctags"
    layout = load(folder)
    assert layout.page_ids() == [file.name.removesuffix(".dt") for file in files]
    for file, page in zip(files, layout.pages):
        text = file.read_text(encoding="utf-8")
        found = LOCATED.findall(text)
        assert page.box_count == text.count("<loc_") // 4 == len(found)
        assert page.labels == [label for label, *_ in found]
        assert page.bboxes.tolist() == [[int(v) for v in values] for _, *values in found]
        assert (page.width, page.height) == (500, 500)
    assert layout.box_count() == 68 and "caption" in layout.labels_in_use()  # captions nested in tables count


def test_the_boxes_are_those_docling_core_finds():
    """docling-core's own DocTags loader, a second independent reading: the same boxes (it gives
    them in a 1 x 1 frame), under docling labels instead of tag names."""
    from docling_core.types.doc import ContentLayer, DoclingDocument
    from docling_core.types.doc.doctags import DocTagsDocument

    for file in sorted(shared_path(*SAMPLES).glob("*.dt")):
        text = file.read_text(encoding="utf-8")
        document = DoclingDocument.load_from_doctags(DocTagsDocument.from_doctags_and_image_pairs([text], None))
        theirs = [[round(v * 500) for v in prov.bbox.as_tuple()] for item, _ in document.iterate_items(
            traverse_pictures=True, included_content_layers=set(ContentLayer)) for prov in item.prov]
        assert sorted(load(file).pages[0].bboxes.tolist()) == sorted(theirs)


def test_a_prediction_on_the_grid_is_scaled_into_the_reference_page(tmp_path):
    folder = shared_path(*SAMPLES)
    reference_file = folder / "doclaynet_gt_132a855_from_readme.coco.json"
    page_id = "132a855ee8b23533d8ae69af0049c038171a06ddfcac892c3c6d7e6b4091c642.png"
    (tmp_path / "smoldocling").mkdir()
    shutil.copy(folder / f"smoldocling_{page_id.removesuffix('.png')}.dt", tmp_path / "smoldocling" / f"{page_id}.dt")
    reference, prediction = load_pair(reference_file, tmp_path / "smoldocling")
    evaluation = evaluate_dataset(reference, prediction, taxonomy="dual")
    assert evaluation.page_ids == [page_id] and evaluation.pixels == 1025 * 1025
    assert not [w for w in evaluation.input_warnings if w.side == "prediction"]  # every scaled box lies inside the page


@pytest.mark.parametrize(
    "text, problem",
    [
        ("<doctag><text><loc_1><loc_2><loc_3><loc_4>cut", "line 1, column 46: <text> (line 1, column 9) is never closed: the file ends inside it (a truncated model output?)"),
        ("<doctag>\n<text><loc_1><loc_2><loc_3>x</text></doctag>", "line 2, column 28: <text> (line 2, column 1) has 3 locations, fewer than the 4 of a box (x0, y0, x1, y1)"),
        ("<doctag><text><loc_1><loc_2><loc_3><loc_501>x</text></doctag>", "line 1, column 36: <loc_501> is outside the 0..500 grid"),
        ("<doctag><text><loc_1><loc_2><loc_3><loc_4><loc_5>x</text></doctag>", "line 1, column 43: <text> (line 1, column 9) has more than 4 locations"),
        ("<doctag><text>x<loc_1></text></doctag>", "line 1, column 16: <loc_1> does not follow an opening tag: a location belongs right after one"),
        ("<doctag><loc_x></doctag>", "line 1, column 9: <loc_x> is not a location (<loc_N>, N from 0 to 500)"),
        ("<doctag></text></doctag>", "line 1, column 9: </text> closes no open element"),
        ("<doctag><list><text><loc_1><loc_2><loc_3><loc_4>x</list></doctag>", "line 1, column 50: <text> (line 1, column 15) is not closed before </list>"),
        ("<doctag><page_break></doctag>", "line 1, column 9: <page_break>: a DocTags file holds one page; split the file at its page breaks"),
        ("<a>" * 40, "line 1, column 97: elements nest more than 32 levels deep"),
    ],
)
def test_malformed_doctags_name_the_file_line_and_problem(tmp_path, text, problem):
    path = tmp_path / "page.dt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load(tmp_path)
    assert (caught.value.file, caught.value.problem) == (str(path), problem)


def test_markers_without_location_and_table_cells_need_no_closing_tag(tmp_path):
    text = ("<doctag><picture><loc_0><loc_0><loc_9><loc_9><logo></picture>"
            "<otsl><loc_1><loc_1><loc_8><loc_8><fcel>a<fcel><loc_2><loc_2><loc_3><loc_3>b<nl>"
            "<caption><loc_4><loc_4><loc_5><loc_5>p < 0.05</caption></otsl></doctag>")
    labels, coordinates = doctags.parse(text, "page.dt")
    assert labels == ["picture", "otsl", "fcel", "caption"]
    assert coordinates == [0, 0, 9, 9, 1, 1, 8, 8, 2, 2, 3, 3, 4, 4, 5, 5]


def test_page_ids_drop_each_doctags_suffix(tmp_path):
    for name in ("a.dt", "b.doctags.txt", "c.doctags"):
        (tmp_path / name).write_text("<doctag></doctag>", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a page", encoding="utf-8")
    assert load(tmp_path).page_ids() == ["a", "b", "c"]


@pytest.mark.parametrize(
    "page, problem",
    [
        (Page("a/1", 5, 5, [], [[0, 0, 1, 1]][:0]), "page id 'a/1' cannot be a DocTags file name"),
        (Page("p", 5, 5, ["Key-Value Region"], [[0, 0, 1, 1]]), "label 'Key-Value Region' cannot be a DocTags tag name"),
    ],
)
def test_writing_refuses_what_doctags_cannot_name(tmp_path, page, problem):
    with pytest.raises(InputError) as caught:
        doctags.write(LayoutSet("m", [page]), tmp_path / "out")
    assert caught.value.problem.startswith(problem) and caught.value.page == page.id


TOKENS = st.sampled_from(["<doctag>", "</doctag>", "<text>", "</text>", "<otsl>", "</otsl>", "<fcel>", "<nl>", "<logo>", "<picture>",
                          "</picture>", "<loc_0>", "<loc_250>", "<loc_500>", "<loc_501>", "<loc_>", "</loc_1>", "<page_break>",
                          "<", ">", "</", "x", " ", "\n", "<_Python_>", "<é>"])


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=40))
def test_any_token_soup_is_a_page_or_one_clear_error(tokens):
    try:
        labels, coordinates = doctags.parse("".join(tokens), "soup.dt")
    except InputError as error:
        assert "\n" not in error.paragraph() and error.paragraph().startswith("file soup.dt: line ")
    else:
        assert len(coordinates) == 4 * len(labels) and all(0 <= value <= 500 for value in coordinates)


def test_hostile_sizes_take_one_linear_pass():
    """Megabytes of what would make a backtracking pattern or a recursive parser struggle."""
    for text in ("<" * 2_000_000, "<a" * 1_000_000, "<loc_1>" * 300_000, "<doctag>" + "<fcel>" * 500_000 + "</doctag>",
                 "<doctag>" + "<text><loc_1><loc_2><loc_3><loc_4>x</text>" * 50_000 + "</doctag>"):
        try:
            doctags.parse(text, "big.dt")
        except InputError as error:
            assert "\n" not in error.paragraph()
