"""Which classes the matrix has, and which matrix index each side's labels get.

Single taxonomy: both sides share one class list. Dual taxonomy: the matrix runs over the union of
the two lists, each prefixed with its side's name, so that a model can be scored against a dataset
with other classes, or against another model (docs/algorithm.md#taxonomies, docs/formats.md#class-names).

A format whose labels come from one fixed set declares that set as the layout's `vocabulary`
(Docling's item labels for DoclingDocuments and docling-eval datasets, DocTags' tag names): two
sides of one vocabulary are one taxonomy, whatever labels each happens to use, so `auto` gives
single mode there, with the vocabulary's class order (a relabelled item, or a reference of one
document against a folder, no longer turns the matrix dual).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tore_engine.core.errors import InputError, InputWarning
from tore_engine.core.layout import LayoutSet, Page, PageSource, named

BACKGROUND = "Background"
MODES = ("auto", "single", "dual")
DOCLING = "docling"  # docling-core's DocItemLabel values, in its order (docling-core 2.104)
DOCTAGS = "doctags"  # DocTags' located tag names: docling-core's DocumentToken and TableToken, section headers by level
VOCABULARIES: dict[str, tuple[str, ...]] = {
    DOCLING: (
        "caption", "chart", "footnote", "formula", "list_item", "page_footer", "page_header", "picture", "section_header", "table",
        "text", "title", "document_index", "code", "checkbox_selected", "checkbox_unselected", "form", "key_value_region",
        "grading_scale", "handwritten_text", "empty_value", "paragraph", "reference", "field_region", "field_heading", "field_item",
        "field_key", "field_value", "field_hint", "marker",
    ),
    DOCTAGS: (
        "title", *(f"section_header_level_{level}" for level in range(1, 7)), "text", "paragraph", "list_item", "ordered_list",
        "unordered_list", "caption", "footnote", "formula", "code", "picture", "chart", "otsl", "table", "page_header", "page_footer",
        "document_index", "form", "key_value_region", "checkbox_selected", "checkbox_unselected", "reference", "handwritten_text",
        "smiles", "inline", "ched", "rhed", "srow", "fcel", "ecel", "lcel", "ucel", "xcel", "nl", "column_header", "row_header",
        "shed", "data",
    ),
}  # fmt: skip
MAX_CLASSES = 2048  # a dense K x K report beyond this is tens of megabytes a matrix and unreadable


@dataclass(frozen=True)
class Taxonomy:
    """The matrix classes (index 0 = Background) and each side's label -> class index."""

    mode: str  # "single" or "dual"
    classes: list[str]
    reference_index: dict[str, int]
    prediction_index: dict[str, int]
    prediction_vocabulary: str | None = None  # the prediction's declared vocabulary (`VOCABULARIES`)

    @property
    def size(self) -> int:
        return len(self.classes)


def apply_label_map(layout: LayoutSet, label_map: dict[str, str]) -> LayoutSet:
    """Rename or merge classes on one side, before evaluation; the declared order is kept."""
    if not label_map:
        return layout
    pages: Sequence[Page]
    if isinstance(layout.pages, PageSource):
        pages = layout.pages.relabelled(label_map)
    else:
        pages = [replace(page, labels=[label_map.get(label, label) for label in page.labels]) for page in layout.pages]
    taxonomy = None
    if layout.taxonomy is not None:
        mapped = [label_map.get(label, label) for label in layout.taxonomy]
        taxonomy = list(dict.fromkeys(mapped))
    return replace(layout, pages=pages, taxonomy=taxonomy)


def label_map_warnings(label_map: dict[str, str], reference: LayoutSet, prediction: LayoutSet) -> list[InputWarning]:
    """A warning for every label-map key that is no label of either side (used or declared): most
    likely a misspelling, which would otherwise leave a class unmerged without a word."""
    if not label_map:
        return []  # the labels in use are not gathered for nothing (17 ms at 10,000 pages in columns)
    known = {label for side in (reference, prediction) for label in (*side.class_list(), *side.labels_in_use())}
    return [
        InputWarning(None, None, None, f"label map key {key!r} is no label of the reference or the prediction; it had no effect")
        for key in label_map
        if key not in known
    ]


def _check_side(layout: LayoutSet, side: str) -> None:
    """`Background` names the unlabelled pixels (row and column 0): a box labelled so would become
    a second class of that name, whose pixels count as Foreground in the reduced view."""
    if BACKGROUND in layout.class_list():
        raise InputError(
            f"the {side} uses the label {BACKGROUND!r}, which names the unlabelled pixels (row and column 0); "
            f'rename it with --label-map (e.g. {{"{BACKGROUND}": "Background-box"}}) or drop those boxes',
            file=layout.source,
        )


