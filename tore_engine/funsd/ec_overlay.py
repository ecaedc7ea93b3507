"""What the app draws for one EC-FUNSD form: gold and predicted entities on the page, with links.

EC-FUNSD entities are spans of the gold words, so an entity's box is the union of its words'
boxes. The overlay has the same keys as the FUNSD one (`end_to_end.overlay`), so one figure draws
both: an entity is *matched* when the other side has an entity over the same words, and its class
is right when the labels agree too (that pair is an `entity_exact_match` hit). Links are judged as
`el_e2e_directed`: both ends exact matches and the mapped directed pair a gold link.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.funsd.documents import pair_folders, parse_box, read_json
from tore_engine.funsd.ec_documents import EcDocument, EcEntities, EcEntity
from tore_engine.errors import InputError


def word_boxes(gold: dict, file: str = "<memory>") -> dict[int, tuple[float, float, float, float]]:
    """Word id -> box, from the gold `document` segments."""
    boxes = {}
    for index, segment in enumerate(gold["document"]):
        for word in segment["words"]:
            where = f"segment {index}, word {word['id']}"
            boxes[word["id"]] = parse_box(word.get("box"), lambda problem: InputError(f"{where}: {problem}", file=file))
    return boxes


def ec_overlay(gold_json: dict, gold: EcDocument, prediction: EcEntities, *, file: str = "<memory>") -> dict:
    """Entities (box = union of their words' boxes) with their match, and links with their outcome."""
    gold.word_positions(prediction)  # the prediction's spans must be valid, as in scoring
    boxes = word_boxes(gold_json, file)
    gold_by_span = {entity.word_idx: entity for entity in gold.labels.entities}
    pred_by_span = {entity.word_idx: entity for entity in prediction.entities}
    exact = {  # predicted id -> gold id, same words and label
        entity.entity_id: gold_by_span[entity.word_idx].entity_id
        for entity in prediction.entities
        if entity.word_idx in gold_by_span and gold_by_span[entity.word_idx].label == entity.label
    }
    found = {(exact[head], exact[tail]) for head, tail in prediction.links
             if head in exact and tail in exact and (exact[head], exact[tail]) in gold.labels.links}

    def box(entity: EcEntity) -> list[float]:
        word_box = [boxes[w] for w in entity.word_idx]
        return [min(b[0] for b in word_box), min(b[1] for b in word_box), max(b[2] for b in word_box), max(b[3] for b in word_box)]

    return {
        "gt_entities": [
            {"id": e.entity_id, "label": e.label, "box": box(e),
             "matched_pred_id": pred_by_span[e.word_idx].entity_id if e.word_idx in pred_by_span else None, "iou": None}
            for e in gold.labels.entities
        ],
        "pred_entities": [
            {"id": e.entity_id, "label": e.label, "box": box(e),
             "matched_gt_id": gold_by_span[e.word_idx].entity_id if e.word_idx in gold_by_span else None,
             "label_correct": e.entity_id in exact if e.word_idx in gold_by_span else None}
            for e in prediction.entities
        ],
        "gt_links": [{"from": a, "to": b, "found": (a, b) in found} for a, b in sorted(gold.labels.links)],
        "pred_links": [
            {"from": a, "to": b, "correct": a in exact and b in exact and (exact[a], exact[b]) in found}
            for a, b in sorted(prediction.links)
        ],
        "dropped": None,  # EC-FUNSD keeps every word (empty ones are "<unk>")
    }


def find_ec_page_image(annotation: Path, gold_json: dict, extra_folders: tuple[Path, ...] = ()) -> Path | None:
    """The form's image: `img.fname` relative to the JSON's folder or its parent (EC-FUNSD's
    `jsons/` beside `images/`), else `<stem>.png` in `extra_folders` (FUNSD's images are the same)."""
    fname = gold_json.get("img", {}).get("fname") if isinstance(gold_json.get("img"), dict) else None
    candidates = [folder / fname for folder in (annotation.parent, annotation.parent.parent)] if isinstance(fname, str) else []
    candidates += [folder / f"{annotation.stem}.png" for folder in extra_folders]
    return next((path for path in candidates if path.is_file()), None)


def ec_folder_overlays(
    reference_dir: Path, prediction_dir: Path, image_folders: tuple[Path, ...] = ()
) -> tuple[dict[str, dict], dict[str, str | None]]:
    """Every form's overlay and page image path, paired as `score_ec_funsd_folders` pairs them."""
    overlays, images = {}, {}
    for stem, reference_path, prediction_path in pair_folders(Path(reference_dir), Path(prediction_dir)).pairs:
        gold_json = read_json(reference_path)
        gold = EcDocument.from_json(gold_json, doc_id=stem, file=str(reference_path))
        prediction = (EcEntities.from_json(read_json(prediction_path), file=str(prediction_path))
                      if prediction_path else EcEntities.empty())
        overlays[stem] = ec_overlay(gold_json, gold, prediction, file=str(reference_path))
        image = find_ec_page_image(reference_path, gold_json, image_folders)
        images[stem] = str(image) if image else None
    return overlays, images
