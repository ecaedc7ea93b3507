"""Run docling-metrics-layout 0.17.0's mAP (`MAPLayoutEvaluator.evaluate_dataset`, the evaluator its
`LayoutMetrics.evaluate_dataset` runs) unmodified on pages given as JSON, in the Python that has it.

The tests start it as a subprocess of the reference's own environment (with torch, torchmetrics and
faster-coco-eval, which the project does not install), since importing torch costs about 12 s:

    REFERENCE_PYTHON tests/metrics/docling_reference.py < cases.json > results.json

Input: a list of cases `{"taxonomy": [names], "pages": [{"id", "reference": [[class, x1, y1, x2, y2]],
"prediction": [[class, x1, y1, x2, y2, score or null]]}]}` (class = index into the taxonomy). Output:
for each case `{"evaluation": MAPDatasetLayoutEvaluation.model_dump() (float32 values widened, -1
where undefined), "cpu_seconds": the CPU time of `evaluate_dataset` alone}`.
"""

from __future__ import annotations

import json
import logging
import sys
import time


def evaluate(case: dict) -> dict:
    from docling_metrics_layout.layout_types import BboxResolution, LayoutMetricSample
    from docling_metrics_layout.map.map_layout_evaluator import MAPLayoutEvaluator

    names = {k + 1: name for k, name in enumerate(case["taxonomy"])}
    samples = [
        LayoutMetricSample(
            id=page["id"], page_width=1, page_height=1,
            page_resolution_a=[BboxResolution(category_id=box[0] + 1, bbox=box[1:5]) for box in page["reference"]],
            page_resolution_b=[BboxResolution(category_id=box[0] + 1, bbox=box[1:5], score=box[5]) for box in page["prediction"]],
        )
        for page in case["pages"]
    ]
    start = time.process_time()
    evaluation = MAPLayoutEvaluator(names).evaluate_dataset(samples)
    return {"evaluation": evaluation.model_dump(), "cpu_seconds": time.process_time() - start}


def main() -> int:
    logging.disable(logging.WARNING)
    cases = json.load(sys.stdin)
    json.dump([evaluate(case) for case in cases], sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
