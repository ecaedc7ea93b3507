"""FUNSD annotation files (`{"form": [entity, ...]}`) read into their *valid view* (funsd.md 2.2).

Every panel works on the valid view, never on the raw JSON: a word counts only if its text is not
blank, an entity only if it keeps at least one such word, and links only join valid entities. The
view is built once here so that no scorer can forget the rule; what was dropped is counted, because
the UI must say so.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from tore_engine.errors import InputError

FUNSD_CLASSES = ("header", "question", "answer", "other")

Box = tuple[float, float, float, float]


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
        if not isinstance(data, dict) or not isinstance(data.get("form"), list):
            raise InputError('expected a JSON object with a "form" list of entities', file=file)
        raw = [_parse_entity(item, index, file) for index, item in enumerate(data["form"])]
        ids = [parsed.entity.id for parsed in raw]
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        if duplicates:
            raise InputError(f"duplicate entity ids {duplicates}", file=file)
        entities = [parsed.entity for parsed in raw if parsed.entity.words]
        valid_ids = {entity.id for entity in entities}
        links = {
            (a, b)
            for parsed in raw
            if parsed.entity.id in valid_ids
            for a, b in parsed.links
            if a != b and a in valid_ids and b in valid_ids
        }
        return cls(
            id=doc_id,
            entities=entities,
            links=links,
            dropped_words=sum(parsed.blank_words for parsed in raw),
            dropped_entities=len(raw) - len(entities),
            source=file,
        )

    @classmethod
    def load(cls, path: Path) -> "FunsdDocument":
        return cls.from_json(read_json(path), doc_id=path.stem, file=str(path))

    @classmethod
    def empty(cls, doc_id: str) -> "FunsdDocument":
        """The prediction a reference file without a prediction file is scored against."""
        return cls(id=doc_id, entities=[], links=set())

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


def read_json(path: Path) -> object:
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", file=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not valid JSON: {error}", file=str(path)) from None


class _ParsedEntity(NamedTuple):
    entity: FunsdEntity  # with its non-blank words only
    links: list[tuple[int, int]]  # its raw `linking` pairs
    blank_words: int


def _parse_entity(item: object, index: int, file: str) -> _ParsedEntity:

    def fail(problem: str) -> InputError:
        return InputError(f"entity {index}: {problem}", file=file, box=index)

    if not isinstance(item, dict):
        raise fail("is not a JSON object")
    entity_id = item.get("id")
    if not _is_int(entity_id):
        raise fail('"id" must be an integer')
    label = item.get("label")
    if label not in FUNSD_CLASSES:
        raise fail(f'"label" is {label!r}, expected one of {", ".join(FUNSD_CLASSES)}')
    box = parse_box(item.get("box"), fail)
    words = item.get("words")
    if not isinstance(words, list):
        raise fail('"words" must be a list')
    parsed_words, blank_words = [], 0
    for word_index, word in enumerate(words):
        if not isinstance(word, dict) or not isinstance(word.get("text"), str):
            raise fail(f'word {word_index} must be an object with a string "text"')
        word_box = parse_box(word.get("box"), lambda problem: fail(f"word {word_index}: {problem}"))
        if word["text"].strip():
            parsed_words.append(FunsdWord(word_box, word["text"]))
        else:
            blank_words += 1
    linking = item.get("linking", [])
    if not isinstance(linking, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(_is_int(end) for end in pair) for pair in linking
    ):
        raise fail('"linking" must be a list of [from_id, to_id] integer pairs')
    entity = FunsdEntity(entity_id, label, box, tuple(parsed_words))
    return _ParsedEntity(entity, [tuple(pair) for pair in linking], blank_words)


def parse_box(value: object, fail) -> Box:
    """`[x1, y1, x2, y2]` of finite numbers with x1 <= x2 and y1 <= y2."""
    if (
        not isinstance(value, list)
        or len(value) != 4
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    ):
        raise fail('"box" must be [x1, y1, x2, y2] of four finite numbers')
    x1, y1, x2, y2 = (float(v) for v in value)
    if x2 < x1 or y2 < y1:
        raise fail(f'"box" {value} has x2 < x1 or y2 < y1')
    return (x1, y1, x2, y2)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class FolderPairing:
    """Reference files paired with prediction files by file name (formats.md section 5)."""

    pairs: list[tuple[str, Path, Path | None]]  # (stem, reference, prediction or None), sorted
    unused_predictions: list[Path] = field(default_factory=list)

    @property
    def missing_predictions(self) -> list[Path]:
        return [reference for _, reference, prediction in self.pairs if prediction is None]


def pair_folders(reference_dir: Path, prediction_dir: Path) -> FolderPairing:
    """Pair `*.json` files by name; a reference without prediction is kept with `None`."""
    references = _json_files(reference_dir, "reference")
    predictions = _json_files(prediction_dir, "prediction")
    if not references:
        raise InputError("the reference folder holds no .json annotation file", file=str(reference_dir))
    pairs = [(name[:-5], path, predictions.get(name)) for name, path in sorted(references.items())]
    unused = [path for name, path in sorted(predictions.items()) if name not in references]
    return FolderPairing(pairs, unused)


def _json_files(folder: Path, side: str) -> dict[str, Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"the {side} folder does not exist or is not a folder", file=str(folder))
    return {path.name: path for path in folder.glob("*.json") if path.is_file()}


def find_page_image(annotation: Path) -> Path | None:
    """The form's PNG: beside the JSON, or in the sibling `images/` folder of FUNSD's layout."""
    for folder in (annotation.parent, annotation.parent.parent / "images"):
        candidate = folder / f"{annotation.stem}.png"
        if candidate.is_file():
            return candidate
    return None
