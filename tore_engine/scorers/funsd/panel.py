"""What the app's FUNSD / EC-FUNSD panel draws, in one call: the scorer's panel with every form's
overlay and page image, for EC-FUNSD too, and the simulated prediction scored when the user gives
none (the shared sample has gold forms but no model output).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from tore_engine.scorers.funsd.ec_overlay import ec_folder_overlays
from tore_engine.scorers.funsd.score import score_ec_funsd, score_funsd
from tore_engine.scorers.funsd.simulated import simulated_folder

SCORERS = {"funsd": score_funsd, "ec-funsd": score_ec_funsd}


def scored_for_panel(benchmark: str, reference_dir: Path, prediction_dir: Path | None, *, seed: int = 0,
                     version: object = None) -> dict:
    """`{"report": FunsdResult.panel(), "simulation": {"totals": ...} | None}`.

    Every document of the report has its overlay and page image, EC-FUNSD's too (its scorer leaves
    them out, because drawing needs every word's box and scoring does not; its images are FUNSD's,
    `funsd_image_folders`). Without `prediction_dir`, a prediction simulated from the reference with
    `seed` is scored (`version` tells states of the reference folder apart, `simulated_folder`); it
    is written into a temporary folder that is gone when this returns, and named nowhere."""
    if prediction_dir is not None:
        return {"report": _panel(benchmark, reference_dir, prediction_dir), "simulation": None}
    with tempfile.TemporaryDirectory(prefix="tore_funsd_simulated_") as root:
        simulation = simulated_folder(benchmark, reference_dir, seed=seed, version=version, root=Path(root))
        return {"report": _panel(benchmark, reference_dir, simulation.folder), "simulation": {"totals": simulation.totals}}


def _panel(benchmark: str, reference_dir: Path, prediction_dir: Path) -> dict:
    result = SCORERS[benchmark](reference_dir, prediction_dir)
    if benchmark == "ec-funsd":
        overlays, images = ec_folder_overlays(reference_dir, prediction_dir)
        result = replace(result, overlays=overlays, images=images)
    return result.panel()
