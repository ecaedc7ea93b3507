"""End-to-end FUNSD scoring (`tore score funsd`): a model's boxes, text, grouping, labels and links
against the reference, per document and over a corpus (docs/benchmarks.md#funsd-and-ec-funsd).

Modelled on torchmetrics: `FunsdScorer.update(reference, prediction)` scores one document and keeps
its mergeable state (`DocumentScore`); `compute()` aggregates the corpus as docs/benchmarks.md#corpus-panel says.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from tore_engine.core.errors import InputError
from tore_engine.scorers.funsd.documents import FUNSD_CLASSES, FunsdDocument
from tore_engine.scorers.funsd.links import (
    EndToEndLinkCounts,
    correctly_labeled,
    end_to_end_link_counts,
)
from tore_engine.scorers.funsd.matching import BoxMatching, Matches, match_boxes
from tore_engine.scorers.funsd.metrics import (
    NO_LABEL,
    Counts,
    DocumentScorer,
    Summable,
    adjusted_rand_index,
    labeling_panel,
    mean_or_none,
    seqeval_panel,
)

MAX_WORD_CHARS = 1000  # a matched word's text (FUNSD words are tokens: the real forms' longest has 15)

CORPUS_AGGREGATION = (
    "micro over documents (counts summed; OCR mean over all matched pairs); word_grouping.ari_macro = mean of "
    "per-document ARI; labeling via sklearn on the concatenated per-document y_true/y_pred; SER via seqeval "
    "over the list of documents"
)


@dataclass(frozen=True)
class ItemCounts(Summable):
    gt_words: int
    pred_words: int
    gt_entities: int
    pred_entities: int
    gt_links_directed: int
    gt_links_undirected: int
    pred_links_directed: int
    pred_links_undirected: int

    @classmethod
    def of(cls, reference: FunsdDocument, prediction: FunsdDocument) -> "ItemCounts":
        return cls(
            len(reference.words), len(prediction.words), len(reference.entities), len(prediction.entities),
            len(reference.links), len(reference.undirected_links),
            len(prediction.links), len(prediction.undirected_links),
        )


@dataclass(frozen=True)
class Detection(Summable):
    """Detection counts under both matching rules."""

    optimal: Counts
    greedy_icdar: Counts

    @classmethod
    def of(cls, matching: BoxMatching) -> "Detection":
        n_reference, n_predicted = matching.shape
        return cls(Counts.from_sizes(len(matching.optimal), n_predicted, n_reference),
                   Counts.from_sizes(matching.greedy_count, n_predicted, n_reference))

    def panel(self) -> dict:
        return {**self.optimal.prf(), "greedy_icdar_strict": self.greedy_icdar.prf()}


@dataclass(frozen=True)
class OcrSums(Summable):
    """docs/benchmarks.md#ocr, as sums so that the corpus mean is over all matched pairs."""

    n_matched: int
    n_gt_words: int
    sum_similarity: float
    sum_edit_distance: int
    n_exact: int

    @classmethod
    def of(cls, reference: FunsdDocument, prediction: FunsdDocument, word_matches: Matches) -> "OcrSums":
        from rapidfuzz.distance import Levenshtein

        _check_word_lengths(reference, [g for g, _ in word_matches])
        _check_word_lengths(prediction, [p for _, p in word_matches])
        gt_words, pred_words = reference.words, prediction.words
        pairs = [(pred_words[p].text, gt_words[g].text) for g, p in word_matches]
        return cls(
            n_matched=len(pairs),
            n_gt_words=len(gt_words),
            sum_similarity=float(sum(Levenshtein.normalized_similarity(p, g) for p, g in pairs)),
            sum_edit_distance=sum(Levenshtein.distance(p, g) for p, g in pairs),
            n_exact=sum(p == g for p, g in pairs),
        )

    def panel(self) -> dict:
        return {
            "n_matched": self.n_matched,
            "n_gt_words": self.n_gt_words,
            "sum_similarity": self.sum_similarity,
            "sum_edit_distance": self.sum_edit_distance,
            "mean_similarity_matched": mean_or_none(self.sum_similarity, self.n_matched),
            "mean_similarity_over_gt": mean_or_none(self.sum_similarity, self.n_gt_words),
            "exact_match_rate_matched": mean_or_none(self.n_exact, self.n_matched),
        }


def _check_word_lengths(document: FunsdDocument, indexes: list[int]) -> None:
    """The words at `indexes` are short enough to compare: the edit distance's cost grows with the
    product of the two lengths (two words of 100,000 characters take 0.5 s, of a million 50 s)."""
    words = document.words
    for index in indexes:
        if len(words[index].text) > MAX_WORD_CHARS:
            entity = document.entities[document.word_entity_index()[index]]
            raise InputError(f"entity {entity.id} has a word of {len(words[index].text):,} characters, more than the "
                             f"{MAX_WORD_CHARS:,} that OCR scoring compares", file=document.source)


