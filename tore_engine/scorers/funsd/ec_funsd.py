"""EC-FUNSD scoring (`tore score ec-funsd`, docs/benchmarks.md#ec-funsd): entity-level SER and linking over the
gold words, per document and over a corpus.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from dataclasses import dataclass

from tore_engine.scorers.funsd.ec_documents import EcDocument, EcEntities, EcEntity
from tore_engine.scorers.funsd.metrics import Counts, DocumentScorer, seqeval_panel


@dataclass
class EcDocumentScore:
    doc_id: str
    true_tags: list[str]
    pred_tags: list[str]
    exact_match: Counts
    el_given_gold_entities: Counts | None  # None: the predicted entities are not the gold ones
    el_e2e_directed: Counts
    counts: dict

    def panel(self) -> dict:
        return {
            "ser_seqeval": seqeval_panel([self.true_tags], [self.pred_tags]),
            "entity_exact_match": self.exact_match.prf(),
            "el_given_gold_entities": None if self.el_given_gold_entities is None else self.el_given_gold_entities.prf(),
            "el_e2e_directed": self.el_e2e_directed.prf(),
            "counts": dict(self.counts),
        }


def score_ec_document(gold: EcDocument, prediction: EcEntities) -> EcDocumentScore:
    gold_labels = gold.labels
    true_tags, pred_tags = gold.tags(gold_labels), gold.tags(prediction)  # validates the prediction's spans
    gold_by_span = {_span_key(entity): entity.entity_id for entity in gold_labels.entities}
    exact = {  # predicted entity id -> gold entity id, for exact span and label matches
        entity.entity_id: gold_by_span[_span_key(entity)]
        for entity in prediction.entities if _span_key(entity) in gold_by_span
    }
    e2e_hits = sum(
        1 for head, tail in prediction.links
        if head in exact and tail in exact and (exact[head], exact[tail]) in gold_labels.links
    )
    same_entities = set(prediction.entities) == set(gold_labels.entities)
    n_gold, n_pred = len(gold_labels.links), len(prediction.links)
    return EcDocumentScore(
        doc_id=gold.id,
        true_tags=true_tags,
        pred_tags=pred_tags,
        exact_match=Counts.from_sizes(len(exact), len(prediction.entities), len(gold_labels.entities)),
        el_given_gold_entities=(
            Counts.from_sizes(len(prediction.links & gold_labels.links), n_pred, n_gold) if same_entities else None
        ),
        el_e2e_directed=Counts.from_sizes(e2e_hits, n_pred, n_gold),
        counts={"gold_entities": len(gold_labels.entities), "pred_entities": len(prediction.entities),
                "gold_links": n_gold, "pred_links": n_pred},
    )


def _span_key(entity: EcEntity) -> tuple:
    return (entity.word_idx, entity.label)


class EcFunsdScorer(DocumentScorer[EcDocument, EcEntities, EcDocumentScore]):
    """Accumulates EC-FUNSD documents; `compute()` is the corpus panel."""

    def score(self, gold: EcDocument, prediction: EcEntities) -> EcDocumentScore:
        return score_ec_document(gold, prediction)

    def compute(self) -> dict:
        """SER via seqeval over the list of documents, other counts summed (docs/benchmarks.md#ec-funsd)."""
        docs = self.sorted_documents()
        given = [d.el_given_gold_entities for d in docs if d.el_given_gold_entities is not None]
        return {
            "ser_seqeval": seqeval_panel([d.true_tags for d in docs], [d.pred_tags for d in docs]),
            "entity_exact_match": _sum(d.exact_match for d in docs).prf(),
            "el_given_gold_entities": None if len(given) < len(docs) else _sum(given).prf(),
            "el_e2e_directed": _sum(d.el_e2e_directed for d in docs).prf(),
        }


def _sum(counts: Iterable[Counts]) -> Counts:
    return functools.reduce(operator.add, counts, Counts())
