"""FUNSD and EC-FUNSD scoring under the conventions fixed in docs/benchmarks.md#funsd-and-ec-funsd.

FUNSD has no official scorer, so every number here names its convention: matching rule,
orientation of links, which classes are averaged. `score_funsd` / `score_ec_funsd` score folders
(the CLI and the app) into a `FunsdResult`, `FunsdScorer` / `EcFunsdScorer` score documents in
memory, `links_given_gt_entities` is the LayoutLM-style relation score, and `funsd_layout_sets`
(in `tore_sets`) feeds `tore evaluate --format funsd`.
"""

from tore_engine.scorers.funsd.documents import (
    FUNSD_CLASSES,
    FunsdDocument,
    FunsdEntity,
    FunsdWord,
)
from tore_engine.scorers.funsd.ec_documents import EC_CLASSES, EcDocument, EcEntities
from tore_engine.scorers.funsd.ec_funsd import EcFunsdScorer, score_ec_document
from tore_engine.scorers.funsd.end_to_end import FunsdScorer, score_document
from tore_engine.scorers.funsd.links import links_given_gt_entities
from tore_engine.scorers.funsd.score import FunsdResult, score_ec_funsd, score_funsd
from tore_engine.scorers.funsd.tore_sets import funsd_layout_sets

__all__ = [
    "EC_CLASSES", "FUNSD_CLASSES", "EcDocument", "EcEntities", "EcFunsdScorer", "FunsdDocument", "FunsdEntity",
    "FunsdResult", "FunsdScorer", "FunsdWord", "funsd_layout_sets", "links_given_gt_entities", "score_document",
    "score_ec_document", "score_ec_funsd", "score_funsd",
]
