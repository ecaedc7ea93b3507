"""The official prediction checks of docile-benchmark 0.3.5, in its order and with its messages
(docs/benchmarks.md#docile-validation), so that a file rejected by the DocILE leaderboard is rejected here too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from tore_engine.core.errors import InputError
from tore_engine.scorers.docile.dataset import DocileDataset, Field

MAX_PREDICTIONS_PER_PAGE = 1000
Predictions = Mapping[str, Sequence[Field]]


def tasks_to_evaluate(task_predictions: Mapping[str, Predictions | None]) -> dict[str, Predictions]:
    """Only tasks with at least one prediction in total are evaluated (the others give null)."""
    return {
        task: predictions
        for task, predictions in task_predictions.items()
        if predictions and sum(len(fields) for fields in predictions.values()) > 0
    }


def validate_predictions(
    dataset: DocileDataset,
    task_predictions: Mapping[str, Predictions],
    files: Mapping[str, str] | None = None,
) -> None:
    """Raise `InputError` with the official message for the first failing check.

    `task_predictions` holds only the tasks to evaluate (see `tasks_to_evaluate`); `files` names
    each task's prediction file for the error message.
    """
    files = files or {}
    if not task_predictions:
        raise InputError("You need to provide at least one prediction for at least one of the tasks.")

    def fail(task: str, problem: str) -> InputError:
        return InputError(f"{task.upper()}: {problem}", file=files.get(task))

    def all_fields(task: str) -> list[Field]:
        return [field for fields in task_predictions[task].values() for field in fields]

    for task, predictions in task_predictions.items():
        for docid, fields in predictions.items():
            if any(n > MAX_PREDICTIONS_PER_PAGE for n in Counter(f.page for f in fields).values()):
                raise fail(
                    task,
                    f"Exceeded limit of {MAX_PREDICTIONS_PER_PAGE} predictions per page for doc: {docid}",
                )
    for task in task_predictions:
        if any(field.fieldtype is None for field in all_fields(task)):
            raise fail(task, "Prediction is missing 'fieldtype'.")
    for task in task_predictions:
        if not all(_has_valid_relative_coords(field.bbox) for field in all_fields(task)):
            raise fail(task, "Prediction bbox does not have valid relative coordinates.")
    for task in task_predictions:
        with_line_item = [field.line_item_id is not None for field in all_fields(task)]
        if task == "kile" and any(with_line_item):
            raise fail(task, "Prediction has extra 'line_item_id'.")
        if task == "lir" and not all(with_line_item):
            raise fail(task, "Prediction is missing 'line_item_id'.")
    for task in task_predictions:
        with_score = [field.score is not None for field in all_fields(task)]
        if any(with_score) and not all(with_score):
            raise fail(task, "Either all or no predictions should have 'score' defined")
    for task, predictions in task_predictions.items():
        extra = len(set(predictions).difference(dataset.docids))
        missing = len(set(dataset.docids).difference(predictions))
        if extra:
            raise fail(task, f"Predictions provided for {extra} documents not in the dataset {dataset.name}.")
        if missing:
            raise fail(
                task,
                f"Predictions not provided for {missing}/{len(dataset.documents)} documents. "
                "Pass an empty list of predictions for these documents if this was intended.",
            )


def _has_valid_relative_coords(bbox: tuple[float, float, float, float]) -> bool:
    left, top, right, bottom = bbox
    return 0 <= left <= right <= 1 and 0 <= top <= bottom <= 1
