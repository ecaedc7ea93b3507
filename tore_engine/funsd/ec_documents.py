"""EC-FUNSD files (Zhang et al. 2024): the gold annotation and the prediction over its words.

EC-FUNSD labels entities as spans of consecutive words of the gold `document`, so a prediction
only names word ids (`{"label_entities", "label_linkings"}`); it is validated against the gold
words when scored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tore_engine.errors import InputError

EC_CLASSES = ("header", "question", "answer")


@dataclass(frozen=True)
class EcEntity:
    entity_id: int
    label: str
    word_idx: tuple[int, ...]


@dataclass
class EcEntities:
    """Labelled entities and their directed links: what a prediction holds, and the gold's labels."""

    entities: list[EcEntity]
    links: set[tuple[int, int]]  # (head entity id, tail entity id)
    source: str = "<memory>"

    @classmethod
    def from_json(cls, data: object, *, file: str = "<memory>") -> "EcEntities":
        if not isinstance(data, dict):
            raise InputError('expected a JSON object with "label_entities" and "label_linkings"', file=file)
        raw_entities = data.get("label_entities")
        if not isinstance(raw_entities, list):
            raise InputError('"label_entities" must be a list', file=file)
        entities = [_parse_entity(item, index, file) for index, item in enumerate(raw_entities)]
        ids = [entity.entity_id for entity in entities]
        duplicates = sorted(i for i, n in Counter(ids).items() if n > 1)
        if duplicates:
            raise InputError(f"duplicate entity ids {duplicates}", file=file)
        links = data.get("label_linkings", [])
        if not isinstance(links, list) or not all(
            isinstance(link, list) and len(link) == 2 and all(_is_int(end) for end in link) for link in links
        ):
            raise InputError('"label_linkings" must be a list of [head_id, tail_id] integer pairs', file=file)
        unknown = sorted({end for link in links for end in link} - set(ids))
        if unknown:
            raise InputError(f'"label_linkings" name entity ids {unknown} that are not in "label_entities"', file=file)
        return cls(entities, {(head, tail) for head, tail in links}, file)

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

    @classmethod
    def from_json(cls, data: object, *, doc_id: str, file: str = "<memory>") -> "EcDocument":
        if not isinstance(data, dict) or not isinstance(data.get("document"), list):
            raise InputError('expected an EC-FUNSD JSON object with a "document" list of segments', file=file)
        word_ids = []
        for index, segment in enumerate(data["document"]):
            words = segment.get("words") if isinstance(segment, dict) else None
            if not isinstance(words, list) or not all(isinstance(w, dict) and _is_int(w.get("id")) for w in words):
                raise InputError(f'segment {index}: "words" must be a list of objects with an integer "id"', file=file)
            word_ids.extend(word["id"] for word in words)
        if any(b <= a for a, b in zip(word_ids, word_ids[1:])):
            raise InputError("word ids must be ascending in document order", file=file)
        document = cls(doc_id, word_ids, EcEntities.from_json(data, file=file))
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
        """IOB2 tags over the document's words, labels kept lower-case (funsd.md 2.11)."""
        tags = ["O"] * len(self.word_ids)
        for entity, positions in zip(labels.entities, self.word_positions(labels)):
            for k, position in enumerate(positions):
                tags[position] = f"{'B' if k == 0 else 'I'}-{entity.label}"
        return tags


def _parse_entity(item: object, index: int, file: str) -> EcEntity:
    def fail(problem: str) -> InputError:
        return InputError(f"entity {index}: {problem}", file=file, box=index)

    if not isinstance(item, dict):
        raise fail("is not a JSON object")
    if not _is_int(item.get("entity_id")):
        raise fail('"entity_id" must be an integer')
    if item.get("label") not in EC_CLASSES:
        raise fail(f'"label" is {item.get("label")!r}, expected one of {", ".join(EC_CLASSES)}')
    word_idx = item.get("word_idx")
    if not isinstance(word_idx, list) or not word_idx or not all(_is_int(w) for w in word_idx):
        raise fail('"word_idx" must be a non-empty list of word ids')
    return EcEntity(item["entity_id"], item["label"], tuple(word_idx))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
