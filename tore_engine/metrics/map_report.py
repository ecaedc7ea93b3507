"""mAP as an evaluation keeps it and reports it (docs/cli.md#map-beside-tore).

`MapState` is what the workers' page chunks add up to: the match records of every page
(`PageMatches`, merged in page order) and how many prediction boxes had no score. `MapReport` is
what a user reads: every figure of `summarise` by class name, each page's map, map_50 and map_75,
and report.json's `map` block (`to_json`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from tore_engine.core.memory import give_back_free_memory
from tore_engine.metrics import map_kernel
from tore_engine.metrics.map_types import PAGE_FIELDS, PageMatches
from tore_engine.metrics.mean_average_precision import (
    FIELDS,
    MeanAveragePrecision,
    PageStatistics,
    convention_named,
    summarise,
)

DUAL_TAXONOMY = "dual taxonomy: the two sides have different classes, so no box can match one of its own class"
SWITCHED_OFF = "switched off (--map off)"
PAGE_SUBSET = "a subset of an evaluation's pages: mAP's records are not kept by page, evaluate the pages alone for theirs"
NOTHING_TO_RANK = "no box on either side (after the minimum score): nothing to rank, nothing to find"


def unscored_note(unscored: int, predicted: int) -> str:
    """The one sentence every output gives when mAP had to rank boxes without a score."""
    return (f"{unscored:,} of {predicted:,} prediction boxes have no score: mAP ranks them as score 1.0, as the reference "
            "does, so in file order, and its result depends on the order of the boxes")


_MERGING = threading.Lock()  # a state's runs are merged once, whichever thread asks first


@dataclass(frozen=True)
class MapState:
    """mAP's mergeable state: the records of consecutive runs of pages (`PageMatches`), the
    convention they were matched in, and the prediction boxes counted (`unscored` of them without a
    score, which rank as 1.0 in file order). `merged` puts states' runs one after the other;
    `matches` merges them, exactly and in order, when first read (1 s at 100,000 pages, which the
    app's first heatmap need not wait for), then keeps the merged run only. `ranked`: the runs are
    one run in ranking order already (a saved evaluation's is; a worker's run is in page order)."""

    convention: str
    runs: tuple[PageMatches, ...]
    predicted: int
    unscored: int
    ranked: bool = False

    @classmethod
    def merged(cls, parts: Sequence["MapState"]) -> "MapState":
        if not parts or len({part.convention for part in parts}) != 1:
            raise ValueError("mAP states merge only in one convention, and at least one is needed")
        return cls(parts[0].convention, tuple(run for part in parts for run in part.runs),
                   sum(part.predicted for part in parts), sum(part.unscored for part in parts), len(parts) == 1 and parts[0].ranked)

    @property
    def matches(self) -> PageMatches:
        """The records of all pages, in ranking order."""
        with _MERGING:
            if not self.ranked:
                runs = list(self.runs)
                object.__setattr__(self, "runs", ())  # so that the merge lets each run go once copied
                compiled = map_kernel.use_score_order(sum(len(run.classes) for run in runs), sum(len(run.page_values) for run in runs))
                object.__setattr__(self, "runs", (PageMatches.merged(runs, compiled),))  # the same records, held once
                object.__setattr__(self, "ranked", True)
                give_back_free_memory()  # the runs' many small arrays (116 MB of PSS at 100,000 pages otherwise)
            return self.runs[0]

    @property
    def boxes(self) -> int:
        """Boxes of both sides."""
        with _MERGING:  # not while `matches` merges the runs
            return int(sum(run.boxes.sum() for run in self.runs))

    def report(self, classes: Sequence[str]) -> "MapReport":
        """Every figure, classes named by their taxonomy index into `classes`."""
        return MapReport.from_result(summarise(self.matches, convention_named(self.convention)), classes, self.predicted, self.unscored)


@dataclass(frozen=True, repr=False)
class MapReport:
    """COCO-style mAP of an evaluation: `figures` holds COCOeval's twelve (`FIELDS`, None where
    undefined), `per_class` each class with a box on either side -> (AP, AR@100), `pages` each
    page's (map, map_50, map_75) in page order (NaN: the page has no reference box)."""

    convention: str
    figures: dict[str, float | None]
    per_class: dict[str, tuple[float | None, float | None]]
    pages: np.ndarray  # (pages, 3) float64
    page_stats: dict[str, PageStatistics]
    predicted: int  # prediction boxes
    unscored: int  # of them without a score: ranked as 1.0, in file order

    @classmethod
    def from_result(cls, result: MeanAveragePrecision, classes: Sequence[str], predicted: int, unscored: int) -> "MapReport":
        return cls(result.convention, {field: getattr(result, field) for field in FIELDS},
                   {classes[label]: values for label, values in result.per_class.items()},
                   result.pages, result.page_stats, predicted, unscored)

    @property
    def map(self) -> float | None:
        return self.figures["map"]

    @property
    def map_50(self) -> float | None:
        return self.figures["map_50"]

    @property
    def map_75(self) -> float | None:
        return self.figures["map_75"]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name} {_shown(self.figures[field])}" for name, field in zip(("mAP", "mAP50", "mAP75"), PAGE_FIELDS))
        return f"MapReport({self.convention}: {shown}; {len(self.per_class)} classes, {len(self.pages):,} pages)"

    def page_columns(self, selected: slice = slice(None)) -> list[list[float | None]]:
        """The pages' map, map_50 and map_75 (of the pages `selected` slices), a column each, None
        where undefined: pages.csv's mAP cells."""
        chosen = self.pages[selected]
        values = chosen.astype(object)
        values[np.isnan(chosen)] = None
        return values.T.tolist()

    def to_json(self) -> dict:
        """report.json's `map` block (docs/cli.md#map-beside-tore)."""
        return {
            "convention": self.convention,
            **self.figures,
            "per_class": {name: {"ap": ap, "ar_100": ar} for name, (ap, ar) in self.per_class.items()},
            "page_stats": {field: asdict(self.page_stats[field]) for field in PAGE_FIELDS},
        }


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"
