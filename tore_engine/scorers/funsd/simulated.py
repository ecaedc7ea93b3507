"""Simulated FUNSD and EC-FUNSD predictions: seeded perturbations of the gold forms.

The shared sample holds gold forms but no model output, so the app scores a *simulated* model made
here from the gold: every number it shows then has a known cause. Each perturbation is counted in a
log, so that tests (and curious users) can tie the scores back to what was done. The same gold,
seed and noise always give the same prediction (the random stream is seeded by the seed and the
document id, never by the order documents are processed in).
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import json
import math
import random
import string
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tore_engine.io.json import read_json
from tore_engine.scorers.funsd.documents import (
    FUNSD_CLASSES,
    FunsdDocument,
    pair_folders,
)
from tore_engine.scorers.funsd.ec_documents import EC_CLASSES, EcDocument
from tore_engine.scorers.funsd.matching import check_box_count

DISPLACEMENT = 0.6  # of the entity's width: IoU of a displaced box with its gold box is 0.4 / 1.6 = 0.25


@dataclass(frozen=True)
class FunsdNoise:
    """Probabilities of each perturbation (per valid entity, per word or per gold link)."""

    jitter: float = 0.02  # every box corner moves by up to this fraction of the box size (IoU stays high)
    displace: float = 0.05  # entity and its words shifted right by 0.6 of its width: a miss and a false alarm
    drop: float = 0.05  # entity missed
    merge: float = 0.04  # entity merged with its nearest neighbour
    split: float = 0.04  # entity of >= 2 words split into two halves
    relabel: float = 0.08  # entity given another class
    typo: float = 0.05  # per word: one character substituted, deleted or doubled
    drop_link: float = 0.10  # per gold link: link missed
    add_link: float = 0.05  # per gold link: one spurious question -> answer link added


@dataclass(frozen=True)
class EcNoise:
    """Probabilities of each perturbation of an EC-FUNSD prediction (per entity or per gold link)."""

    drop: float = 0.05  # entity missed
    trim: float = 0.08  # entity of >= 2 words loses its last word (span no longer exact)
    relabel: float = 0.08  # entity given another class
    drop_link: float = 0.10
    add_link: float = 0.05


NO_NOISE = FunsdNoise(0, 0, 0, 0, 0, 0, 0, 0, 0)
NO_EC_NOISE = EcNoise(0, 0, 0, 0, 0)


def _rng(seed: int, doc_id: str) -> random.Random:
    return random.Random(f"{seed}:{doc_id}")  # str seeds hash with SHA-512: stable across runs and platforms


# --- FUNSD ---------------------------------------------------------------------------------------


def simulate_funsd_prediction(
    gold: object, *, doc_id: str, seed: int = 0, noise: FunsdNoise = FunsdNoise(), file: str = "<memory>"
) -> tuple[dict, Counter]:
    """A FUNSD prediction `{"form": [...]}` made from a gold form, and the count of each perturbation.

    Only valid entities (docs/benchmarks.md#valid-words-and-entities: with a non-blank word) are perturbed, so the log counts what
    the scorer sees; entities made of blank words are kept as they are (the scorer ignores them).
    """
    document = FunsdDocument.from_json(gold, doc_id=doc_id, file=file)  # bad gold is an input error, not a crash below
    assert isinstance(gold, dict)  # from_json took it as a FUNSD form
    check_box_count(len(document.words), side="reference", what="words", file=file)  # before merges search every entity
    rng = _rng(seed, doc_id)
    log: Counter = Counter()
    entities = [copy.deepcopy(entity) for entity in gold["form"]]
    links = {tuple(pair) for entity in entities for pair in entity.get("linking", [])}
    next_id = max((entity["id"] for entity in entities), default=-1) + 1
    renamed: dict[int, int | None] = {}  # gold id -> predicted id (None: dropped)
    result: list[dict] = []
    consumed: set[int] = set()
    valid_indexes = [index for index, entity in enumerate(entities) if _valid_words(entity)]
    for index, entity in enumerate(entities):
        if index in consumed:
            continue
        if not _valid_words(entity):
            result.append(entity)
            continue
        fate = _draw(rng, [("drop", noise.drop), ("merge", noise.merge), ("split", noise.split), ("displace", noise.displace)])
        if fate == "drop":
            renamed[entity["id"]] = None
            log["dropped"] += 1
            continue
        if fate == "merge" and (partner := _nearest(entities, index, consumed, valid_indexes)) is not None:
            consumed.add(partner)
            renamed[entities[partner]["id"]] = entity["id"]
            entity = _merged(entity, entities[partner])
            log["merged"] += 1
        elif fate == "split" and len(_valid_words(entity)) >= 2:
            entity, second = _split(entity, next_id)
            result.append(entity)
            entity, next_id = second, next_id + 1
            log["split"] += 1
        elif fate == "displace":
            _shift(entity, DISPLACEMENT * (entity["box"][2] - entity["box"][0]))
            log["displaced"] += 1
        result.append(entity)
    for entity in result:
        if _valid_words(entity) and rng.random() < noise.relabel:
            entity["label"] = rng.choice([label for label in FUNSD_CLASSES if label != entity["label"]])
            log["relabelled"] += 1
        for word in _valid_words(entity):
            if rng.random() < noise.typo:
                word["text"] = _typo(rng, word["text"])
                log["typos"] += 1
        _jitter(rng, entity, noise.jitter)
        entity["text"] = " ".join(word["text"] for word in entity["words"])
    valid = [entity for entity in result if _valid_words(entity)]
    links = _noisy_links(rng, _renamed_links(links, renamed), _ids(valid, "question", "id"), _ids(valid, "answer", "id"),
                         noise.drop_link, noise.add_link, log)
    linking = _linking_by_entity(links)
    for entity in result:
        entity["linking"] = [list(link) for link in linking.get(entity["id"], ())]
    return {"form": result}, log


def _linking_by_entity(links: set[tuple[int, int]]) -> dict[int, list[tuple[int, int]]]:
    """Each entity id's links, in sorted order: FUNSD lists a link in both of its ends' `linking`."""
    by_entity: dict[int, list[tuple[int, int]]] = {}
    for link in sorted(links):
        for end in set(link):
            by_entity.setdefault(end, []).append(link)
    return by_entity


def _valid_words(entity: dict) -> list[dict]:
    return [word for word in entity["words"] if word["text"].strip()]


def _draw(rng: random.Random, choices: list[tuple[str, float]]) -> str | None:
    """At most one of mutually exclusive outcomes, each with its probability."""
    point, total = rng.random(), 0.0
    for name, probability in choices:
        total += probability
        if point < total:
            return name
    return None


def _centre(box: list[float]) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def _nearest(entities: list[dict], index: int, consumed: set[int], valid_indexes: list[int]) -> int | None:
    """The closest later valid entity by box centre (earlier ones have been placed already);
    `valid_indexes`: the valid entities' indexes, ascending (entities of blank words cost nothing)."""
    x, y = _centre(entities[index]["box"])
    later = valid_indexes[bisect.bisect_right(valid_indexes, index):]
    candidates = [k for k in later if k not in consumed]
    return min(candidates, key=lambda k: math.dist((x, y), _centre(entities[k]["box"])), default=None)


def _union(boxes: list[list[float]]) -> list[float]:
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def _merged(first: dict, second: dict) -> dict:
    return {**first, "box": _union([first["box"], second["box"]]), "words": first["words"] + second["words"]}


def _split(entity: dict, new_id: int) -> tuple[dict, dict]:
    """Two entities of the first and second half of the words; links stay with the first half."""
    words = _valid_words(entity)
    half = len(words) // 2
    first = {**entity, "words": words[:half], "box": _union([w["box"] for w in words[:half]])}
    second = {**entity, "id": new_id, "words": words[half:], "box": _union([w["box"] for w in words[half:]])}
    return first, second


def _shift(entity: dict, dx: float) -> None:
    for item in [entity, *entity["words"]]:
        item["box"] = [item["box"][0] + dx, item["box"][1], item["box"][2] + dx, item["box"][3]]


def _jitter(rng: random.Random, entity: dict, amount: float) -> None:
    """Move every corner by up to `amount` of the box size, keeping x1 <= x2 and y1 <= y2."""
    if amount <= 0:
        return
    for item in [entity, *entity["words"]]:
        x1, y1, x2, y2 = item["box"]
        dx, dy = amount * (x2 - x1), amount * (y2 - y1)
        x1, x2 = x1 + rng.uniform(-dx, dx), x2 + rng.uniform(-dx, dx)
        y1, y2 = y1 + rng.uniform(-dy, dy), y2 + rng.uniform(-dy, dy)
        item["box"] = [round(min(x1, x2), 2), round(min(y1, y2), 2), round(max(x1, x2), 2), round(max(y1, y2), 2)]


def _typo(rng: random.Random, text: str) -> str:
    """One character substituted, deleted or doubled; never a blank result."""
    position = rng.randrange(len(text))
    operation = rng.choice(("substitute", "delete", "double")) if len(text.strip()) >= 2 else "substitute"
    if operation == "delete" and (text[:position] + text[position + 1 :]).strip():
        return text[:position] + text[position + 1 :]
    if operation == "double":
        return text[: position + 1] + text[position:]
    replacement = rng.choice([c for c in string.ascii_letters + string.digits if c != text[position]])
    return text[:position] + replacement + text[position + 1 :]


def _renamed_links(links: set[tuple[int, int]], renamed: dict[int, int | None]) -> set[tuple[int, int]]:
    """Links after drops and merges: a dropped end drops the link, a merged end follows its entity."""
    result = set()
    for a, b in links:
        head, tail = renamed.get(a, a), renamed.get(b, b)
        if head is not None and tail is not None and head != tail:
            result.add((head, tail))
    return result


def _noisy_links(
    rng: random.Random, links: set[tuple[int, int]], questions: list[int], answers: list[int],
    drop: float, add: float, log: Counter,
) -> set[tuple[int, int]]:
    """Drop each link with probability `drop`; per link, add a spurious link from one of
    `questions` to one of `answers` (entity ids) with probability `add`, if not linked yet."""
    kept = set()
    for link in sorted(links):
        if rng.random() < drop:
            log["dropped_links"] += 1
        else:
            kept.add(link)
    for _ in sorted(links):
        if rng.random() < add and questions and answers:
            link = (rng.choice(questions), rng.choice(answers))
            if link not in kept and link[::-1] not in kept:
                kept.add(link)
                log["added_links"] += 1
    return kept


def _ids(entities: list[dict], label: str, id_key: str) -> list[int]:
    return [entity[id_key] for entity in entities if entity["label"] == label]


# --- EC-FUNSD ------------------------------------------------------------------------------------


def simulate_ec_prediction(
    gold: object, *, doc_id: str, seed: int = 0, noise: EcNoise = EcNoise(), file: str = "<memory>"
) -> tuple[dict, Counter]:
    """An EC-FUNSD prediction `{"label_entities", "label_linkings"}` over the gold words, and the
    count of each perturbation. Spans stay runs of consecutive gold words, so it is always valid."""
    EcDocument.from_json(gold, doc_id=doc_id, file=file)  # bad gold is an input error
    assert isinstance(gold, dict)  # from_json took it as an EC-FUNSD document
    rng = _rng(seed, doc_id)
    log: Counter = Counter()
    entities, dropped = [], set()
    for entity in gold["label_entities"]:
        entity = copy.deepcopy(entity)
        fate = _draw(rng, [("drop", noise.drop), ("trim", noise.trim)])
        if fate == "drop":
            dropped.add(entity["entity_id"])
            log["dropped"] += 1
            continue
        if fate == "trim" and len(entity["word_idx"]) >= 2:
            entity["word_idx"] = entity["word_idx"][:-1]
            log["trimmed"] += 1
        if rng.random() < noise.relabel:
            entity["label"] = rng.choice([label for label in EC_CLASSES if label != entity["label"]])
            log["relabelled"] += 1
        entities.append(entity)
    links = {(head, tail) for head, tail in gold.get("label_linkings", []) if head not in dropped and tail not in dropped}
    links = _noisy_links(rng, links, _ids(entities, "question", "entity_id"), _ids(entities, "answer", "entity_id"),
                         noise.drop_link, noise.add_link, log)
    return {"label_entities": entities, "label_linkings": [list(link) for link in sorted(links)]}, log


# --- folders -------------------------------------------------------------------------------------

class Simulator(Protocol):
    """`simulate_funsd_prediction` and `simulate_ec_prediction` with their default noise."""

    def __call__(self, gold: object, *, doc_id: str, seed: int = ..., file: str = ...) -> tuple[dict, Counter]: ...


SIMULATORS: dict[str, Simulator] = {"funsd": simulate_funsd_prediction, "ec-funsd": simulate_ec_prediction}


def write_simulated_predictions(benchmark: str, reference_dir: Path, output_dir: Path, *, seed: int = 0) -> dict[str, Counter]:
    """One simulated prediction file per gold file of `reference_dir`, written to `output_dir`
    under the same name (so that `score_funsd` / `score_ec_funsd` pair them); returns each document's log."""
    simulate = SIMULATORS[benchmark]
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    logs = {}
    for stem, reference_path, _ in pair_folders(Path(reference_dir), output_dir).pairs:
        prediction, logs[stem] = simulate(read_json(reference_path), doc_id=stem, seed=seed, file=str(reference_path))
        (output_dir / f"{stem}.json").write_text(json.dumps(prediction), encoding="utf-8")
    return logs


FOLDER_NAME_LENGTH = 16  # hex digits of the folder's hash


@dataclass(frozen=True)
class SimulatedFolder:
    """Simulated predictions written to a folder, and how many of each perturbation they hold."""

    folder: Path
    totals: dict[str, int]  # perturbation name -> count over all documents

    def to_json(self) -> dict:
        return {"folder": str(self.folder), "totals": self.totals}


def simulated_folder(
    benchmark: str, reference_dir: Path, *, seed: int = 0, version: object = None, root: Path
) -> SimulatedFolder:
    """`write_simulated_predictions` into a folder of `root` named after what the prediction is made
    from (benchmark, reference folder, its `version`, such as its files' stamps, and the seed): the
    same inputs write the same files again, and other inputs never share a folder, so no file made
    from an older reference is paired with a newer one."""
    key = repr((benchmark, str(reference_dir), version, seed)).encode()
    folder = Path(root) / hashlib.sha256(key).hexdigest()[:FOLDER_NAME_LENGTH]
    logs = write_simulated_predictions(benchmark, reference_dir, folder, seed=seed)
    return SimulatedFolder(folder, dict(sum(logs.values(), Counter())))
