"""DoclingDocument files: the real documents of two docling layout models, checked against an
independent walk of their JSON, their PDFs as page images, and clear errors for broken documents."""

from __future__ import annotations

import base64
import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docling_core.types.doc import (
    BoundingBox,
    CoordOrigin,
    DocItemLabel,
    DoclingDocument,
    ImageRef,
    ProvenanceItem,
    Size,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from tests.helpers import input_error_without, shared_path, write_json
from tests.mutations import paths_of
from tore_engine.api import detect_format, load, load_pair
from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command
from tore_engine.core.layout import PageImage
from tore_engine.core.taxonomy import DOCLING, VOCABULARIES
from tore_engine.formats.stored_images import read_image_bytes

DOCUMENTS = ("data", "layouts", "docling_documents")
PDFS = ("data", "layouts", "docling_two_layout_models", "pdfs")
# The folder's README: prov boxes of the items iterate_items() yields over all content layers,
# without / with the text docling nests inside pictures (docs/formats.md counts the latter).
README_BOXES = {"pre_heron": (82, 94), "heron": (79, 90)}


def resolve(document: dict, ref: str) -> dict:
    _, kind, index = ref.split("/")
    return document[kind][int(index)]


def walk(document: dict, node: dict, nested_in_pictures: bool):
    """The items under `node` in document order, as docling's tree links them: a picture's children
    other than its captions only when `nested_in_pictures`."""
    captions = {caption["$ref"] for caption in node.get("captions", [])}
    for child in node.get("children", []):
        if node.get("label") == "picture" and not nested_in_pictures and child["$ref"] not in captions:
            continue
        item = resolve(document, child["$ref"])
        yield item
        yield from walk(document, item, nested_in_pictures)


def expected_pages(folder: Path, nested_in_pictures: bool = True) -> dict[str, tuple[float, float, list, list]]:
    """Page id -> (width, height, labels, top-left boxes), from the raw JSON."""
    pages = {}
    for file in sorted(folder.glob("*.json")):
        document = json.loads(file.read_text(encoding="utf-8"))
        sizes = {int(n): page["size"] for n, page in document["pages"].items()}
        boxes = {n: ([], []) for n in sorted(sizes)}
        for item in walk(document, document["body"], nested_in_pictures):
            for prov in item.get("prov", []):
                box, height = prov["bbox"], sizes[prov["page_no"]]["height"]
                top, bottom = (height - box["t"], height - box["b"]) if box["coord_origin"] == "BOTTOMLEFT" else (box["t"], box["b"])
                boxes[prov["page_no"]][0].append(item["label"])
                boxes[prov["page_no"]][1].append([box["l"], top, box["r"], bottom])
        for n, (labels, bboxes) in boxes.items():
            pages[f"{document['name']}/{n}"] = (sizes[n]["width"], sizes[n]["height"], labels, bboxes)
    return pages


@pytest.mark.parametrize("side", list(README_BOXES))
def test_the_real_documents_give_one_box_per_prov_entry(side):
    folder = shared_path(*DOCUMENTS, side)
    assert detect_format(folder) == "docling"
    layout = load(folder)
    without_nested, with_nested = README_BOXES[side]
    assert sum(len(p[2]) for p in expected_pages(folder, nested_in_pictures=False).values()) == without_nested
    assert layout.box_count() == with_nested  # traverse_pictures=True, as docs/formats.md says
    expected = expected_pages(folder)
    assert layout.page_ids() == list(expected) and layout.name == side
    for page in layout.pages:
        width, height, labels, bboxes = expected[page.id]
        assert (page.width, page.height, page.labels) == (width, height, labels)
        assert page.bboxes.tolist() == bboxes  # the same subtraction from the page height, so exactly equal
    assert not layout.warnings


def test_pages_are_drawn_from_the_pdf_named_in_the_document(tmp_path):
    pdfs = shared_path(*PDFS)
    folder = shared_path(*DOCUMENTS, "heron")
    layout = load(folder, page_images=pdfs)
    assert [(page.image.path, page.image.pdf_page) for page in layout.pages if page.id.startswith("picture_classification")] == [
        ((pdfs / "picture_classification.pdf").resolve(), 0), ((pdfs / "picture_classification.pdf").resolve(), 1)]
    named = [((pdfs / document["origin"]["filename"]).resolve(), int(page_no) - 1)  # each document's own PDF, its pages
             for path in sorted(folder.glob("*.json")) for document in [json.loads(path.read_text())] for page_no in sorted(document["pages"], key=int)]
    assert [(page.image.path, page.image.pdf_page) for page in layout.pages] == named
    assert all(page.image is None for page in load(folder).pages)  # no PDF beside the JSON
    shutil.copy(folder / "amt_handbook_sample.json", tmp_path)
    shutil.copy(pdfs / "amt_handbook_sample.pdf", tmp_path)
    assert load(tmp_path / "amt_handbook_sample.json").pages[0].image == PageImage((tmp_path / "amt_handbook_sample.pdf").resolve(), 0)


def test_an_embedded_page_image_is_read_from_the_document(tmp_path):
    document = DoclingDocument(name="scan")
    document.add_page(page_no=1, size=Size(width=40, height=20), image=ImageRef.from_pil(Image.new("RGB", (40, 20), "red"), dpi=72))
    bbox = BoundingBox(l=1, t=2, r=30, b=15, coord_origin=CoordOrigin.TOPLEFT)
    document.add_text(DocItemLabel.TEXT, "x", prov=ProvenanceItem(page_no=1, bbox=bbox, charspan=(0, 1)))
    document.save_as_json(tmp_path / "scan.json")
    page = load(tmp_path / "scan.json").pages[0]
    assert (page.id, page.labels, page.bboxes.tolist()) == ("scan/1", ["text"], [[1, 2, 30, 15]])
    assert page.image == PageImage((tmp_path / "scan.json").resolve(), parquet_cell=("pages", 1, None))
    uri = json.loads((tmp_path / "scan.json").read_text())["pages"]["1"]["image"]["uri"]
    assert read_image_bytes(page.image) == base64.b64decode(uri.partition(",")[2]) and uri.startswith("data:image/png;base64,")


def test_evaluate_runs_on_the_two_models_with_their_pdfs(tmp_path):
    folder = shared_path(*DOCUMENTS)
    result = subprocess.run([sys.executable, "-m", "tore_engine", "evaluate", str(folder / "pre_heron"), str(folder / "heron"),
                             "--out", str(tmp_path / "out"), "--page-images", str(shared_path(*PDFS))],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    reference, prediction = load_pair(folder / "pre_heron", folder / "heron")
    # Heron adds formula and list_item, which pre-Heron never uses; both are Docling's label set
    # (`vocabulary`), so the auto rule picks single mode, in DocItemLabel's order.
    assert set(prediction.labels_in_use()) - set(reference.labels_in_use()) == {"formula", "list_item"}
    assert report["mode"] == "single" and report["pages"] == 7
    used = set(reference.labels_in_use()) | set(prediction.labels_in_use())
    assert report["classes"][1:] == [label for label in VOCABULARIES[DOCLING] if label in used]


BASE = {"schema_name": "DoclingDocument", "version": "1.6.0", "name": "d",
        "body": {"self_ref": "#/body", "children": [{"$ref": "#/texts/0"}], "content_layer": "body", "name": "_root_", "label": "unspecified"},
        "texts": [{"self_ref": "#/texts/0", "parent": {"$ref": "#/body"}, "children": [], "content_layer": "body", "label": "text",
                   "prov": [{"page_no": 1, "bbox": {"l": 1, "t": 9, "r": 5, "b": 2, "coord_origin": "BOTTOMLEFT"}, "charspan": [0, 1]}],
                   "orig": "x", "text": "x"}],
        "pages": {"1": {"size": {"width": 10, "height": 10}, "page_no": 1}}}


def changed(edit) -> dict:
    document = copy.deepcopy(BASE)
    edit(document)
    return document


def test_the_base_document_is_valid(tmp_path):
    page = load(write_json(tmp_path / "d.json", BASE)).pages[0]
    assert (page.id, page.labels, page.bboxes.tolist()) == ("d/1", ["text"], [[1, 1, 5, 8]])


def test_a_box_docling_core_clamps_to_its_page_is_listed_in_warnings(tmp_path):
    layout = load(write_json(tmp_path / "d.json", changed(lambda d: d["texts"][0]["prov"][0]["bbox"].update(r=50))))
    assert layout.pages[0].bboxes.tolist() == [[1, 1, 10, 8]]  # r clamped to the page width by docling-core
    assert [(w.page, w.message.startswith("docling-core: ") and "outside page bounds" in w.message) for w in layout.warnings] == [("d/1", True)]


@pytest.mark.parametrize(
    "document, problem",
    [
        ("{not json", "is not valid JSON: key must be a string at line 1 column 2"),
        ('{"name": "a", "name": "b"}', "repeats the key 'name' in one object (line 1, column 15); a JSON key may appear once"),
        (changed(lambda d: d["texts"][0]["prov"][0]["bbox"].update(l="left")),
         "is not a valid DoclingDocument: Input should be a valid number, unable to parse string as a number, got 'left' (at texts[0].prov[0].bbox.l)"),
        (changed(lambda d: d["texts"][0].update(lable="text")), "is not a valid DoclingDocument: Extra inputs are not permitted, got 'text' (at texts[0].lable)"),
        (changed(lambda d: d["body"]["children"].append({"$ref": "#/texts/7"})),
         "is not a valid DoclingDocument: a '$ref' points to no item: '#/texts/7' (at body.children[1])"),
        (changed(lambda d: d["texts"][0]["prov"][0].update(page_no=2)), "#/texts/0 has a box on page 2, which 'pages' does not list"),
        (changed(lambda d: d.pop("name")), "is not a valid DoclingDocument: Field required (at the top level)"),
    ],
)
def test_a_broken_document_is_one_paragraph_naming_file_and_place(tmp_path, document, problem):
    path = tmp_path / "bad.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load(path, format="docling")
    assert (caught.value.file, caught.value.problem) == (str(path), problem)


def test_a_misspelt_label_lists_the_labels_of_a_text_item(tmp_path):
    """pydantic tries every kind of text item; the error is that of the closest (and most general)."""
    with pytest.raises(InputError) as caught:
        load(write_json(tmp_path / "bad.json", changed(lambda d: d["texts"][0].update(label="paragraf"))))
    problem = caught.value.problem
    assert problem.startswith("is not a valid DoclingDocument: Input should be 'caption', ") and problem.endswith(", got 'paragraf' (at texts[0].label)")
    assert {"'text'", "'paragraph'", "'page_header'"} <= set(problem.replace(" or ", ", ").split(", "))


def test_two_documents_of_one_name_in_a_folder_are_an_error(tmp_path):
    write_json(tmp_path / "a.json", BASE)
    write_json(tmp_path / "b.json", BASE)
    with pytest.raises(InputError, match="a.json and b.json are both named 'd': their page ids would be the same"):
        load(tmp_path, format="docling")


HOSTILE = [None, -1, 0, 2**70, 1e308, "", "x", "#/texts/0", [], {}, [1, 2], True, {"$ref": "#/body"}, {"$ref": "#/texts/0"}]


def replaced(document: dict, path: tuple, value) -> dict:
    document = copy.deepcopy(document)
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return document


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([p for p in paths_of(BASE) if p]), st.sampled_from(HOSTILE))
def test_a_mutated_document_loads_or_is_one_clear_error(tmp_path, path, value):
    file = write_json(tmp_path / "m.json", replaced(BASE, path, value))
    try:
        layout = load(file, format="docling")
    except InputError as error:
        assert error.file == str(file) and "\n" not in error.paragraph()
    else:
        assert all(page.bboxes.shape == (page.box_count, 4) for page in layout.pages)


@pytest.mark.parametrize("call", ["load(path, format='docling')", "load_pair(path, format='docling-eval')"])
def test_without_docling_core_the_error_names_the_extra(tmp_path, call):
    path = write_json(tmp_path / "d.json", BASE)
    assert input_error_without("docling_core", call, path=str(path)) == f"reading this format needs docling-core, which is not installed: {install_command('docling')}"
