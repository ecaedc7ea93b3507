"""Entity linking scores (docs/benchmarks.md#entity-linking and docs/benchmarks.md#linking-given-reference-entities).

Links are compared after mapping predicted entity ids to the GT entities they matched. Published
"relation F1" numbers differ in orientation, in which entities must be right, and in which links
count at all; each variant here has its own key so that the panel can say which one it shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass

from tore_engine.scorers.funsd.documents import FunsdDocument, undirected
from tore_engine.scorers.funsd.metrics import Counts, Summable

Link = tuple[int, int]


@dataclass(frozen=True)
class EndToEndLinkCounts(Summable):
    """tp/fp/fn of the four end-to-end variants of one document (or summed over a corpus)."""

    labeled_undirected: Counts
    labeled_directed: Counts
    detected_undirected: Counts
    conditional_labeled_undirected: Counts
    gt_undirected_links: int  # tells "undefined" from "nothing to find" in the conditional variant

    def panel(self) -> dict:
        conditional = self.conditional_labeled_undirected
        undefined = conditional.is_empty and self.gt_undirected_links > 0
        return {
            "e2e_labeled_undirected": self.labeled_undirected.prf(),
            "e2e_labeled_directed": self.labeled_directed.prf(),
            "e2e_detected_undirected": self.detected_undirected.prf(),
            "conditional_labeled_undirected": None if undefined else conditional.prf(),
        }


def correctly_labeled(reference: FunsdDocument, prediction: FunsdDocument, entity_map: Mapping[int, int]) -> set[int]:
    """Predicted entity ids matched to a GT entity of the same label."""
    gt_labels = {entity.id: entity.label for entity in reference.entities}
    return {
        entity.id for entity in prediction.entities
        if entity.id in entity_map and gt_labels[entity_map[entity.id]] == entity.label
    }


def end_to_end_link_counts(
    reference: FunsdDocument, prediction: FunsdDocument, entity_map: Mapping[int, int]
) -> EndToEndLinkCounts:
    """`entity_map`: predicted entity id -> id of the GT entity it is matched to (one-to-one)."""
    matched = set(entity_map)
    correct = correctly_labeled(reference, prediction, entity_map)
    gt_undirected, pred_undirected = reference.undirected_links, prediction.undirected_links

    def undirected_hits(links: Iterable[frozenset[int]], allowed: Set[int]) -> int:
        return sum(1 for link in links if link <= allowed and frozenset(entity_map[e] for e in link) in gt_undirected)

    directed_hits = sum(
        1 for a, b in prediction.links
        if a in correct and b in correct and (entity_map[a], entity_map[b]) in reference.links
    )
    gt_correct = {entity_map[pred_id] for pred_id in correct}
    conditional_gt = {link for link in gt_undirected if link <= gt_correct}
    conditional_pred = {link for link in pred_undirected if link <= correct}
    n_pred, n_gt = len(pred_undirected), len(gt_undirected)
    return EndToEndLinkCounts(
        labeled_undirected=Counts.from_sizes(undirected_hits(pred_undirected, correct), n_pred, n_gt),
        labeled_directed=Counts.from_sizes(directed_hits, len(prediction.links), len(reference.links)),
        detected_undirected=Counts.from_sizes(undirected_hits(pred_undirected, matched), n_pred, n_gt),
        conditional_labeled_undirected=Counts.from_sizes(
            undirected_hits(conditional_pred, correct), len(conditional_pred), len(conditional_gt)
        ),
        gt_undirected_links=n_gt,
    )


@dataclass(frozen=True)
class GivenEntityLinkCounts(Summable):
    """Linking over GT entities (LayoutLM/LayoutXLM relation extraction): the three variants' counts."""

    directed: Counts
    undirected: Counts
    kv_layoutxlm: Counts
    gt_directed: int
    gt_kv: int
    pred_directed: int
    pred_kv: int

    def panel(self, *, with_counts: bool = True) -> dict:
        panel = {
            "all_links_directed": self.directed.prf(),
            "all_links_undirected": self.undirected.prf(),
            "kv_layoutxlm_strict": self.kv_layoutxlm.prf_layoutxlm(),
        }
        if with_counts:
            panel["counts"] = {"gt_directed": self.gt_directed, "gt_kv": self.gt_kv,
                               "pred_directed": self.pred_directed, "pred_kv": self.pred_kv}
        return panel


def links_given_gt_entities(reference: FunsdDocument, pred_links: Iterable[Iterable[int]]) -> GivenEntityLinkCounts:
    """Score `[head_id, tail_id]` pairs predicted over the GT entities; self-links and unknown ids are dropped."""
    labels = {entity.id: entity.label for entity in reference.entities}
    predicted = {
        (head, tail) for head, tail in (tuple(pair) for pair in pred_links)
        if head != tail and head in labels and tail in labels
    }
    gt_kv, pred_kv = _question_answer_pairs(reference.links, labels), _question_answer_pairs(predicted, labels)
    gt_undirected, pred_undirected = reference.undirected_links, undirected(predicted)
    return GivenEntityLinkCounts(
        directed=Counts.from_sizes(len(predicted & reference.links), len(predicted), len(reference.links)),
        undirected=Counts.from_sizes(len(pred_undirected & gt_undirected), len(pred_undirected), len(gt_undirected)),
        kv_layoutxlm=Counts.from_sizes(len(pred_kv & gt_kv), len(pred_kv), len(gt_kv)),
        gt_directed=len(reference.links),
        gt_kv=len(gt_kv),
        pred_directed=len(predicted),
        pred_kv=len(pred_kv),
    )


def _question_answer_pairs(links: Iterable[Link], labels: Mapping[int, str]) -> set[Link]:
    """layoutlmft xfun.py: only question-answer links, oriented (question, answer)."""
    return {
        (a, b) if labels[a] == "question" else (b, a)
        for a, b in links
        if {labels[a], labels[b]} == {"question", "answer"}
    }
