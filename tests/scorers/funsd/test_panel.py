"""What the app's FUNSD panel gets from the engine: a simulated prediction in a folder of its own,
EC-FUNSD's page images from FUNSD's dataset beside it, and one report with every form's overlay."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from tests.helpers import shared_path
from tore_engine.scorers.funsd.ec_overlay import ec_folder_overlays, funsd_image_folders
from tore_engine.scorers.funsd.panel import scored_for_panel
from tore_engine.scorers.funsd.score import score_ec_funsd, score_funsd
from tore_engine.scorers.funsd.simulated import (
    simulated_folder,
    write_simulated_predictions,
)


def _form(doc: str) -> dict:
    """A gold form of two linked entities (question -> answer), far apart."""
    def entity(k: int, label: str, x: int) -> dict:
        box = [x, 100, x + 120, 120]
        return {"id": k, "label": label, "box": box, "text": f"{doc} {k}", "words": [{"box": box, "text": f"{doc}{k}"}],
                "linking": [[0, 1]]}

    return {"form": [entity(0, "question", 100), entity(1, "answer", 400)]}


def _gold_folder(folder: Path, docs: tuple[str, ...] = ("a", "b")) -> Path:
    folder.mkdir(parents=True)
    for doc in docs:
        (folder / f"{doc}.json").write_text(json.dumps(_form(doc)), encoding="utf-8")
    return folder


def test_a_simulated_folder_is_named_by_what_it_is_made_from(tmp_path):
    reference = _gold_folder(tmp_path / "gold")
    first = simulated_folder("funsd", reference, seed=1, version=("v1",), root=tmp_path / "sim")
    assert first.folder.parent == tmp_path / "sim" and sorted(p.name for p in first.folder.iterdir()) == ["a.json", "b.json"]
    again = simulated_folder("funsd", reference, seed=1, version=("v1",), root=tmp_path / "sim")
    assert again == first
    logs = write_simulated_predictions("funsd", reference, tmp_path / "direct", seed=1)
    assert first.totals == dict(sum(logs.values(), Counter()))
    assert first.to_json() == {"folder": str(first.folder), "totals": first.totals}
    others = {simulated_folder("funsd", reference, seed=2, version=("v1",), root=tmp_path / "sim").folder,
              simulated_folder("funsd", reference, seed=1, version=("v2",), root=tmp_path / "sim").folder}
    assert first.folder not in others and len(others) == 2


def test_ec_funsd_images_are_looked_for_in_funsd_beside_it(tmp_path):
    assert funsd_image_folders(tmp_path / "ec_funsd" / "jsons") == (
        tmp_path / "funsd" / "testing_data" / "images", tmp_path / "funsd" / "training_data" / "images")


def test_scored_for_panel_scores_the_given_prediction_or_a_simulated_one(tmp_path, monkeypatch):
    reference = _gold_folder(tmp_path / "gold")
    given = scored_for_panel("funsd", reference, reference)
    assert given == {"report": score_funsd(reference, reference).panel(), "simulation": None}
    for document in given["report"]["documents"]:  # each form's overlay: its two entities matched to themselves, its link found
        form = _form(document["doc"])["form"]
        assert [(e["id"], e["label"], e["box"]) for e in document["overlay"]["gt_entities"]] == [(e["id"], e["label"], e["box"]) for e in form]
        assert [e["matched_pred_id"] for e in document["overlay"]["gt_entities"]] == [0, 1]
        assert [(link["from"], link["to"], link["found"]) for link in document["overlay"]["gt_links"]] == [(0, 1, True)]
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    simulated = scored_for_panel("funsd", reference, None, seed=3, version="v")
    assert list(temporary.iterdir()) == []  # the simulated files are gone, and no folder is named (issue 24)
    again = simulated_folder("funsd", reference, seed=3, version="v", root=tmp_path / "sim")
    assert simulated == {"report": score_funsd(reference, again.folder).panel(), "simulation": {"totals": again.totals}}


def test_ec_funsd_report_has_every_forms_overlay_and_funsd_image(tmp_path):
    jsons = shared_path("data", "funsd", "ec_funsd", "jsons")
    scored = scored_for_panel("ec-funsd", jsons, jsons)
    overlays, images = ec_folder_overlays(jsons, jsons)
    documents = scored["report"]["documents"]
    assert [d["doc"] for d in documents] == [d["doc"] for d in score_ec_funsd(jsons, jsons).panel()["documents"]]
    assert {d["doc"]: d["overlay"] for d in documents} == overlays and {d["doc"]: d["image"] for d in documents} == images
    funsd_images = shared_path("data", "funsd", "funsd", "testing_data", "images")
    assert all(Path(d["image"]) == funsd_images / f"{d['doc']}.png" for d in documents)
    assert scored["report"]["headline"] == score_ec_funsd(jsons, jsons).panel()["headline"]
