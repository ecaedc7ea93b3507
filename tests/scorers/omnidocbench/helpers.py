"""What the OmniDocBench tests share: the demo sample in ../shared/data/omnidocbench, its official
results, and the official layout prediction rewritten as a layout JSON."""

from __future__ import annotations

import json

from tests.helpers import load_shared_json

DEMO = ("data", "omnidocbench")
OFFICIAL = (*DEMO, "reference_results", "v1.6_official_rerun_noCDM")
TOLERANCE = 1e-9


def official(name: str):
    return load_shared_json(*OFFICIAL, f"end2end_quick_match_{name}.json")


def _as_layout_json(prediction_file, reference, strip_extension=True, scores=True, zoom=1.0) -> dict:
    """The official prediction rewritten as a layout JSON, its pages `zoom` times the image size."""
    data = json.loads(prediction_file.read_text())
    frames = {page.stem: (page.width, page.height) for page in reference.pages}
    pages: dict[str, list] = {}
    for item in data["results"]:
        box = {"label": data["categories"][str(item["category_id"])], "bbox": [v * zoom for v in item["bbox"]]}
        if scores:
            box["score"] = item["score"]
        pages.setdefault(item["image_name"], []).append(box)
    return {"name": "doclayout", "pages": [
        {"id": stem if strip_extension else stem + ".jpg", "width": frames[stem][0] * zoom,
         "height": frames[stem][1] * zoom, "boxes": boxes} for stem, boxes in pages.items()]}


def assert_close(ours, theirs, path: str = "") -> None:
    """Nested dicts and lists equal, numbers within TOLERANCE (the official "NaN" as None)."""
    theirs = None if theirs == "NaN" else theirs
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), (path, sorted(set(ours) ^ set(theirs)) if isinstance(ours, dict) else ours)
        for key in theirs:
            assert_close(ours[key], theirs[key], f"{path}/{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), path
        for index, (mine, other) in enumerate(zip(ours, theirs)):
            assert_close(mine, other, f"{path}[{index}]")
    elif isinstance(theirs, float) and not isinstance(ours, str):
        assert ours is not None and abs(ours - theirs) <= TOLERANCE, (path, ours, theirs)
    else:
        assert ours == theirs, (path, ours, theirs)


def one_page(tmp_path, blocks: list[dict], name: str = "doc.pdf_1.jpg", attributes: dict | None = None):
    """A one-page reference of `blocks` (category_type, order, text/latex/html), and its page."""
    from tore_engine.scorers.omnidocbench.reference import load_reference

    dets = [{"poly": [0, 0, 10, 0, 10, 10, 0, 10], "anno_id": index, **block} for index, block in enumerate(blocks)]
    page = {"page_info": {"image_path": name, "width": 100, "height": 100, "page_attribute": attributes or {}},
            "layout_dets": dets, "extra": {"relation": []}}
    path = tmp_path / "reference.json"
    path.write_text(json.dumps([page]), encoding="utf-8")
    reference = load_reference(path)
    return reference, reference.pages[0]


def score_one(tmp_path, blocks: list[dict], markdown: str) -> dict:
    """The `end_to_end` scores of one page predicted by `markdown`."""
    from tore_engine.scorers.omnidocbench.end_to_end import score_end_to_end
    from tore_engine.scorers.omnidocbench.markdown import load_markdown_predictions

    reference, page = one_page(tmp_path, blocks)
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / f"{page.id[:-4]}.md").write_text(markdown, encoding="utf-8")
    return score_end_to_end(reference, load_markdown_predictions(folder, reference))
