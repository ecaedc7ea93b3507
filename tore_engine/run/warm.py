"""Compile TORE's kernels into the per-user cache once, so that no run waits for a compile:

    python -m tore_engine.run.warm

(`./run.sh test` does this before the tests.) The page parser, the JSON scan, the sweep kernel and the polygon rasteriser
compile in one process, the page kernel, mAP's two entries and TIDE's box outcome kernel in another (about 9 and 11 s of CPU):
on two cores a cold install takes about the longer half (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor


def warm_all() -> list[str]:
    """Warm the kernels in two processes at once; one line each saying what it took."""
    with ProcessPoolExecutor(max_workers=2) as pool:
        reading, scoring = pool.submit(_warm_reading_kernels), pool.submit(_warm_scoring_kernels)
        return [*scoring.result(), *reading.result()]


def _warm_reading_kernels() -> list[str]:
    """The readers' kernels, and the sweep's and the polygon rasteriser's to even out the halves."""
    from tore_engine.engine import polygons, sweep_kernel
    from tore_engine.formats import page_parser
    from tore_engine.io import json_compiled

    return [page_parser.warm(), json_compiled.warm(), sweep_kernel.warm(), polygons.warm()]


def _warm_scoring_kernels() -> list[str]:
    from tore_engine.engine import page_kernel
    from tore_engine.metrics import box_outcomes, map_kernel  # noqa: F401  (box_outcomes registers TIDE's kernel in map_kernel.OTHER_KERNELS)

    return [page_kernel.warm(), *map_kernel.warm()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tore_engine.run.warm", description="Compile TORE's kernels into their cache folder.")
    parser.parse_args(argv)
    print("\n".join(warm_all()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