@dataclass
class DocumentScore:
    """One document's panel state: what the corpus needs to aggregate, and what its overlay shows."""

    doc_id: str
    counts: ItemCounts
    word_detection: Detection
    entity_detection: Detection
    ocr: OcrSums
    word_grouping: dict
    label_pairs: list[tuple[str, str]]  # (gt label or <none>, predicted label or <none>)
    matched_label_accuracy: float | None
    true_tags: list[str]
    pred_tags: list[str]
    links: EndToEndLinkCounts
    overlay: dict

    def panel(self) -> dict:
        """The per-document panel object (docs/benchmarks.md#per-document-panel)."""
        labeling = labeling_panel(*_columns(self.label_pairs), FUNSD_CLASSES)
        return {
            "counts": vars(self.counts).copy(),
            "word_detection": self.word_detection.panel(),
            "entity_detection": self.entity_detection.panel(),
            "ocr": self.ocr.panel(),
            "word_grouping": dict(self.word_grouping),
            "entity_labeling": {**labeling, "matched_label_accuracy": self.matched_label_accuracy},
            "ser_seqeval": seqeval_panel([self.true_tags], [self.pred_tags]),
            "entity_linking": self.links.panel(),
        }


def score_document(reference: FunsdDocument, prediction: FunsdDocument) -> DocumentScore:
    """Score one form: match words and entities, then derive every panel from the matches."""
    files = (reference.source, prediction.source)
    words = match_boxes(reference.word_boxes(), prediction.word_boxes(), what="words", files=files)
    entities = match_boxes(reference.entity_boxes(), prediction.entity_boxes(), what="entities", files=files)
    return score_matched(reference, prediction, words, entities)


def score_matched(reference: FunsdDocument, prediction: FunsdDocument, words: BoxMatching, entities: BoxMatching) -> DocumentScore:
    """Every panel of one form from its word and entity matchings."""
    word_matches, entity_matches = words.optimal, entities.optimal
    entity_map = {prediction.entities[p].id: reference.entities[g].id for g, p in entity_matches}
    true_tags, pred_tags = layoutlm_tags(reference, prediction, word_matches)
    return DocumentScore(
        doc_id=reference.id,
        counts=ItemCounts.of(reference, prediction),
        word_detection=Detection.of(words),
        entity_detection=Detection.of(entities),
        ocr=OcrSums.of(reference, prediction, word_matches),
        word_grouping=word_grouping(reference, prediction, word_matches),
        label_pairs=label_pairs(reference, prediction, entity_matches),
        matched_label_accuracy=mean_or_none(
            sum(reference.entities[g].label == prediction.entities[p].label for g, p in entity_matches),
            len(entity_matches),
        ),
        true_tags=true_tags,
        pred_tags=pred_tags,
        links=end_to_end_link_counts(reference, prediction, entity_map),
        overlay=overlay(reference, prediction, entities, entity_map),
    )


def word_grouping(reference: FunsdDocument, prediction: FunsdDocument, word_matches: Matches) -> dict:
    """docs/benchmarks.md#word-grouping: ARI of GT entities against predicted entities over the GT words."""
    true_clusters = reference.word_entity_index()
    pred_entity_of_word = prediction.word_entity_index()
    matched = dict(word_matches)
    # an unmatched GT word is a fresh singleton cluster: negative ids never collide with entity indexes
    pred_clusters = [pred_entity_of_word[matched[g]] if g in matched else -1 - g for g in range(len(true_clusters))]
    matched_rows = sorted(matched)
    matched_only = (
        adjusted_rand_index([true_clusters[g] for g in matched_rows], [pred_clusters[g] for g in matched_rows])
        if len(matched_rows) >= 2 else None
    )
    return {
        "ari": adjusted_rand_index(true_clusters, pred_clusters),
        "ari_matched_only": matched_only,
        "n_words": len(true_clusters),
        "n_matched_words": len(matched_rows),
    }


def label_pairs(reference: FunsdDocument, prediction: FunsdDocument, entity_matches: Matches) -> list[tuple[str, str]]:
    """docs/benchmarks.md#entity-labeling: (gt, predicted) labels of matches, then unmatched GT, then unmatched predictions."""
    matched_gt = {g for g, _ in entity_matches}
    matched_pred = {p for _, p in entity_matches}
    return (
        [(reference.entities[g].label, prediction.entities[p].label) for g, p in entity_matches]
        + [(e.label, NO_LABEL) for i, e in enumerate(reference.entities) if i not in matched_gt]
        + [(NO_LABEL, e.label) for i, e in enumerate(prediction.entities) if i not in matched_pred]
    )


