"""Benchmark: `tore score docile` against the official evaluator (docile-benchmark 0.3.5).

Writes 1,000 synthetic one-page documents of about 250 OCR words each (a deterministic generator,
in a temporary folder) with KILE and LIR golds and predictions, scores them with both
implementations in one run, checks that every headline, same-text and per-fieldtype metric is
equal, and prints the time of each and the speed ratio.

    .venv/bin/pip install docile-benchmark==0.3.5     # part of the 'bench' extra
    .venv/bin/python benchmarks/bench_docile.py [--documents 1000] [--seed 0]

Times include imports and reading the files. The machine is shared, so both wall-clock and CPU
time are printed.
"""

from __future__ import annotations

import argparse
import json
import math
import string
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

KILE_TYPES = ["document_id", "date_issue", "date_due", "vendor_name", "customer_billing_name",
              "amount_total_gross", "amount_due", "currency_code_amount_due", "payment_terms", "tax_detail_rate"]
LIR_COLUMNS = ["line_item_description", "line_item_quantity", "line_item_unit_price_gross", "line_item_amount_gross"]
LINES, WORDS_PER_LINE, HEADER_LINES = 25, 10, 12  # 250 words; lines below the header form the table
SPLIT = "bench"


def generate(folder: Path, documents: int, seed: int) -> tuple[Path, Path, Path]:
    """Write the dataset (annotations, OCR, split file) and the KILE and LIR prediction files."""
    rng = np.random.default_rng(seed)
    for sub in ("annotations", "ocr"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    docids = [f"bench{k:05d}" for k in range(documents)]
    kile_predictions, lir_predictions = {}, {}
    for docid in docids:
        words = _words(rng)
        kile_golds = _kile_golds(rng, words)
        lir_golds = _lir_golds(words)
        annotation = {
            "field_extractions": kile_golds,
            "line_item_extractions": lir_golds,
            "line_item_headers": [],
            "metadata": {"page_count": 1, "page_sizes_at_200dpi": [[1700, 2200]]},
        }
        (folder / "annotations" / f"{docid}.json").write_text(json.dumps(annotation))
        (folder / "ocr" / f"{docid}.json").write_text(json.dumps(_ocr(words)))
        kile_predictions[docid] = _kile_predictions(rng, kile_golds, words)
        lir_predictions[docid] = _lir_predictions(rng, lir_golds)
    (folder / f"{SPLIT}.json").write_text(json.dumps(docids))
    kile_file, lir_file = folder / "kile.json", folder / "lir.json"
    kile_file.write_text(json.dumps(kile_predictions))
    lir_file.write_text(json.dumps(lir_predictions))
    return folder, kile_file, lir_file


def _words(rng: np.random.Generator) -> list[list[dict]]:
    """LINES lines of WORDS_PER_LINE words: text and snapped box [l, t, r, b] (relative)."""
    alphabet = string.ascii_letters + string.digits + ".,-/"
    lines = []
    for row in range(LINES):
        top = 0.03 + row * 0.037
        x = 0.03 + rng.uniform(0, 0.02)
        line = []
        for _ in range(WORDS_PER_LINE):
            n = int(rng.integers(1, 10))
            width = n * rng.uniform(0.006, 0.009)
            text = "".join(rng.choice(list(alphabet), n))
            line.append({"text": text, "box": [x, top, x + width, top + 0.012]})
            x += width + rng.uniform(0.008, 0.02)
        lines.append(line)
    return lines


def _ocr(words: list[list[dict]]) -> dict:
    def word(w: dict) -> dict:
        l, t, r, b = w["box"]
        return {"value": w["text"], "confidence": 1.0, "geometry": [[l - 0.002, t - 0.002], [r + 0.002, b + 0.002]],
                "snapped_geometry": [[l, t], [r, b]]}

    lines = [{"geometry": [[0, 0], [1, 1]], "words": [word(w) for w in line]} for line in words]
    return {"pages": [{"page_idx": 0, "blocks": [{"geometry": [[0, 0], [1, 1]], "lines": lines}]}]}


def _span_field(line: list[dict], first: int, count: int, fieldtype: str, pad: float = 0.003) -> dict:
    span = line[first:first + count]
    box = [span[0]["box"][0] - pad, span[0]["box"][1] - pad, span[-1]["box"][2] + pad, span[0]["box"][3] + pad]
    return {"bbox": [min(max(v, 0.0), 1.0) for v in box], "page": 0, "fieldtype": fieldtype,
            "text": " ".join(w["text"] for w in span)}


def _kile_golds(rng: np.random.Generator, words: list[list[dict]]) -> list[dict]:
    golds = []
    for row in rng.choice(HEADER_LINES, 11, replace=False):
        first = int(rng.integers(0, WORDS_PER_LINE - 3))
        golds.append(_span_field(words[row], first, int(rng.integers(1, 4)), str(rng.choice(KILE_TYPES))))
    return golds


def _lir_golds(words: list[list[dict]]) -> list[dict]:
    golds = []
    for item, row in enumerate(range(HEADER_LINES + 1, LINES), start=1):
        for column, (first, count) in zip(LIR_COLUMNS, [(0, 3), (4, 1), (6, 1), (8, 2)]):
            golds.append(_span_field(words[row], first, count, column) | {"line_item_id": item})
    return golds


def _perturbed(rng: np.random.Generator, gold: dict, fieldtypes: list[str]) -> dict | None:
    """A prediction of `gold`: exact, other padding, shrunk (misses characters), wrong type, or none."""
    roll = rng.random()
    l, t, r, b = gold["bbox"]
    prediction = {"bbox": [l, t, r, b], "page": 0, "fieldtype": gold["fieldtype"], "text": gold["text"]}
    if roll < 0.55:
        pad = rng.uniform(-0.001, 0.001)
        prediction["bbox"] = [max(l - pad, 0.0), t, min(r + pad, 1.0), b]
    elif roll < 0.7:
        prediction["bbox"] = [l + (r - l) * rng.uniform(0.1, 0.4), t, r, b]
    elif roll < 0.8:
        prediction["fieldtype"] = str(rng.choice(fieldtypes))
    elif roll < 0.85:
        prediction["text"] = gold["text"][::-1]
    elif roll < 0.9:
        return None
    return prediction


def _with_score(rng: np.random.Generator, prediction: dict) -> dict:
    score = round(float(rng.uniform(0, 1)), 2)  # two decimals: many ties across documents
    return prediction | {"score": score, "use_only_for_ap": score <= 0.1}


def _kile_predictions(rng: np.random.Generator, golds: list[dict], words: list[list[dict]]) -> list[dict]:
    predictions = [p for gold in golds if (p := _perturbed(rng, gold, KILE_TYPES)) is not None]
    predictions += predictions[:2]  # duplicates: at most one copy can match
    for _ in range(5):  # random extra boxes
        row, first = int(rng.integers(0, LINES)), int(rng.integers(0, WORDS_PER_LINE - 1))
        predictions.append(_span_field(words[row], first, 1, str(rng.choice(KILE_TYPES))))
    return [_with_score(rng, p) for p in predictions]


def _lir_predictions(rng: np.random.Generator, golds: list[dict]) -> list[dict]:
    """Line items renumbered, some merged with the next one, fields perturbed."""
    items = sorted({g["line_item_id"] for g in golds})
    new_id = {item: 100 + k for k, item in enumerate(rng.permutation(items))}
    for item in items[:-1]:
        if rng.random() < 0.15:
            new_id[item + 1] = new_id[item]
    predictions = []
    for gold in golds:
        prediction = _perturbed(rng, gold, LIR_COLUMNS)
        if prediction is not None:
            predictions.append(_with_score(rng, prediction | {"line_item_id": new_id[gold["line_item_id"]]}))
    return predictions


def score_with_tore(dataset: Path, kile: Path, lir: Path) -> dict:
    from tore_engine.scorers.docile import score_docile

    result = score_docile(dataset, SPLIT, kile, lir)
    return _collect(lambda task, **kw: getattr(result, task).metrics(**kw).to_json(),
                    {task: getattr(result, task).table.fieldtypes() for task in ("kile", "lir")})


def score_with_official(dataset: Path, kile: Path, lir: Path) -> dict:
    from docile.dataset import CachingConfig, Dataset, load_predictions
    from docile.evaluation import evaluate_dataset

    data = Dataset(SPLIT, dataset, cache_images=CachingConfig.OFF)
    result = evaluate_dataset(data, load_predictions(kile), load_predictions(lir))

    def metrics(task: str, same_text: bool = False, fieldtype: str | None = None) -> dict:
        return result.get_metrics(task, same_text=same_text, fieldtype=fieldtype or "")

    fieldtypes = {
        task: sorted({f.fieldtype for m in result.task_to_docid_to_matching[task].values()
                      for f in [*m.predictions, *m.annotations]})
        for task in ("kile", "lir")
    }
    return _collect(metrics, fieldtypes)


def _collect(metrics, fieldtypes: dict[str, list[str]]) -> dict:
    return {
        task: {
            "metrics": metrics(task),
            "metrics_same_text": metrics(task, same_text=True),
            "per_fieldtype": {ft: metrics(task, fieldtype=ft) for ft in fieldtypes[task]},
        }
        for task in ("kile", "lir")
    }


def differences(ours: dict, official: dict, path: str = "") -> list[str]:
    """Every leaf that differs by more than 1e-9 (or is missing on one side)."""
    if isinstance(official, dict):
        if set(ours) != set(official):
            return [f"{path}: keys {sorted(set(ours) ^ set(official))}"]
        return [d for key in official for d in differences(ours[key], official[key], f"{path}.{key}")]
    if isinstance(official, float) and math.isclose(ours, official, rel_tol=0, abs_tol=1e-9):
        return []
    return [] if ours == official else [f"{path}: tore {ours} != official {official}"]


def timed(function, *args) -> tuple[dict, tuple[float, float]]:
    """The result, and the (wall-clock, CPU) seconds it took, imports included."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, (time.perf_counter() - wall, time.process_time() - cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dataset, kile, lir = generate(Path(tmp) / "dataset", args.documents, args.seed)
        ours, tore_seconds = timed(score_with_tore, dataset, kile, lir)
        official, official_seconds = timed(score_with_official, dataset, kile, lir)
    diff = differences(ours, official)
    for task in ("kile", "lir"):
        print(f"{task.upper()}: {json.dumps(ours[task]['metrics'])}")
    print(f"documents: {args.documents}, seed: {args.seed}")
    print(f"{'':24}{'wall':>9}{'CPU':>9}")
    print(f"{'tore score docile':24}{tore_seconds[0]:8.2f}s{tore_seconds[1]:8.2f}s")
    print(f"{'docile-benchmark 0.3.5':24}{official_seconds[0]:8.2f}s{official_seconds[1]:8.2f}s")
    print(f"speed ratio: {official_seconds[0] / tore_seconds[0]:.1f}x wall-clock, "
          f"{official_seconds[1] / tore_seconds[1]:.1f}x CPU time")
    print("numbers equal (headline, same-text, per fieldtype; abs 1e-9):", "yes" if not diff else "NO")
    for line in diff[:20]:
        print("  ", line)
    return 0 if not diff else 1


if __name__ == "__main__":
    sys.exit(main())
