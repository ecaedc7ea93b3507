"""Folder-level scoring: what `tore score funsd|ec-funsd` prints and what the app's panel draws.

`score_funsd` and `score_ec_funsd` return a `FunsdResult`: the corpus panel (`to_json()`, the
`--json` output), the headline numbers with the convention each one follows, per-class tables,
one row per document, and per document its full panel and (FUNSD) its overlay of matched and
unmatched entities and links (`panel()`, plain JSON).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tore_engine.scorers.common import format_score, headline_item
from tore_engine.scorers.funsd.documents import (
    FunsdDocument,
    find_page_image,
    pair_folders,
)
from tore_engine.scorers.funsd.ec_documents import EcDocument, EcEntities
from tore_engine.scorers.funsd.ec_funsd import EcFunsdScorer
from tore_engine.scorers.funsd.end_to_end import FunsdScorer

TITLES = {"funsd": "FUNSD", "ec-funsd": "EC-FUNSD"}


@dataclass(frozen=True)
class Headline:
    """One headline number: where it sits in a corpus and in a document panel, and how it is defined."""

    key: str
    label: str
    corpus_path: tuple[str, ...]
    document_path: tuple[str, ...]
    convention: str


def _same(*path: str) -> dict:
    return {"corpus_path": path, "document_path": path}


FUNSD_HEADLINES = (
    Headline("word_f1", "Word detection F1", **_same("word_detection", "f1"),
             convention="IoU >= 0.5, one-to-one optimal assignment; blank words dropped"),
    Headline("word_f1_icdar", "Word detection F1, ICDAR greedy", **_same("word_detection", "greedy_icdar_strict", "f1"),
             convention="IoU > 0.5, first free prediction per GT word (ICDAR 2015)"),
    Headline("entity_f1", "Entity detection F1", **_same("entity_detection", "f1"),
             convention="class-agnostic, IoU >= 0.5 on entity boxes"),
    Headline("ocr_similarity", "OCR similarity", **_same("ocr", "mean_similarity_over_gt"),
             convention="1 - Levenshtein / max length over GT words; unmatched GT words score 0"),
    Headline("grouping_ari", "Word grouping ARI", ("word_grouping", "ari_macro"), ("word_grouping", "ari"),
             convention="Adjusted Rand Index of words into entities; corpus = mean over documents"),
    Headline("labeling_micro_f1", "Entity labeling micro F1", **_same("entity_labeling", "micro", "f1"),
             convention="matched entities, 4 classes with other; unmatched entities count as errors"),
    Headline("labeling_macro_f1", "Entity labeling macro F1", **_same("entity_labeling", "macro", "f1"),
             convention="unweighted mean over the classes present"),
    Headline("labeling_micro_f1_no_other", "Entity labeling micro F1 without other",
             **_same("entity_labeling", "micro_excluding_other", "f1"), convention="header, question, answer"),
    Headline("ser_f1", "SER F1 (seqeval)", **_same("ser_seqeval", "overall", "f1"),
             convention="LayoutLM-style IOB2 tags on GT words via matched words; entity-level, 3 types"),
    Headline("linking_f1", "Entity linking F1", **_same("entity_linking", "e2e_labeled_undirected", "f1"),
             convention="end to end, both entities matched with the right label, undirected"),
    Headline("linking_f1_directed", "Entity linking F1, directed", **_same("entity_linking", "e2e_labeled_directed", "f1"),
             convention="as above, key -> value orientation must match"),
)

EC_FUNSD_HEADLINES = (
    Headline("ser_f1", "SER F1 (seqeval)", **_same("ser_seqeval", "overall", "f1"),
             convention="IOB2 tags over the gold words, entity-level, 3 types"),
    Headline("entity_exact_f1", "Entity exact match F1", **_same("entity_exact_match", "f1"),
             convention="same word span and label"),
    Headline("el_given_gold_f1", "Linking F1, gold entities", **_same("el_given_gold_entities", "f1"),
             convention="directed; n/a unless the predicted entities are exactly the gold ones"),
    Headline("el_e2e_f1", "Linking F1, end to end", **_same("el_e2e_directed", "f1"),
             convention="directed; both entities must match gold exactly"),
)


def lookup(panel: dict, path: tuple[str, ...]) -> float | None:
    """The number at `path`, or None where a step is undefined (`null`)."""
    value: object = panel
    for step in path:
        if value is None:
            return None
        assert isinstance(value, dict)  # a panel is nested dicts down to its numbers
        value = value[step]
    assert value is None or isinstance(value, int | float)
    return value


@dataclass
class FunsdResult:
    benchmark: str  # "funsd" or "ec-funsd"
    corpus: dict  # the corpus panel: the `--json` output
    documents: dict[str, dict]  # doc id -> per-document panel (docs/benchmarks.md#per-document-panel)
    overlays: dict[str, dict]  # doc id -> matched/unmatched entities and links (FUNSD only)
    images: dict[str, str | None]  # doc id -> page image path
    missing_predictions: list[str]  # reference files scored against an empty prediction
    unused_predictions: list[str]  # prediction files without a reference file, ignored
    headlines: tuple[Headline, ...]

    def to_json(self) -> dict:
        """The corpus panel: the `tore score funsd|ec-funsd --json` output (docs/benchmarks.md#corpus-panel)."""
        return self.corpus

    def headline(self, panel: dict | None = None, *, document: bool = False) -> list[dict]:
        """The headline numbers of the corpus, or of one document's `panel`."""
        panel = self.corpus if panel is None else panel
        return [
            headline_item(h.key, h.label, lookup(panel, h.document_path if document else h.corpus_path), h.convention)
            for h in self.headlines
        ]

    @property
    def warnings(self) -> list[str]:
        """Files that were not paired: scored against an empty prediction, or ignored."""
        notes = []
        if self.missing_predictions:
            notes.append(f"reference file(s) without a prediction file, scored as empty: {_file_names(self.missing_predictions)}")
        if self.unused_predictions:
            notes.append(f"prediction file(s) without a reference file, ignored: {_file_names(self.unused_predictions)}")
        return notes

    def summary(self) -> str:
        """Headline numbers with their conventions, then the per-class tables."""
        lines = [f"{TITLES[self.benchmark]} scores over {len(self.documents)} document(s)", ""]
        items = self.headline()
        width = max(len(item["label"]) for item in items)
        lines += [f"  {item['label']:<{width}}  {format_score(item['value'])}   ({item['convention']})" for item in items]
        for title, table in self.per_class_tables().items():
            lines += ["", f"{title} per class:", f"  {'class':<10} {'precision':>9} {'recall':>9} {'f1':>9} {'support':>8}"]
            for name, row in table.items():
                support = row.get("support", row.get("support_gt"))
                lines.append(f"  {name:<10} {format_score(row['precision']):>9} {format_score(row['recall']):>9} "
                             f"{format_score(row['f1']):>9} {support:>8}")
        return "\n".join(lines)

    def per_class_tables(self) -> dict:
        tables = {"ser_seqeval": self.corpus["ser_seqeval"]["per_type"]}
        if "entity_labeling" in self.corpus:
            tables["entity_labeling"] = self.corpus["entity_labeling"]["per_class"]
        return tables

    def panel(self) -> dict:
        """Everything the app's score panel renders, as plain JSON (None = n/a)."""
        return {
            "benchmark": self.benchmark,
            "headline": self.headline(),
            "corpus": self.corpus,
            "per_class": self.per_class_tables(),
            "documents": [
                {
                    "doc": doc_id,
                    "image": self.images.get(doc_id),
                    "prediction_missing": doc_id in self.missing_predictions,
                    "row": {item["key"]: item["value"] for item in self.headline(panel, document=True)},
                    "panel": panel,
                    "overlay": self.overlays.get(doc_id),
                }
                for doc_id, panel in self.documents.items()
            ],
            "missing_predictions": self.missing_predictions,
            "unused_predictions": self.unused_predictions,
        }


def _file_names(doc_ids: list[str]) -> str:
    return ", ".join(f"{doc_id}.json" for doc_id in doc_ids)


def score_funsd(reference_dir: Path, prediction_dir: Path) -> FunsdResult:
    """End-to-end FUNSD scores of a prediction folder against a reference folder."""
    pairing = pair_folders(Path(reference_dir), Path(prediction_dir))
    scorer = FunsdScorer()
    overlays, images = {}, {}
    for stem, reference_path, prediction_path in pairing.pairs:
        reference = FunsdDocument.load(reference_path)
        prediction = FunsdDocument.load(prediction_path) if prediction_path else FunsdDocument.empty(stem)
        overlays[stem] = scorer.update(reference, prediction).overlay
        image = find_page_image(reference_path)
        images[stem] = str(image) if image else None
    return FunsdResult(
        benchmark="funsd",
        corpus=scorer.compute(),
        documents={score.doc_id: score.panel() for score in scorer.documents},
        overlays=overlays,
        images=images,
        missing_predictions=[path.stem for path in pairing.missing_predictions],
        unused_predictions=[path.stem for path in pairing.unused_predictions],
        headlines=FUNSD_HEADLINES,
    )


def score_ec_funsd(reference_dir: Path, prediction_dir: Path) -> FunsdResult:
    """EC-FUNSD scores: gold EC-FUNSD JSON files against `{"label_entities", "label_linkings"}` files."""
    pairing = pair_folders(Path(reference_dir), Path(prediction_dir))
    scorer = EcFunsdScorer()
    for _, reference_path, prediction_path in pairing.pairs:
        gold = EcDocument.load(reference_path)
        scorer.update(gold, EcEntities.load(prediction_path) if prediction_path else EcEntities.empty())
    return FunsdResult(
        benchmark="ec-funsd",
        corpus=scorer.compute(),
        documents={score.doc_id: score.panel() for score in scorer.documents},
        overlays={},
        images={},
        missing_predictions=[path.stem for path in pairing.missing_predictions],
        unused_predictions=[path.stem for path in pairing.unused_predictions],
        headlines=EC_FUNSD_HEADLINES,
    )