def layoutlm_tags(reference: FunsdDocument, prediction: FunsdDocument, word_matches: Matches) -> tuple[list[str], list[str]]:
    """docs/benchmarks.md#ser: IOB2 tags of the GT words, from the GT entities and from the matched predicted words."""
    true_tags = [
        "O" if entity.label == "other" else f"{'B' if k == 0 else 'I'}-{entity.label.upper()}"
        for entity in reference.entities
        for k in range(len(entity.words))
    ]
    pred_entity_of_word = prediction.word_entity_index()
    matched = dict(word_matches)
    pred_tags, previous_entity = [], None
    for g in range(len(true_tags)):
        entity_index = pred_entity_of_word[matched[g]] if g in matched else None
        label = prediction.entities[entity_index].label if entity_index is not None else "other"
        if label == "other":
            pred_tags.append("O")
        else:
            pred_tags.append(f"{'I' if entity_index == previous_entity else 'B'}-{label.upper()}")
        previous_entity = entity_index
    return true_tags, pred_tags


def overlay(reference: FunsdDocument, prediction: FunsdDocument, entities: BoxMatching, entity_map: dict[int, int]) -> dict:
    """What the app draws for one form: entities with their match, links with their outcome.

    Links are judged by the headline variant (`e2e_labeled_undirected`).
    """
    entity_matches = entities.optimal
    gt_to_pred = {g: p for g, p in entity_matches}
    iou_of = dict(zip(entity_matches, entities.optimal_iou))
    correct = correctly_labeled(reference, prediction, entity_map)
    pred_found = {
        link for link in prediction.undirected_links
        if link <= correct and frozenset(entity_map[e] for e in link) in reference.undirected_links
    }
    gt_found = {frozenset(entity_map[e] for e in link) for link in pred_found}
    pred_to_gt = {p: g for g, p in entity_matches}
    return {
        "gt_entities": [
            {"id": e.id, "label": e.label, "box": list(e.box),
             "matched_pred_id": prediction.entities[gt_to_pred[i]].id if i in gt_to_pred else None,
             "iou": iou_of[i, gt_to_pred[i]] if i in gt_to_pred else None}
            for i, e in enumerate(reference.entities)
        ],
        "pred_entities": [
            {"id": e.id, "label": e.label, "box": list(e.box),
             "matched_gt_id": reference.entities[pred_to_gt[j]].id if j in pred_to_gt else None,
             "label_correct": (e.id in correct) if j in pred_to_gt else None}
            for j, e in enumerate(prediction.entities)
        ],
        "gt_links": [{"from": a, "to": b, "found": frozenset((a, b)) in gt_found} for a, b in sorted(reference.links)],
        "pred_links": [{"from": a, "to": b, "correct": frozenset((a, b)) in pred_found} for a, b in sorted(prediction.links)],
        "dropped": {
            "gt_blank_words": reference.dropped_words, "gt_blank_entities": reference.dropped_entities,
            "pred_blank_words": prediction.dropped_words, "pred_blank_entities": prediction.dropped_entities,
        },
    }


def _columns(pairs: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    return [t for t, _ in pairs], [p for _, p in pairs]


class FunsdScorer(DocumentScorer[FunsdDocument, FunsdDocument, DocumentScore]):
    """Accumulates documents; `compute()` is the corpus panel of docs/benchmarks.md#corpus-panel."""

    def score(self, reference: FunsdDocument, prediction: FunsdDocument) -> DocumentScore:
        return score_document(reference, prediction)

    def compute(self) -> dict:
        docs = self.sorted_documents()
        aris = [d.word_grouping["ari"] for d in docs if d.word_grouping["ari"] is not None]
        return {
            "aggregation": CORPUS_AGGREGATION,
            "counts": vars(_total(d.counts for d in docs)).copy(),
            "word_detection": _total(d.word_detection for d in docs).panel(),
            "entity_detection": _total(d.entity_detection for d in docs).panel(),
            "ocr": _total(d.ocr for d in docs).panel(),
            "word_grouping": {"ari_macro": mean_or_none(sum(aris), len(aris)), "n_docs": len(aris)},
            "entity_labeling": labeling_panel(*_columns([pair for d in docs for pair in d.label_pairs]), FUNSD_CLASSES),
            "ser_seqeval": seqeval_panel([d.true_tags for d in docs], [d.pred_tags for d in docs]),
            "entity_linking": _total(d.links for d in docs).panel(),
        }


Sums = TypeVar("Sums", bound=Summable)


def _total(states: Iterable[Sums]) -> Sums:
    return functools.reduce(operator.add, states)
