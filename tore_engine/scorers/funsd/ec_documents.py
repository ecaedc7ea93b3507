"""EC-FUNSD files (Zhang et al. 2024): the gold annotation and the prediction over its words.

EC-FUNSD labels entities as spans of consecutive words of the gold `document`, so a prediction
only names word ids (`{"label_entities", "label_linkings"}`); it is validated against the gold
words when scored. Both are read with one strict schema (docs/benchmarks.md#funsd-files: unknown keys are
errors): a prediction may also be a whole EC-FUNSD file, whose `document` is then ignored, and keys
that scoring does not use (`uid`, `img`, boxes and texts, `ro_linkings`) may be absent.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from tore_engine.core.errors import InputError
from tore_engine.io.json import SchemaError, read_json
from tore_engine.scorers.funsd.documents import Box, convert

EC_CLASSES = ("header", "question", "answer")


class EcEntity(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An entity as its JSON object: hashable, equal when id, label and words are."""

    entity_id: int
    label: Literal["header", "question", "answer"]
    word_idx: Annotated[tuple[int, ...], msgspec.Meta(min_length=1)]


class EcWordJson(msgspec.Struct, forbid_unknown_fields=True):
    id: int
    box: Box | None = None
    text: str | None = None


class EcSegmentJson(msgspec.Struct, forbid_unknown_fields=True):
    words: list[EcWordJson]
    id: int | None = None
    box: Box | None = None
    text: str | None = None


class EcImageJson(msgspec.Struct, forbid_unknown_fields=True):
    fname: str
    width: int | None = None
    height: int | None = None


class EcJson(msgspec.Struct, forbid_unknown_fields=True):
    """An EC-FUNSD file: a gold annotation (with `document`) or a prediction (without)."""

    label_entities: list[EcEntity]
    label_linkings: list[tuple[int, int]] = []
    document: list[EcSegmentJson] | None = None
    uid: str | None = None
    img: EcImageJson | None = None
    ro_linkings: list[tuple[int, int]] = []


@dataclass
class EcEntities:
    """Labelled entities and their directed links: what a prediction holds, and the gold's labels."""

    entities: list[EcEntity]
    links: set[tuple[int, int]]  # (head entity id, tail entity id)
    source: str = "<memory>"

    @classmethod
    def from_json(cls, data: object, *, file: str = "<memory>") -> "EcEntities":
        return cls.from_labels(convert(data, EcJson, file), file=file)

    @classmethod
    def load(cls, path: Path) -> "EcEntities":
        return cls.from_labels(read_json(path, EcJson), file=str(path))

    @classmethod
    def from_labels(cls, labels: EcJson, *, file: str) -> "EcEntities":
        ids = [entity.entity_id for entity in labels.label_entities]
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        if duplicates:
            raise InputError(f"duplicate entity ids {duplicates}", file=file)
        unknown = sorted({end for link in labels.label_linkings for end in link} - set(ids))
        if unknown:
            raise InputError(f'"label_linkings" name entity ids {unknown} that are not in "label_entities"', file=file)
        return cls(list(labels.label_entities), set(labels.label_linkings), file)

    @classmethod
    def empty(cls) -> "EcEntities":
        """The prediction a gold file without a prediction file is scored against."""
        return cls([], set())


@dataclass
class EcDocument:
    """A gold EC-FUNSD form: its word ids in document order, and its labelled entities and links."""

    id: str
    word_ids: list[int]
    labels: EcEntities
    word_boxes: dict[int, Box | None]  # for drawing only
    image_name: str | None = None  # `img.fname`, relative to the JSON's folder or its parent
    source: str = "<memory>"

    @classmethod
    def from_json(cls, data: object, *, doc_id: str, file: str = "<memory>") -> "EcDocument":
        return cls.from_gold(convert(data, EcJson, file), doc_id=doc_id, file=file)

    @classmethod
    def load(cls, path: Path) -> "EcDocument":
        return cls.from_gold(read_json(path, EcJson), doc_id=path.stem, file=str(path))

    @classmethod
    def from_gold(cls, gold: EcJson, *, doc_id: str, file: str) -> "EcDocument":
        if gold.document is None:
            raise SchemaError("missing key 'document' (a gold EC-FUNSD file lists its words)", (), file=file)
        words = [word for segment in gold.document for word in segment.words]
        word_ids = [word.id for word in words]
        if any(b <= a for a, b in zip(word_ids, word_ids[1:])):
            raise InputError("word ids must be ascending in document order", file=file)
        document = cls(doc_id, word_ids, EcEntities.from_labels(gold, file=file), {word.id: word.box for word in words},
                       gold.img.fname if gold.img else None, file)
        document.word_positions(document.labels)  # the gold's own spans must be valid too
        return document

    def word_positions(self, labels: EcEntities) -> list[tuple[int, ...]]:
        """Each entity's word positions in document order; spans must be consecutive and disjoint."""
        position_of = {word_id: position for position, word_id in enumerate(self.word_ids)}
        taken: set[int] = set()
        spans = []
        for index, entity in enumerate(labels.entities):
            unknown = [w for w in entity.word_idx if w not in position_of]
            if unknown:
                raise InputError(f"entity {entity.entity_id}: word ids {unknown} are not in the gold document",
                                 file=labels.source, box=index)
            positions = tuple(position_of[w] for w in entity.word_idx)
            if list(positions) != list(range(positions[0], positions[0] + len(positions))):
                raise InputError(f"entity {entity.entity_id}: word_idx {list(entity.word_idx)} is not a run of "
                                 "consecutive words", file=labels.source, box=index)
            if taken & set(positions):
                raise InputError(f"entity {entity.entity_id}: shares words with another entity",
                                 file=labels.source, box=index)
            taken |= set(positions)
            spans.append(positions)
        return spans

    def tags(self, labels: EcEntities) -> list[str]:
        """IOB2 tags over the document's words, labels kept lower-case (docs/benchmarks.md#ec-funsd)."""
        tags = ["O"] * len(self.word_ids)
        for entity, positions in zip(labels.entities, self.word_positions(labels)):
            for k, position in enumerate(positions):
                tags[position] = f"{'B' if k == 0 else 'I'}-{entity.label}"
        return tags
