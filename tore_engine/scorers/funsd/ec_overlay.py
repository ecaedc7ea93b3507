"""What the app draws for one EC-FUNSD form: gold and predicted entities on the page, with links.

EC-FUNSD entities are spans of the gold words, so an entity's box is the union of its words'
boxes. The overlay has the same keys as the FUNSD one (`end_to_end.overlay`), so one figure draws
both: an entity is *matched* when the other side has an entity over the same words, and its class
is right when the labels agree too (that pair is an `entity_exact_match` hit). Links are judged as
`el_e2e_directed`: both ends exact matches and the mapped directed pair a gold link.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.errors import InputError
from tore_engine.io.files import is_regular_file
from tore_engine.io.paths import confine
from tore_engine.scorers.funsd.documents import Box, checked_box, pair_folders
from tore_engine.scorers.funsd.ec_documents import EcDocument, EcEntities, EcEntity


def word_boxes(gold: EcDocument) -> dict[int, Box]:
    """Word id -> box; drawing needs every word's box, which scoring does not."""
    boxes = {}
    for word_id, box in gold.word_boxes.items():
        if box is None:
            raise InputError(f"word {word_id} has no 'box'; the overlay draws entities from their words' boxes", file=gold.source)
        boxes[word_id] = checked_box(box, ("word", word_id, "box"), gold.source)
    return boxes


def ec_overlay(gold: EcDocument, prediction: EcEntities) -> dict:
    """Entities (box = union of their words' boxes) with their match, and links with their outcome."""
    gold.word_positions(prediction)  # the prediction's spans must be valid, as in scoring
    boxes = word_boxes(gold)
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


# EC-FUNSD ships no page images: its forms are FUNSD's, under FUNSD's names. These folders of the
# FUNSD dataset, beside the EC-FUNSD one (`<root>/ec_funsd/jsons`, `<root>/funsd/...`), hold them.
FUNSD_IMAGE_FOLDERS = (Path("funsd") / "testing_data" / "images", Path("funsd") / "training_data" / "images")


def funsd_image_folders(reference_dir: Path) -> tuple[Path, ...]:
    """The FUNSD image folders beside the EC-FUNSD dataset whose JSON folder is `reference_dir`."""
    return tuple(Path(reference_dir).parent.parent / folder for folder in FUNSD_IMAGE_FOLDERS)


def find_ec_page_image(annotation: Path, gold: EcDocument, extra_folders: tuple[Path, ...] = ()) -> Path | None:
    """The form's image: `img.fname` relative to the JSON's folder or its parent (EC-FUNSD's
    `jsons/` beside `images/`), else `<stem>.png` in `extra_folders` (FUNSD's images are the same).
    A name that would leave its folder is no image (a name inside a file is untrusted)."""
    named = [_inside(gold.image_name, folder) for folder in (annotation.parent, annotation.parent.parent)] if gold.image_name else []
    candidates = [path for path in named if path is not None] + [folder / f"{annotation.stem}.png" for folder in extra_folders]
    return next((path for path in candidates if is_regular_file(path)), None)


def _inside(name: str, folder: Path) -> Path | None:
    try:
        return confine(name, folder, what="page image")
    except InputError:
        return None


def ec_folder_overlays(
    reference_dir: Path, prediction_dir: Path, image_folders: tuple[Path, ...] | None = None
) -> tuple[dict[str, dict], dict[str, str | None]]:
    """Every form's overlay and page image path, paired as `score_ec_funsd` pairs them; images are
    looked for in `image_folders` too (None: FUNSD's beside the dataset, `funsd_image_folders`)."""
    if image_folders is None:
        image_folders = funsd_image_folders(reference_dir)
    overlays, images = {}, {}
    for stem, reference_path, prediction_path in pair_folders(Path(reference_dir), Path(prediction_dir)).pairs:
        gold = EcDocument.load(reference_path)
        prediction = EcEntities.load(prediction_path) if prediction_path else EcEntities.empty()
        overlays[stem] = ec_overlay(gold, prediction)
        image = find_ec_page_image(reference_path, gold, image_folders)
        images[stem] = str(image) if image else None
    return overlays, images
