"""The native layout JSON: read column-wise, and a clear error for every kind of bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from tests.helpers import layout_json, load_vector, write_json
from tests.mutations import VALID_NATIVE, json_values, loads_or_input_error, mutations
from tore_engine.api import load
from tore_engine.core.errors import InputError
from tore_engine.formats.native import from_document, read


def good_page(**changes):
    page = {"id": "p1", "width": 100, "height": 50, "boxes": [{"label": "Text", "bbox": [1, 2, 30, 40], "score": 0.5}]}
    page.update(changes)
    return page


def error_of(tmp_path, document) -> InputError:
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read(path)
    return caught.value


def test_native_layout_is_read_column_wise(tmp_path):
    (tmp_path / "img").mkdir()
    path = write_json(tmp_path / "model-x.json", layout_json("m", [good_page(image="img/p1.png")]))
    layout = read(path)
    assert layout.name == "m" and layout.taxonomy is None
    page = layout.pages[0]
    assert (page.id, page.width, page.height, page.labels) == ("p1", 100.0, 50.0, ["Text"])
    assert page.bboxes.tolist() == [[1, 2, 30, 40]] and page.scores.tolist() == [0.5]
    assert page.image.path == (tmp_path / "img" / "p1.png").resolve()


def test_name_defaults_to_the_file_stem(tmp_path):
    assert read(write_json(tmp_path / "heron.json", {"pages": []})).name == "heron"


def test_a_file_and_the_same_document_in_memory_give_the_same_layout(tmp_path):
    document = layout_json("m", [good_page(), good_page(id="p2", boxes=[])], ["Text", "Table"])
    from_file, from_memory = read(write_json(tmp_path / "m.json", document)), from_document(document, "m.json")
    for a, b in zip(from_file.pages, from_memory.pages):
        assert (a.id, a.labels, a.bboxes.tolist()) == (b.id, b.labels, b.bboxes.tolist())
    assert from_file.taxonomy == from_memory.taxonomy == ["Text", "Table"]


@pytest.mark.parametrize(
    "document, where, problem",
    [
        ("{not json", (None, None), "is not valid JSON: object keys must be strings (line 1, column 2)"),
        ({"pages": [good_page(id=None)]}, (None, None), "expected int | str, got null (at id) (pages[0])"),
        ({"pages": [{"id": "p1", "height": 5}]}, ("p1", None), "missing key 'width'"),
        ({"pages": [good_page(width=0)]}, ("p1", None), "width must be a positive finite number, got 0.0"),
        ({"pages": [good_page(height=-3)]}, ("p1", None), "height must be a positive finite number, got -3.0"),
        ({"pages": [good_page(boxes=[{"label": "Text"}])]}, ("p1", 0), "missing key 'bbox' (a box gives its 'bbox', its 'polygon', or both)"),
        ({"pages": [good_page(boxes=[{"label": "Text", "polygon": [0, 0, 1, 1]}])]}, ("p1", 0), "a polygon is x1, y1, x2, y2, ... for at least 3 points, got 4 numbers"),
        ({"pages": [good_page(boxes=[{"label": "Text", "polygon": [0, 0, 4, 0, 4, 3], "bbox": [0, 0, 4, 4]}])]}, ("p1", 0),
         "bbox [0.0, 0.0, 4.0, 4.0] is not the bounding box [0.0, 0.0, 4.0, 3.0] of its polygon"),
        ({"pages": [good_page(boxes=[{"label": "Text", "polygon": [0, 0, 4, 0, 4, 1e300]}])]}, ("p1", 0),
         "polygon point 2 is [4.0, 1e+300]: coordinates must be finite, at most 2^40 in magnitude, and 0 or at least 2^-400"),
        ({"pages": [good_page(boxes=[{"label": "Text", "bbox": [1, 2, 3]}])]}, ("p1", 0), "expected a list of 4 numbers (at bbox)"),
        ({"pages": [good_page(boxes=[{"label": "T", "bbox": [0, 0, 1, 1]}, {"label": "T", "bbox": [1, "a", 3, 4]}])]}, ("p1", 1), "expected float, got str (at bbox[1])"),
        ({"pages": [good_page(), good_page()]}, ("p1", None), "duplicate page id"),
        ({"taxonomy": ["Table"], "pages": [good_page()]}, (None, None), "labels not in the declared taxonomy: 'Text' (first at page 'p1', box 0)"),
        ([1, 2], (None, None), "a layout JSON must be an object with 'pages' (docs/formats.md#layout-json)"),
        ({"pages": {"p1": good_page()}}, (None, None), "'pages' must be a list of page objects"),
        ({"pages": [good_page(box=[])]}, ("p1", None), "unknown key 'box' (did you mean 'boxes'?)"),
        ({"pages": [good_page(boxes=[{"label": "Text", "box": [0, 0, 1, 1]}])]}, ("p1", 0), "unknown key 'box' (did you mean 'bbox'?)"),
        ({"pages": [good_page(boxes=[{"label": "Text", "bbox": [0, 0, 1, 1], "scroe": 1}])]}, ("p1", 0), "unknown key 'scroe' (did you mean 'score'?)"),
        ({"pages": [good_page(boxes=[{"label": "Text", "bbox": [0, 0, 1, 1], "colour": "red"}])]}, ("p1", 0), "unknown key 'colour'"),
        ({"pages": [good_page(widht=5)]}, ("p1", None), "unknown key 'widht' (did you mean 'width'?)"),
        ({"pages": [], "nmae": "x"}, (None, None), "unknown key 'nmae' (did you mean 'name'?)"),
        ({"pages": [good_page(boxes=[{"label": "", "bbox": [0, 0, 1, 1]}])]}, ("p1", 0), "label must be a non-empty string, got ''"),
        ('{"pages": [{"id": "p1", "width": 9, "height": 9, "boxes": [{"label": "T", "bbox": [0, 0, 1, 1e400]}]}]}', ("p1", 0), "number out of range (at bbox[3])"),
    ],
)
def test_bad_input_names_file_page_box_and_problem(tmp_path, document, where, problem):
    error = error_of(tmp_path, document)
    assert (error.page, error.box, error.problem) == (*where, problem)
    assert error.file == str(tmp_path / "bad.json")
    assert str(tmp_path / "bad.json") in error.paragraph()


def test_duplicate_keys_are_errors_at_any_level(tmp_path):
    text = '{"pages": [{"id": "p", "width": 9, "height": 9, "width": 5, "boxes": []}]}'
    assert "repeats the key 'width'" in error_of(tmp_path, text).problem
    assert "repeats the key 'pages'" in error_of(tmp_path, '{"pages": [], "pages": []}').problem


def test_nan_and_infinity_are_not_json(tmp_path):
    for literal in ("NaN", "Infinity", "-Infinity"):
        error = error_of(tmp_path, '{"pages": [{"id": "p", "width": 9, "height": 9, "boxes": [{"label": "a", "bbox": [0, %s, 1, 1]}]}]}' % literal)
        assert "NaN and Infinity are not JSON numbers" in error.problem and "line 1" in error.problem


def test_non_utf8_and_missing_files(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"pages": [], "name": "\xe9"}')
    with pytest.raises(InputError, match="is not valid JSON: the text is not UTF-8"):
        read(path)
    with pytest.raises(InputError, match="no such file"):
        load(tmp_path / "absent.json")


def test_an_image_outside_the_layouts_folder_is_not_drawn(tmp_path):
    (tmp_path / "data").mkdir()
    document = layout_json("m", [good_page(image="/etc/passwd"), good_page(id="p2", pdf="../secret.pdf"), good_page(id="p3", image="ok.png")])
    layout = read(write_json(tmp_path / "data" / "m.json", document))
    assert [page.image for page in layout.pages[:2]] == [None, None]
    assert layout.pages[2].image.path == (tmp_path / "data" / "ok.png").resolve()
    assert [(w.page, w.box) for w in layout.warnings] == [("p1", None), ("p2", None)]
    assert all("outside the layout's folder" in w.message for w in layout.warnings)


def test_a_page_images_folder_is_searched_instead(tmp_path):
    images = tmp_path / "renders"
    images.mkdir()
    layout = read(write_json(tmp_path / "m.json", layout_json("m", [good_page(pdf="doc.pdf", page_no=2)])), page_images=images)
    assert layout.pages[0].image.path == (images / "doc.pdf").resolve() and layout.pages[0].image.pdf_page == 2


def test_the_compiled_scan_reads_the_same_layout(tmp_path, monkeypatch):
    import tore_engine.io.json as json_rules

    path = write_json(tmp_path / "gt.json", load_vector("tore_public_pages.json")["reference"])
    with_numpy = read(path)
    monkeypatch.setattr(json_rules, "KERNEL_MIN_BYTES", 0)
    with_kernel = read(path)
    assert with_kernel.page_ids() == with_numpy.page_ids() and with_kernel.name == with_numpy.name
    assert (with_kernel.pages.bboxes == with_numpy.pages.bboxes).all() and with_kernel.pages.vocabulary == with_numpy.pages.vocabulary
    assert "repeats the key 'width'" in error_of(tmp_path, '{"pages": [{"id": "p", "width": 9, "height": 9, "width": 5}]}').problem


def test_readers_report_their_progress_in_bytes(tmp_path, monkeypatch):
    import tore_engine.formats.lazy as lazy
    from tore_engine.formats.progress import reading

    path = write_json(tmp_path / "gt.json", load_vector("tore_public_pages.json")["reference"])
    size = path.stat().st_size
    for threshold in (lazy.LAZY_BYTES, 0):  # the whole-file reader, then the index of a large file
        monkeypatch.setattr(lazy, "LAZY_BYTES", threshold)
        done: list[int] = []
        with reading(done.append):
            read(path)
        assert 0.9 * size < sum(done) <= size and len(done) >= 1


# --- hostile input ------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(json_values | mutations(VALID_NATIVE))
def test_native_loader_never_crashes(document):
    loads_or_input_error(lambda d: from_document(d, "hostile.json"), document)


def test_duplicate_ids_are_an_error():
    page = {"id": "p", "width": 5, "height": 5, "boxes": []}
    with pytest.raises(InputError, match="duplicate page id"):
        from_document({"pages": [page, page]}, "dup.json")


@pytest.mark.parametrize("score, kind", [(float("nan"), "NaN"), (float("inf"), "infinite"), (float("-inf"), "infinite")])
def test_a_document_built_in_python_with_a_nan_score_is_refused_at_its_box(score, kind):
    """A Python float holds what JSON cannot: NaN, TORE's mark of a box without a score, would rank as none."""
    boxes = [{"label": "T", "bbox": [0, 0, 1, 1], "score": 0.5}, {"label": "T", "bbox": [0, 0, 1, 1], "score": score}]
    with pytest.raises(InputError) as caught:
        from_document({"pages": [good_page(), good_page(id="p2", boxes=boxes)]}, "scores.json")
    assert (caught.value.file, caught.value.page, caught.value.box) == ("scores.json", "p2", 1)
    assert caught.value.problem.startswith(f"score is {kind}, and a score must be a finite number")


def test_a_document_built_in_python_names_the_key_a_misspelt_one_resembles():
    with pytest.raises(InputError) as caught:
        from_document({"pages": [good_page(boxes=[{"label": "T", "box": [0, 0, 1, 1]}])]}, "typo.json")
    assert (caught.value.page, caught.value.box, caught.value.problem) == ("p1", 0, "unknown key 'box' (did you mean 'bbox'?)")
