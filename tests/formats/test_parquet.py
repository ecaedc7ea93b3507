"""Parquet layouts: one row a page, read column-wise, strict about columns and types; stored page
images read one cell at a time."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from tests.helpers import input_error_without, shared_path, write_json
from tore_engine.api import detect_format, load
from tore_engine.core.errors import InputError
from tore_engine.core.extras import install_command, optional_module
from tore_engine.core.layout import PageImage
from tore_engine.formats import parquet, parquet_files
from tore_engine.formats.stored_images import read_image_bytes

BOX = pa.struct([("label", pa.string()), ("bbox", pa.list_(pa.float64())), ("score", pa.float64())])
INTEGER_BOX = pa.struct([("label", pa.string()), ("bbox", pa.list_(pa.int64())), ("score", pa.int64())])
PAGES = {
    "id": ["p1", "p2", "p3"],
    "width": [100, 200, 300],
    "height": [50.5, 60.0, 70.0],
    "boxes": [
        [{"label": "Text", "bbox": [1, 2, 30, 40], "score": 0.5}, {"label": "Table", "bbox": [0, 0, 10, 10], "score": None}],
        None,
        [{"label": "Text", "bbox": [5, 5, 6, 6], "score": 0.25}],
    ],
}


def write_table(path, columns: dict, types: dict | None = None, metadata: dict | None = None, **options):
    types = {"boxes": pa.list_(BOX)} | (types or {})
    table = pa.table({name: pa.array(values, types.get(name)) for name, values in columns.items()})
    pq.write_table(table.replace_schema_metadata(metadata), path, **options)
    return path


def error_of(path) -> InputError:
    with pytest.raises(InputError) as caught:
        load(path, format="parquet")
    return caught.value


def test_pages_are_read_column_wise(tmp_path):
    path = write_table(tmp_path / "model.parquet", PAGES)
    assert detect_format(path) == "parquet"
    layout = load(path)
    assert (layout.name, layout.taxonomy, layout.page_ids()) == ("model", None, ["p1", "p2", "p3"])
    first, second, third = layout.pages
    assert (first.width, first.height, second.width, third.height) == (100.0, 50.5, 200.0, 70.0)
    assert first.labels == ["Text", "Table"] and first.bboxes.tolist() == [[1, 2, 30, 40], [0, 0, 10, 10]]
    assert first.scores[0] == 0.5 and first.scores[1] != first.scores[1]  # no score: NaN
    assert second.box_count == 0 and third.labels == ["Text"] and third.scores.tolist() == [0.25]


def test_schema_metadata_gives_name_and_taxonomy(tmp_path):
    metadata = {"tore.name": "heron", "tore.taxonomy": json.dumps(["Text", "Table", "Picture"])}
    layout = load(write_table(tmp_path / "x.parquet", PAGES, metadata=metadata))
    assert (layout.name, layout.taxonomy) == ("heron", ["Text", "Table", "Picture"])


def test_a_folder_of_files_is_one_layout(tmp_path):
    (tmp_path / "set").mkdir()
    write_table(tmp_path / "set" / "a.parquet", {key: values[:2] for key, values in PAGES.items()})
    write_table(tmp_path / "set" / "b.parquet", {"id": ["q"], "width": [9], "height": [9],
                                                 "boxes": [[{"label": "Picture", "bbox": [1, 1, 2, 2], "score": None}]]})
    layout = load(tmp_path / "set")
    assert layout.name == "set" and layout.page_ids() == ["p1", "p2", "q"]
    assert [page.labels for page in layout.pages] == [["Text", "Table"], [], ["Picture"]]


def test_files_of_a_folder_must_agree_on_the_taxonomy(tmp_path):
    (tmp_path / "set").mkdir()
    for name, taxonomy in (("a", ["Text", "Table"]), ("b", ["Table", "Text"])):
        write_table(tmp_path / "set" / f"{name}.parquet", PAGES | {"id": [f"{name}{k}" for k in range(3)]},
                    metadata={"tore.taxonomy": json.dumps(taxonomy)})
    assert error_of(tmp_path / "set").problem == "its files declare different 'tore.taxonomy': a.parquet and b.parquet"


def test_image_paths_are_confined_and_image_bytes_read_one_cell(tmp_path):
    pngs = [b"\x89PNG first", None, b"\x89PNG third"]
    path = write_table(tmp_path / "m.parquet", PAGES | {"image_bytes": pngs}, row_group_size=1)
    layout = load(path)
    assert [page.image for page in layout.pages] == [
        PageImage(path.resolve(), parquet_cell=("image_bytes", 0, None)), None, PageImage(path.resolve(), parquet_cell=("image_bytes", 2, None))]
    assert [read_image_bytes(layout.pages[k].image) for k in (0, 2)] == [pngs[0], pngs[2]]
    named = write_table(tmp_path / "n.parquet", PAGES | {"image": ["img/p1.png", "/etc/passwd", None]})
    layout = load(named)
    assert layout.pages[0].image == PageImage((tmp_path / "img" / "p1.png").resolve())
    assert layout.pages[1].image is None and [(w.page, "outside" in w.message) for w in layout.warnings] == [("p2", True)]


def test_write_stores_names_scores_and_image_bytes(tmp_path):
    source = write_table(tmp_path / "m.parquet", PAGES | {"image_bytes": [b"one", None, b"three"]},
                         metadata={"tore.name": "m", "tore.taxonomy": json.dumps(["Table", "Text"])})
    layout = load(source)
    parquet.write(layout, tmp_path / "copy.parquet", image_bytes=True)
    back = load(tmp_path / "copy.parquet")
    assert (back.name, back.taxonomy, back.page_ids()) == ("m", ["Table", "Text"], ["p1", "p2", "p3"])
    assert [page.labels for page in back.pages] == [page.labels for page in layout.pages]
    assert back.pages[0].scores[0] == 0.5 and back.pages[0].scores[1] != back.pages[0].scores[1]
    assert [read_image_bytes(back.pages[k].image) for k in (0, 2)] == [b"one", b"three"] and back.pages[1].image is None


@pytest.mark.parametrize(
    "change, types, where, problem",
    [
        ({"nmae": ["a", "b", "c"]}, {}, (None, None), "has an unknown column 'nmae'; known: id, width, height, boxes, image, image_bytes"),
        ({"width": ["1", "2", "3"]}, {}, (None, None), "column 'width' must hold numbers, it holds string"),
        ({"id": [1, 2, 3]}, {}, (None, None), "column 'id' must hold strings, it holds int64"),
        ({"id": ["p1", None, "p3"]}, {}, (None, None), "column 'id' is null (row 1)"),
        ({"height": [1.0, None, 2.0]}, {}, ("p2", None), "column 'height' is null (row 1)"),
        ({"boxes": [[], [], [{"label": "T", "bbox": [1, 2, 3], "score": None}]]}, {}, ("p3", 0), "bbox has 3 values, expected 4 (x1, y1, x2, y2) (row 2)"),
        ({"boxes": [[{"label": None, "bbox": [1, 2, 3, 4], "score": None}], [], []]}, {}, ("p1", 0), "'boxes.label' is null (row 0)"),
        ({"boxes": [[], [{"label": "a", "bbox": [0, 0, 1, 1], "score": None}, {"label": "b", "bbox": [1, None, 3, 4], "score": None}], []]}, {},
         ("p2", 1), "bbox holds a null coordinate (row 1)"),
        ({"boxes": [[{"label": "T", "bbox": [1, 2, 3, 4], "scroe": 1.0}], [], []]},
         {"boxes": pa.list_(pa.struct([("label", pa.string()), ("bbox", pa.list_(pa.float64())), ("scroe", pa.float64())]))},
         (None, None), "column 'boxes' has an unknown field 'scroe' (did you mean 'score'?); known: label, bbox, score"),
        ({"boxes": [[{"label": "T", "bbox": "1 2 3 4"}], [], []]}, {"boxes": pa.list_(pa.struct([("label", pa.string()), ("bbox", pa.string())]))},
         (None, None), "column 'boxes.bbox' must hold lists of 4 numbers, it holds string"),
        ({"image": ["a.png", None, None], "image_bytes": [b"png", None, None]}, {}, ("p1", None), "row 0 sets both 'image' and 'image_bytes'; give one"),
        ({"width": [1, 2**60, 3]}, {"width": pa.uint64()}, ("p2", None),
         f"column 'width' holds {2**60}, beyond 2^53 in size, which a 64-bit float cannot hold exactly (row 1)"),
        ({"height": [1, 2, -(2**53) - 1]}, {"height": pa.int64()}, ("p3", None),
         f"column 'height' holds {-(2**53) - 1}, beyond 2^53 in size, which a 64-bit float cannot hold exactly (row 2)"),
        ({"boxes": [[], [], [{"label": "T", "bbox": [1, 2, 2**53 + 1, 4], "score": None}]]}, {"boxes": pa.list_(INTEGER_BOX)}, ("p3", 0),
         f"column 'boxes.bbox' holds {2**53 + 1}, beyond 2^53 in size, which a 64-bit float cannot hold exactly (row 2)"),
        ({"boxes": [[], [{"label": "a", "bbox": [0, 0, 1, 1], "score": 1}, {"label": "b", "bbox": [0, 0, 1, 1], "score": 2**63 - 1}], []]},
         {"boxes": pa.list_(INTEGER_BOX)}, ("p2", 1),
         f"column 'boxes.score' holds {2**63 - 1}, beyond 2^53 in size, which a 64-bit float cannot hold exactly (row 1)"),
    ],
)
def test_bad_columns_name_the_file_page_box_and_column(tmp_path, change, types, where, problem):
    path = write_table(tmp_path / "bad.parquet", PAGES | change, types)
    error = error_of(path)
    assert (error.page, error.box, error.problem) == (*where, problem)
    assert error.file == str(path)


def test_a_file_that_is_not_parquet_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 not really")
    assert error_of(path).problem.startswith("is not a readable Parquet file (Parquet magic bytes not found")
    with pytest.raises(InputError, match="is not a readable Parquet file"):
        detect_format(path)  # the leading magic says Parquet; telling a docling-eval shard apart reads the footer
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no .parquet files"):
        load(tmp_path / "empty", format="parquet")


def test_a_stored_image_that_is_not_there_is_a_clear_error(tmp_path):
    path = write_table(tmp_path / "m.parquet", PAGES | {"image_bytes": [b"x", None, None]})
    with pytest.raises(InputError, match="row 1 of column 'image_bytes' holds no image bytes"):
        read_image_bytes(PageImage(path, parquet_cell=("image_bytes", 1, None)))
    with pytest.raises(InputError, match="has no row 7"):
        read_image_bytes(PageImage(path, parquet_cell=("image_bytes", 7, None)))


def test_docling_eval_shards_are_told_apart(tmp_path):
    shard = write_table(tmp_path / "s.parquet", {"document_id": ["d"], "GroundTruthDocument": ["{}"]})
    assert parquet_files.is_docling_eval_shard(shard) and not parquet_files.is_docling_eval_shard(write_table(tmp_path / "p.parquet", PAGES))


def test_a_missing_library_names_the_extra(tmp_path):
    with pytest.raises(InputError, match=re.escape(f"needs no_such_library, which is not installed: {install_command('parquet')}")):
        optional_module("no_such_library", "parquet")
    path = write_table(tmp_path / "m.parquet", PAGES)
    assert input_error_without("pyarrow", "load(path)", path=str(path)) == f"reading this format needs pyarrow, which is not installed: {install_command('parquet')}"


def test_native_pages_written_as_parquet_read_back_the_same(tmp_path):
    document = {"name": "m", "taxonomy": ["Text"], "pages": [{"id": "a", "width": 10, "height": 5, "boxes": [{"label": "Text", "bbox": [0.1, 0.2, 3.3, 4.4], "score": 0.9}]}]}
    layout = load(write_json(tmp_path / "m.json", document))
    parquet.write(layout, tmp_path / "m.parquet")
    back = load(tmp_path / "m.parquet").pages[0]
    assert (back.id, back.width, back.labels, back.bboxes.tolist(), back.scores.tolist()) == ("a", 10.0, ["Text"], [[0.1, 0.2, 3.3, 4.4]], [0.9])


def test_pdf_pages_are_written_as_png_bytes(tmp_path):
    """A docling layout drawn from its PDFs, written with image_bytes: each page rendered at 144 dpi."""
    documents, pdfs = shared_path("data", "layouts", "docling_documents", "heron"), shared_path("data", "layouts", "docling_two_layout_models", "pdfs")
    layout = load(documents, page_images=pdfs)
    parquet.write(layout, tmp_path / "heron.parquet", image_bytes=True)
    back = load(tmp_path / "heron.parquet")
    assert back.page_ids() == layout.page_ids() and back.box_count() == layout.box_count()
    for page in back.pages:
        with Image.open(io.BytesIO(read_image_bytes(page.image))) as image:
            assert image.format == "PNG" and image.size == (math.ceil(page.width * 2), math.ceil(page.height * 2))


@pytest.mark.parametrize(
    "taxonomy, problem",
    [
        (b"[" * 100_000 + b"]" * 100_000, "its schema metadata 'tore.taxonomy' is nested more than 64 levels deep (line 1, column 65); "
                                          "no layout format nests so deep"),
        (b'["Text", 3]', "its schema metadata 'tore.taxonomy' must be a JSON list of class names: expected str, got int (at [1])"),
        (b'{"Text": 1}', "its schema metadata 'tore.taxonomy' must be a JSON list of class names: expected array, got object"),
        (b'["Text",', "its schema metadata 'tore.taxonomy' is not valid JSON: Input data was truncated"),
        (b'["Text", "Text"]', "'taxonomy' lists a class twice: 'Text'"),
    ],
)
def test_bad_taxonomy_metadata_names_the_file_and_the_key(tmp_path, taxonomy, problem):
    path = write_table(tmp_path / "bad.parquet", PAGES, metadata={"tore.taxonomy": taxonomy})
    error = error_of(path)
    assert (error.file, error.problem) == (str(path), problem)


def test_data_pyarrow_will_not_convert_is_the_files_error(tmp_path, monkeypatch):
    """Beyond what the checks above name: chunks whose offsets pass 2^31 when combined (a 2 GiB
    column, too large to write here), any Arrow refusal while the pages are converted."""
    def overflow(*args):
        raise pa.ArrowInvalid("offset overflow while concatenating arrays")

    monkeypatch.setattr(parquet, "_boxes", overflow)
    path = write_table(tmp_path / "big.parquet", PAGES)
    assert error_of(path).paragraph() == f"file {path}: cannot be read as Parquet (offset overflow while concatenating arrays)"


@pytest.mark.parametrize("bad, kind", [(math.nan, "NaN"), (math.inf, "infinite"), (-math.inf, "infinite")])
def test_a_nan_or_infinite_score_is_refused_at_its_box(tmp_path, bad, kind):
    """Every third box scored NaN (issue 42, C4): the first such box, the third of the file, is page
    p2's box 0; read as no score it would rank above every real score. A null score is no score."""
    boxes = [[{"label": "T", "bbox": [0, 0, 1, 1], "score": score} for score in scores] for scores in ([0.1, None], [bad, 0.4], [0.5, bad])]
    path = write_table(tmp_path / "scored.parquet", PAGES | {"boxes": boxes})
    error = error_of(path)
    assert (error.file, error.page, error.box) == (str(path), "p2", 0)
    assert error.problem == f"score is {kind}, and a score must be a finite number; a box without a score has none (or null) (row 1)"
    unscored = load(write_table(tmp_path / "null.parquet", PAGES | {"boxes": [boxes[0], [], []]}), format="parquet")
    assert unscored.pages[0].scores[0] == 0.1 and math.isnan(unscored.pages[0].scores[1])