def _check_distinct(taxonomy: Taxonomy, reference: LayoutSet, prediction: LayoutSet) -> None:
    """Two classes with one name (dual prefixes can make `a` + `b_c` and `a_b` + `c` meet) would be
    indistinguishable in every report and chart."""
    owners: dict[str, dict[int, str]] = {}
    for side, table in (("reference", taxonomy.reference_index), ("prediction", taxonomy.prediction_index)):
        for label, index in table.items():
            owners.setdefault(taxonomy.classes[index], {}).setdefault(index, f"{side} label {label!r}")
    collisions = [f"{name!r} ({' and '.join(who.values())})" for name, who in owners.items() if len(who) > 1]
    if collisions:
        raise InputError(
            f"class names collide in the {taxonomy.mode}-taxonomy matrix: {'; '.join(collisions)}; rename a "
            "label with --label-map, or give the two files distinct names",
            file=f"{reference.source} and {prediction.source}",
        )


def _dual_prefixes(reference: LayoutSet, prediction: LayoutSet) -> tuple[str, str]:
    if reference.name == prediction.name:
        return "reference", "prediction"
    return reference.name, prediction.name


def shared_vocabulary(reference: LayoutSet, prediction: LayoutSet) -> str | None:
    """The vocabulary both sides declare, if they declare the same one."""
    return reference.vocabulary if reference.vocabulary is not None and reference.vocabulary == prediction.vocabulary else None


def in_vocabulary_order(labels: set[str], vocabulary: str | None) -> list[str]:
    """`labels` in the vocabulary's order, any it does not list after them, sorted (a newer
    library's label, say); sorted when there is no such vocabulary."""
    order = {label: k for k, label in enumerate(VOCABULARIES.get(vocabulary or "", ()))}
    return sorted(labels, key=lambda label: (order.get(label, len(order)), label))


def _single_classes(reference: LayoutSet, prediction: LayoutSet) -> list[str]:
    """The single-taxonomy matrix's classes, Background aside: for two sides of one vocabulary,
    every class either side declares or uses, in the vocabulary's order; else the reference's
    declared ones, else the sorted union of both sides'."""
    vocabulary = shared_vocabulary(reference, prediction)
    if vocabulary is not None:
        return in_vocabulary_order({*reference.class_list(), *reference.labels_in_use(), *prediction.class_list()}, vocabulary)
    if reference.taxonomy is not None:
        return list(reference.taxonomy)
    return sorted(set(reference.labels_in_use()) | set(prediction.class_list()))


def _single(reference: LayoutSet, prediction: LayoutSet, classes: list[str]) -> Taxonomy:
    known = set(classes)
    unknown = [label for label in prediction.class_list() if label not in known]
    if unknown:
        raise InputError(
            "single-taxonomy mode, but the prediction uses labels that the reference taxonomy "
            f"does not list: {named(unknown)}; use --taxonomy dual or --label-map",
            file=prediction.source,
        )
    index = {label: position + 1 for position, label in enumerate(classes)}
    return Taxonomy("single", [BACKGROUND, *classes], index, index, prediction.vocabulary)


def _dual(reference: LayoutSet, prediction: LayoutSet) -> Taxonomy:
    reference_prefix, prediction_prefix = _dual_prefixes(reference, prediction)
    reference_classes = reference.class_list()
    prediction_classes = prediction.class_list()
    reference_index = {label: i + 1 for i, label in enumerate(reference_classes)}
    offset = 1 + len(reference_classes)
    prediction_index = {label: offset + i for i, label in enumerate(prediction_classes)}
    classes = [
        BACKGROUND,
        *(f"{reference_prefix}_{label}" for label in reference_classes),
        *(f"{prediction_prefix}_{label}" for label in prediction_classes),
    ]
    return Taxonomy("dual", classes, reference_index, prediction_index, prediction.vocabulary)


def choose_mode(reference: LayoutSet, prediction: LayoutSet) -> str:
    """`auto`: single when both sides declare one vocabulary, or when every prediction label (used
    or declared) is a reference class."""
    if shared_vocabulary(reference, prediction) is not None:
        return "single"
    return "single" if set(prediction.class_list()) <= set(reference.class_list()) else "dual"


def resolve_taxonomy(reference: LayoutSet, prediction: LayoutSet, mode: str = "auto") -> Taxonomy:
    if mode not in MODES:
        raise InputError(f"unknown taxonomy mode {mode!r}; use one of {', '.join(MODES)}")
    _check_side(reference, "reference")
    _check_side(prediction, "prediction")
    if mode == "auto":
        mode = choose_mode(reference, prediction)
    single = _single_classes(reference, prediction) if mode == "single" else []
    size = 1 + (len(single) if mode == "single" else len(reference.class_list()) + len(prediction.class_list()))
    if size > MAX_CLASSES:  # before any work per class
        raise InputError(
            f"the {mode}-taxonomy matrix would have {size:,} classes, more than {MAX_CLASSES}; "
            "merge classes with --label-map"
        )
    taxonomy = _single(reference, prediction, single) if mode == "single" else _dual(reference, prediction)
    _check_distinct(taxonomy, reference, prediction)
    return taxonomy
