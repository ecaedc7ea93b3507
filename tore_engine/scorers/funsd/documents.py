"""FUNSD annotation files (`{"form": [entity, ...]}`) read into their *valid view* (docs/benchmarks.md#valid-words-and-entities).

Every panel works on the valid view, never on the raw JSON: a word counts only if its text is not
blank, an entity only if it keeps at least one such word, and links only join valid entities. The
view is built once here so that no scorer can forget the rule; what was dropped is counted, because
the UI must say so.

The format is fixed (docs/benchmarks.md#funsd-files, and no official tool reads it more leniently), so files
are decoded against a strict schema: an unknown or misspelt key, or a value of the wrong type, is
an error naming the file and the place.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec
import numpy as np

from tore_engine.core.errors import InputError
from tore_engine.io.files import is_regular_file
from tore_engine.io.json import SchemaError, read_json, schema_error
from tore_engine.io.paths import inside

FUNSD_CLASSES = ("header", "question", "answer", "other")

Box = tuple[float, float, float, float]
Location = tuple[str | int, ...]


class WordJson(msgspec.Struct, forbid_unknown_fields=True):
    box: Box
    text: str


class EntityJson(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    label: Literal["header", "question", "answer", "other"]
    box: Box
    words: list[WordJson]
    text: str | None = None  # never used (docs/benchmarks.md#valid-words-and-entities)
    linking: list[tuple[int, int]] = []


class FormJson(msgspec.Struct, forbid_unknown_fields=True):
    form: list[EntityJson]


@dataclass(frozen=True)
class FunsdWord:
    box: Box
    text: str


@dataclass(frozen=True)
class FunsdEntity:
    """A valid entity: its `box` as given (never recomputed) and only its non-blank words."""

    id: int
    label: str
    box: Box
    words: tuple[FunsdWord, ...]


@dataclass
class FunsdDocument:
    """The valid view of one FUNSD form, in JSON order."""

    id: str
    entities: list[FunsdEntity]
    links: set[tuple[int, int]]  # directed (from, to), both ends valid, no self-links
    dropped_words: int = 0  # blank words removed from valid entities and from dropped entities
    dropped_entities: int = 0  # entities left without any non-blank word
    source: str = "<memory>"

    @classmethod
    def from_json(cls, data: object, *, doc_id: str, file: str = "<memory>") -> "FunsdDocument":
        """Validate a parsed `{"form": [...]}` object and keep its valid view."""
        return cls.from_form(convert(data, FormJson, file), doc_id=doc_id, file=file)

    @classmethod
    def load(cls, path: Path) -> "FunsdDocument":
        return cls.from_form(read_json(path, FormJson), doc_id=path.stem, file=str(path))

    @classmethod
    def from_form(cls, form: FormJson, *, doc_id: str, file: str) -> "FunsdDocument":
        duplicates = sorted(i for i, n in Counter(entity.id for entity in form.form).items() if n > 1)
        if duplicates:
            raise InputError(f"duplicate entity ids {duplicates}", file=file)
        entities = [_valid_entity(entity, index, file) for index, entity in enumerate(form.form)]
        kept = [entity for entity in entities if entity.words]
        valid_ids = {entity.id for entity in kept}
        links = {
            (a, b)
            for entity in form.form
            if entity.id in valid_ids
            for a, b in entity.linking
            if a != b and a in valid_ids and b in valid_ids
        }
        return cls(
            id=doc_id,
            entities=kept,
            links=links,
            dropped_words=sum(len(raw.words) - len(entity.words) for raw, entity in zip(form.form, entities)),
            dropped_entities=len(entities) - len(kept),
            source=file,
        )

    @classmethod
    def empty(cls, doc_id: str) -> "FunsdDocument":
        """The prediction a reference file without a prediction file is scored against."""
        return cls(id=doc_id, entities=[], links=set())

    @functools.cached_property
    def undirected_links(self) -> set[frozenset[int]]:
        """`links` without orientation, built once: every linking panel reads it, per link."""
        return undirected(self.links)

    @property
    def words(self) -> list[FunsdWord]:
        """Valid words, entity by entity."""
        return [word for entity in self.entities for word in entity.words]

    def word_entity_index(self) -> list[int]:
        """For each valid word, the index of its entity in `entities`."""
        return [index for index, entity in enumerate(self.entities) for _ in entity.words]

    def word_boxes(self) -> np.ndarray:
        return np.array([word.box for word in self.words], dtype=np.float64).reshape(-1, 4)

    def entity_boxes(self) -> np.ndarray:
        return np.array([entity.box for entity in self.entities], dtype=np.float64).reshape(-1, 4)


def undirected(links: Iterable[tuple[int, int]]) -> set[frozenset[int]]:
    """Links as 2-element sets: a pair linked in both directions counts once (docs/benchmarks.md#entity-linking)."""
    return {frozenset(link) for link in links}


def convert(data: object, schema: Any, file: str) -> Any:
    """A parsed JSON value checked against `schema`, as `read_json` checks a file."""
    try:
        return msgspec.convert(data, schema)
    except msgspec.ValidationError as error:
        raise schema_error(error, file) from None


def _valid_entity(entity: EntityJson, index: int, file: str) -> FunsdEntity:
    """The entity with its non-blank words only (its box checked, and each word's)."""
    where: Location = ("form", index)
    box = checked_box(entity.box, (*where, "box"), file)
    words = tuple(
        FunsdWord(checked_box(word.box, (*where, "words", k, "box"), file), word.text)
        for k, word in enumerate(entity.words)
        if word.text.strip()
    )
    return FunsdEntity(entity.id, entity.label, box, words)


def checked_box(box: Box, location: Location, file: str) -> Box:
    """`[x1, y1, x2, y2]` of finite numbers with x1 <= x2 and y1 <= y2."""
    if not all(math.isfinite(value) for value in box):
        raise SchemaError(f"box {list(box)} has a coordinate that is not a finite number", location, file=file)
    x1, y1, x2, y2 = box
    if x2 < x1 or y2 < y1:
        raise SchemaError(f"box {list(box)} has x2 < x1 or y2 < y1", location, file=file)
    return box


@dataclass
class FolderPairing:
    """Reference files paired with prediction files by file name (docs/cli.md#tore-score)."""

    pairs: list[tuple[str, Path, Path | None]]  # (stem, reference, prediction or None), sorted
    unused_predictions: list[Path] = field(default_factory=list)

    @property
    def missing_predictions(self) -> list[Path]:
        return [reference for _, reference, prediction in self.pairs if prediction is None]


def pair_folders(reference_dir: Path, prediction_dir: Path) -> FolderPairing:
    """Pair `*.json` files by name; a reference without prediction is kept with `None`.

    Every `*.json` entry is an input: it is read as a file (a folder, pipe or device of that name
    is refused when read) and must lie inside its folder after symbolic links."""
    references = json_files(reference_dir, "reference")
    predictions = json_files(prediction_dir, "prediction")
    if not references:
        raise InputError("the reference folder holds no .json annotation file", file=str(reference_dir))
    pairs = [(name[:-5], path, predictions.get(name)) for name, path in sorted(references.items())]
    unused = [path for name, path in sorted(predictions.items()) if name not in references]
    return FolderPairing(pairs, unused)


def json_files(folder: Path, side: str) -> dict[str, Path]:
    """The `*.json` entries of a folder by name; each must stay inside the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"the {side} folder does not exist or is not a folder", file=str(folder))
    return {path.name: inside(path.name, folder, what=f"{side} file") for path in folder.glob("*.json")}


def find_page_image(annotation: Path) -> Path | None:
    """The form's PNG: beside the JSON, or in the sibling `images/` folder of FUNSD's layout."""
    for folder in (annotation.parent, annotation.parent.parent / "images"):
        candidate = folder / f"{annotation.stem}.png"
        if is_regular_file(candidate):
            return candidate
    return None
