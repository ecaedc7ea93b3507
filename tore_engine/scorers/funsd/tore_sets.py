"""FUNSD folders as TORE layout sets (`tore evaluate --format funsd`): each valid entity becomes a
box labelled with its class, so the TORE matrices show which entity types a model confuses.
"""

from __future__ import annotations

from pathlib import Path

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, Page, PageImage
from tore_engine.io.files import image_size
from tore_engine.scorers.funsd.documents import (
    FUNSD_CLASSES,
    FunsdDocument,
    find_page_image,
    pair_folders,
)


def funsd_layout_sets(reference_dir: Path, prediction_dir: Path) -> tuple[LayoutSet, LayoutSet]:
    """Reference and prediction layout sets, paired by file stem (the page id).

    The page frame is the reference PNG's size; a prediction page shares its reference's frame and
    image. A reference without prediction file has no prediction page (`tore evaluate` reports the
    missing page); a prediction without reference file is left out with a warning.
    """
    reference_dir, prediction_dir = Path(reference_dir), Path(prediction_dir)
    pairing = pair_folders(reference_dir, prediction_dir)
    reference_pages, prediction_pages = [], []
    for stem, reference_path, prediction_path in pairing.pairs:
        image = find_page_image(reference_path)
        if image is None:
            raise InputError(
                f"no PNG image {stem}.png beside the annotation or in ../images/; the page size is read from it",
                file=str(reference_path), page=stem,
            )
        width, height = image_size(image)
        reference_pages.append(entity_page(FunsdDocument.load(reference_path), width, height, image))
        if prediction_path is not None:
            prediction_pages.append(entity_page(FunsdDocument.load(prediction_path), width, height, image))
    warnings = [
        InputWarning(page=path.stem, box=None, side="prediction",
                     message="prediction file without a reference file: not scored")
        for path in pairing.unused_predictions
    ]
    return (
        LayoutSet(_set_name(reference_dir, "reference"), reference_pages, list(FUNSD_CLASSES), str(reference_dir)),
        LayoutSet(_set_name(prediction_dir, "prediction"), prediction_pages, list(FUNSD_CLASSES), str(prediction_dir),
                  warnings),
    )


def entity_page(document: FunsdDocument, width: float, height: float, image: Path) -> Page:
    """One page whose boxes are the document's valid entities (entity `box` as given)."""
    return Page(
        id=document.id,
        width=width,
        height=height,
        labels=[entity.label for entity in document.entities],
        bboxes=document.entity_boxes(),
        image=PageImage(image),
    )


def _set_name(folder: Path, fallback: str) -> str:
    return folder.resolve().name or fallback
