"""`python -m tore_engine.demo --out tore_engine/demo/data`: (re)generate the demo corpus."""

import argparse
from pathlib import Path

from tore_engine.demo.corpus import generate


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tore_engine.demo",
        description="Generate the synthetic demo corpus (PDFs, ground truth, two simulated models).",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("tore_engine/demo/data"), help="output folder (default: tore_engine/demo/data)"
    )
    args = parser.parse_args()
    for path in generate(args.out):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
