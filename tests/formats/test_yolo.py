"""YOLO label folders: boxes and YOLO-seg polygons in pixels, class names, image sizes, detection,
and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tore_engine.api import load
from tore_engine.core.errors import InputError
from tore_engine.formats.detect import detect_format
from tore_engine.formats.yolo import read


def dataset(root: Path, labels: dict[str, str], sizes: dict[str, tuple[int, int]], names: str = "names: [text, title, table]\n") -> Path:
    """Ultralytics' layout: data.yaml, images/val/*.png, labels/val/*.txt."""
    (root / "images" / "val").mkdir(parents=True)
    (root / "labels" / "val").mkdir(parents=True)
    (root / "data.yaml").write_text(f"path: .\nval: images/val\n{names}")
    for stem, size in sizes.items():
        Image.new("L", size).save(root / "images" / "val" / f"{stem}.png")
    for stem, text in labels.items():
        (root / "labels" / "val" / f"{stem}.txt").write_text(text)
    return root / "labels" / "val"


def test_boxes_polygons_and_scores_in_pixels(tmp_path):
    """Normalised values chosen exact in binary, so the pixels are known by hand."""
    folder = dataset(tmp_path, {
        "a": "0 0.25 0.5 0.5 0.25\n2 0.5 0.5 0.25 0.25 0.75\n",
        "b": "1 0.125 0.25 0.875 0.25 0.5 0.75 0.9\n1 0 0 0.5 0 0.5 0.5 0 0.5\n",
    }, {"a": (200, 400), "b": (800, 100), "c": (10, 10)})
    layout = read(folder)
    assert layout.taxonomy == ["text", "title", "table"]
    a, b, c = layout.pages
    assert (a.id, a.width, a.height, a.labels) == ("a", 200, 400, ["text", "table"])
    assert a.bboxes.tolist() == [[0, 150, 100, 250], [75, 150, 125, 250]]
    assert a.scores.tolist()[1] == 0.75 and a.polygons is None
    assert b.labels == ["title", "title"]
    assert b.polygons.outline(0).tolist() == [[100, 25], [700, 25], [400, 75]]
    assert b.polygons.outline(1).tolist() == [[0, 0], [400, 0], [400, 50], [0, 50]]
    assert b.bboxes.tolist() == [[100, 25, 700, 75], [0, 0, 400, 50]]
    assert b.scores.tolist()[0] == 0.9  # an odd count of numbers ends with the confidence
    assert c.box_count == 0  # an image without a label file: a page without regions
    assert detect_format(folder) == "yolo"
    with pytest.warns(UserWarning, match="1 input warning"):  # the note that some boxes are polygons
        assert load(folder).page_ids() == ["a", "b", "c"]


def test_names_files_and_numbered_names(tmp_path):
    folder = dataset(tmp_path, {"a": "1 0.5 0.5 1 1\n"}, {"a": (4, 4)}, names="names:\n  0: text\n  1: title\n")
    assert read(folder).pages[0].labels == ["title"]
    (tmp_path / "data.yaml").unlink()
    (folder / "classes.txt").write_text("x\ny\n")
    assert read(folder).pages[0].labels == ["y"]


@pytest.mark.parametrize("text, message", [
    ("7 0.5 0.5 1 1\n", "class 7 is not one of the 3 classes"),
    ("0 0.5 0.5 1\n", "3 numbers after the class"),
    ("0 0.5 abc 1 1\n", "expected 'class cx cy w h \\[conf\\]'"),
])
def test_bad_rows_name_the_file_page_and_line(tmp_path, text, message):
    folder = dataset(tmp_path, {"a": text}, {"a": (4, 4)})
    with pytest.raises(InputError, match=message) as error:
        read(folder)
    assert "a.txt" in str(error.value) and "page 'a'" in str(error.value) and "line 1" in str(error.value)


def test_missing_names_or_images_and_yaml_aliases_are_clear_errors(tmp_path):
    folder = dataset(tmp_path / "one", {"a": "0 0.5 0.5 1 1\n"}, {}, names="")
    with pytest.raises(InputError, match="no class names"):
        read(folder)
    folder = dataset(tmp_path / "two", {"a": "0 0.5 0.5 1 1\n"}, {})
    with pytest.raises(InputError, match="no image of this page"):
        read(folder)
    folder = dataset(tmp_path / "three", {"a": "0 0.5 0.5 1 1\n"}, {"a": (4, 4)}, names="x: &a [t]\nnames: *a\n")
    with pytest.raises(InputError, match="aliases"):
        read(folder)