def repeated_columns(path, names: list[str], arrays: list) -> Path:
    pq.write_table(pa.Table.from_arrays(arrays, names=names), path)
    return path


def test_a_repeated_column_name_is_the_files_error(tmp_path):
    """Arrow writes two columns of one name; a column found by name then fails (issue 42, C8: was
    "internal error (KeyError ...)"). A repeated field of the boxes' struct is the same error."""
    ids, sizes = pa.array(["p1"]), pa.array([10.0])
    boxes = pa.array([[{"label": "T", "bbox": [0.0, 0.0, 1.0, 1.0]}]], pa.list_(pa.struct([("label", pa.string()), ("bbox", pa.list_(pa.float64()))])))
    top = repeated_columns(tmp_path / "top.parquet", ["id", "width", "height", "boxes", "id"], [ids, sizes, sizes, boxes, ids])
    struct = pa.StructArray.from_arrays([pa.array(["T"]), pa.array([[0.0, 0.0, 1.0, 1.0]]), pa.array(["U"])], names=["label", "bbox", "label"])
    nested = repeated_columns(tmp_path / "nested.parquet", ["id", "width", "height", "boxes"],
                              [ids, sizes, sizes, pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), struct)])
    for path, name in ((top, "id"), (nested, "boxes.label")):
        for read in (lambda p: load(p, format="parquet"), load, detect_format):
            with pytest.raises(InputError) as caught:
                read(path)
            assert caught.value.file == str(path)
            assert caught.value.problem == f"has two columns named '{name}'; a column is found by its name, so each needs its own"
