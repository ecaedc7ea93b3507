"""Build the TIDE vectors: cases of boxes, and what tidecv 1.0.1 (run unmodified in its own
environment, `tidecv_reference.py`) decides on them. Run from the repository's root:

    python3 -m venv /tmp/tidecv-venv && /tmp/tidecv-venv/bin/pip install tidecv==1.0.1
    .venv/bin/python -m tests.vectors.tide.build_vectors [--tidecv /tmp/tidecv-venv/bin/python]

Each built case is a file `<name>.json` here: {"case": the boxes (the input format of
`tidecv_reference.py`), "tidecv": its result}. A real data set's file holds no boxes, only where
they come from ({"source": ...}: the test reads them with tore_engine, as `tore evaluate` does, from
../shared/data or the demo) and tidecv's result.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
LAYOUTS = ROOT.parent / "shared" / "data" / "layouts"
# Real model-against-model sets: the reference side, the prediction side, the format, the COCO images file.
SOURCES = {
    "real_docling_documents": {"reference": "docling_documents/pre_heron", "prediction": "docling_documents/heron", "format": "docling"},
    "real_coco_layout_models": {"reference": "docling_two_layout_models/coco_results_pre_heron_default_layout_model.json",
                                "prediction": "docling_two_layout_models/coco_results_heron_layout_model.json", "format": "coco",
                                "images": "docling_two_layout_models/coco_images_and_categories.json"},
    "demo_model_a": {"reference": "demo:reference.json", "prediction": "demo:model_a.json", "format": "tore"},
}


def page(reference: list, prediction: list) -> dict:
    return {"reference": reference, "prediction": prediction}


def handmade() -> dict[str, dict]:
    """Cases made to show one rule each (the box of class 1 at 0..10 is the usual reference)."""
    r = [1, 0.0, 0.0, 10.0, 10.0]
    return {
        "only_cls": {"pages": [page([r], [[2, 0.0, 0.0, 10.0, 10.0, 0.9]])]},
        "only_loc": {"pages": [page([r], [[1, 0.0, 0.0, 10.0, 3.0, 0.9]])]},
        "only_both": {"pages": [page([r], [[2, 0.0, 0.0, 10.0, 3.0, 0.9]])]},
        "only_dupe": {"pages": [page([r], [[1, 0.0, 0.0, 10.0, 10.0, 0.9], [1, 0.0, 0.0, 10.0, 9.0, 0.8]])]},
        "only_bkg": {"pages": [page([r], [[1, 0.0, 0.0, 10.0, 10.0, 0.9], [1, 50.0, 50.0, 60.0, 60.0, 0.95]])]},
        "only_miss": {"pages": [page([r, [1, 40.0, 40.0, 50.0, 50.0]], [[1, 0.0, 0.0, 10.0, 10.0, 0.9]])]},
        # a box and a prediction whose areas underflow (sides of 1e-170): their IoU is 0 / 0, NaN
        "underflowing_areas": {"pages": [page([[0, 1e-170, 1e-170, 2e-170, 2e-170], [1, 10.0, 10.0, 50.0, 50.0]],
                                              [[0, 1e-170, 1e-170, 2e-170, 2e-170, 0.9], [1, 12.0, 12.0, 50.0, 50.0, 0.8]])]},
        # IoU exactly 0.5 with a free box matches; exactly 0.5 with a taken box is Loc (tested before Dupe);
        # exactly 0.1 is Loc, not Bkg; two boxes of equal IoU: the first is taken.
        "iou_boundaries": {"pages": [
            page([r], [[1, 0.0, 0.0, 10.0, 5.0, 0.9], [1, 0.0, 5.0, 10.0, 10.0, 0.8]]),
            page([r], [[1, 0.0, 0.0, 10.0, 1.0, 0.9], [2, 0.0, 0.0, 10.0, 0.5, 0.8]]),
            page([r, [1, 0.0, 0.0, 10.0, 10.0]], [[1, 0.0, 0.0, 10.0, 10.0, 0.9], [1, 0.0, 0.0, 10.0, 10.0, 0.9],
                                                 [1, 0.0, 0.0, 10.0, 10.0, 0.9]]),
            page([[1, 0.0, 0.0, 10.0, 10.0], [2, 0.0, 0.0, 10.0, 10.0]], [[3, 0.0, 0.0, 10.0, 10.0, 0.5], [3, 0.0, 0.0, 10.0, 10.0, 0.5]]),
        ]},
        # Two Cls/Loc errors on one free box: only the first (highest score, earliest on a tie) is fixed.
        "best_fix": {"pages": [page([r], [[1, 0.0, 0.0, 10.0, 3.0, 0.7], [2, 0.0, 0.0, 10.0, 10.0, 0.7], [1, 0.0, 0.0, 3.0, 10.0, 0.9]])]},
        "unscored": {"pages": [page([r, [2, 20.0, 20.0, 30.0, 30.0]], [[1, 0.0, 0.0, 10.0, 9.0, None], [1, 0.0, 0.0, 10.0, 10.0, None],
                                                                       [2, 20.0, 20.0, 30.0, 31.0, None]]),
                               page([r], [[1, 50.0, 50.0, 60.0, 60.0, None], [1, 0.0, 0.0, 10.0, 10.0, None]])]},
        "empty_pages": {"pages": [page([], [[1, 0.0, 0.0, 10.0, 10.0, 0.9]]), page([r], []), page([], []),
                                  page([r], [[1, 0.0, 0.0, 10.0, 10.0, 0.8]])]},
        "class_only_predicted": {"pages": [page([r], [[1, 0.0, 0.0, 10.0, 10.0, 0.9], [3, 30.0, 30.0, 40.0, 40.0, 0.8]])]},
        "no_reference_box": {"pages": [page([], [[1, 0.0, 0.0, 10.0, 10.0, 0.9]]), page([], [])]},
        "no_prediction_box": {"pages": [page([r], []), page([r], [])]},
    }


def random_case(rng: np.random.Generator, pages: int, classes: int, boxes: int, *, grid: bool, unscored: float = 0.2,
                scores: tuple[float, ...] | None = None) -> dict:
    """Pages of random reference boxes and predictions near them (jittered, relabelled, repeated)
    and elsewhere; on a grid of integers (many equal IoUs) or anywhere; scores from `scores`
    (ties) or uniform, `unscored` of them none."""
    out = []
    for _ in range(pages):

        def box() -> list[float]:
            x, y = (rng.integers(0, 50, 2) if grid else rng.uniform(0, 50, 2)).tolist()
            w, h = (rng.integers(1, 30, 2) if grid else rng.uniform(1, 30, 2)).tolist()
            return [float(x), float(y), float(x + w), float(y + h)]

        references = [[int(rng.integers(1, classes + 1)), *box()] for _ in range(int(rng.integers(0, boxes)))]
        predictions = []
        for _ in range(int(rng.integers(0, boxes + 3))):
            if references and rng.random() < 0.6:
                near = references[int(rng.integers(len(references)))]
                shift = (rng.integers(-3, 4, 4) if grid else rng.normal(0, 2, 4)).tolist()
                corners = [float(value + delta) for value, delta in zip(near[1:], shift)]
                if corners[2] <= corners[0] or corners[3] <= corners[1]:
                    corners = near[1:]
                label = near[0] if rng.random() < 0.7 else int(rng.integers(1, classes + 1))
            else:
                corners, label = box(), int(rng.integers(1, classes + 1))
            score = None if rng.random() < unscored else float(rng.choice(scores)) if scores else float(rng.random())
            predictions.append([label, *corners, score])
        out.append(page(references, predictions))
    return {"pages": out}


def random_cases() -> dict[str, dict]:
    rng = np.random.default_rng(20261204)
    cases = {f"mixed_grid_{k}": random_case(rng, 25, 4, 8, grid=True, scores=(0.3, 0.5, 0.7, 0.9)) for k in range(4)}
    cases |= {f"mixed_real_{k}": random_case(rng, 25, 5, 10, grid=False) for k in range(4)}
    cases["all_unscored"] = random_case(rng, 20, 3, 8, grid=True, unscored=1.0)
    cases["over_100_a_page"] = random_case(rng, 3, 4, 140, grid=True, scores=(0.2, 0.4, 0.6, 0.8, 1.0))
    return cases


def real_cases() -> dict[str, dict]:
    """The real sets' boxes as `tore evaluate` hands them to TIDE (`case_of_source`)."""
    from tests.vectors.tide.cases import case_of_source

    return {name: case_of_source(source) for name, source in SOURCES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tidecv", default="/tmp/tidecv-venv/bin/python", help="the Python that has tidecv 1.0.1")
    args = parser.parse_args()
    built = handmade() | random_cases()
    real = real_cases()
    everything = built | real
    run = subprocess.run([args.tidecv, str(HERE / "tidecv_reference.py")], input=json.dumps(list(everything.values())),
                         capture_output=True, text=True, check=True)
    for (name, case), result in zip(everything.items(), json.loads(run.stdout)):
        vector = {"case": case} if name in built else {"source": SOURCES[name]}
        (HERE / f"{name}.json").write_text(json.dumps({**vector, "tidecv": result}) + "\n")
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
