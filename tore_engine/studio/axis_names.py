"""How a dual-taxonomy matrix names its classes on its axes: `<layout name>_<label>`, where a long
layout name (`coco_results_pre_heron_default_layout_model`) would leave no room for the label. The
name is cut to what tells it from the other side's (`…pre_heron_default…_Text` against
`…heron…_Text`), and the full names stay whenever two classes would then look alike. Pure: no
Streamlit, so the matrices, Compare and the score panels share it."""

from __future__ import annotations

import dataclasses
import re

from tore_engine.metrics.matrices import MatrixSet
from tore_engine.plots.plain_text import shortened
from tore_engine.results.evaluation import Evaluation

PREFIX_LENGTH = 16  # characters of a dual-taxonomy side prefix on a matrix's axes
TELLING_LENGTH = 20  # characters of the part of a prefix that tells it from the other side's
WORD_SEPARATORS = "_-. "  # what ends a word of a side prefix


def axis_names(evaluation: Evaluation) -> dict[str, str]:
    """Dual-taxonomy class names whose side prefix (a layout's name) is longer than
    `PREFIX_LENGTH`, as a matrix's axes show them: the prefix reduced to what tells it from the
    other side's (`_telling_part`) and cut in the middle, the label whole
    (`detection_prediction_table` becomes `detecti…ediction_table`; two checkpoints' `…0001…_Text`
    and `…0002…_Text`). Nothing when two would look alike."""
    if evaluation.matrices.mode != "dual":
        return {}
    classes = evaluation.matrices.classes
    sides = [{classes[k]: (classes[k][: len(classes[k]) - len(label) - 1], label) for label, k in index.items()}
             for index in (evaluation.taxonomy.reference_index, evaluation.taxonomy.prediction_index)]
    prefixes = [next(iter(side.values()))[0] if side else "" for side in sides]
    shown = {name: f"{_telling_part(prefix, prefixes[1 - s])}_{label}"
             for s, side in enumerate(sides) for name, (prefix, label) in side.items() if len(prefix) > PREFIX_LENGTH}
    names = {name: short for name, short in shown.items() if short != name}
    return names if len({names.get(name, name) for name in classes}) == len(classes) else {}


def _telling_part(prefix: str, other: str) -> str:
    """`prefix` without the words it shares with `other` at either end (words end at `_`, `-`, `.`
    or a space), an ellipsis where words were left out, cut in the middle to `TELLING_LENGTH`
    characters; cut to `PREFIX_LENGTH` when it shares nothing, whole when all its words are shared."""
    words, others = _words(prefix), _words(other)
    head, tail = _shared_words(words, others), _shared_words(words[::-1], others[::-1])
    kept = words[head: len(words) - tail]
    if not kept:
        return prefix
    if head + tail == 0:
        return shortened(prefix, PREFIX_LENGTH)
    return f"{'…' if head else ''}{shortened(''.join(kept).strip(WORD_SEPARATORS), TELLING_LENGTH)}{'…' if tail else ''}"


def _words(name: str) -> list[str]:
    """`name`'s words, each with the separators that follow it."""
    separator = f"[{re.escape(WORD_SEPARATORS)}]"
    return re.findall(f"{separator}+|[^{re.escape(WORD_SEPARATORS)}]+{separator}*", name)


def _shared_words(words: list[str], others: list[str]) -> int:
    """How many words two names share from their start, compared without their separators."""
    return next((k for k, (a, b) in enumerate(zip(words, others)) if a.strip(WORD_SEPARATORS) != b.strip(WORD_SEPARATORS)),
                min(len(words), len(others)))


def renamed(matrices: MatrixSet, names: dict[str, str]) -> MatrixSet:
    """The matrices with their classes shown as `names` says (`axis_names`)."""
    return dataclasses.replace(matrices, rows=[names.get(row, row) for row in matrices.rows],
                               columns=[names.get(column, column) for column in matrices.columns])
