"""Install size of TORE Studio: the core and each extra, each in a fresh venv (issue 12).

    python benchmarks/bench_install.py [--python python3.11] [--only core,app,...] [--json FILE]

Builds the wheel once (`pip wheel --no-deps` of a copy of the sources), then for each target makes a venv in a temporary
folder (under /tmp, never in the repository), runs `pip install WHEEL[EXTRA]` from PyPI with no
cache (`PIP_CONFIG_FILE=/dev/null` drops this machine's extra local indexes, `--no-cache-dir` its
wheel cache) and records:

- the wall time of that one `pip install` (download, unpack, install; network-bound),
- the number of distributions it added to the fresh venv (pip, upgraded first as run.sh does, and
  setuptools not counted),
- `du -sm` of the venv's site-packages (pip's own ~20 MB included; the empty venv is shown too),
- where PyMuPDF is installed: the time of `import pymupdf` (best of 5) and whether it loads
  onnxruntime (the reason for PyMuPDF < 2).

Besides the extras, it measures PyMuPDF alone at several versions (`pymupdf==X` in a bare venv),
`app without scores` (what the `scores` extra inside `app` costs), and `before`: the single
dependency list of tore-studio before issue 12, for comparison.
Prints a Markdown table, and writes the raw numbers as JSON with `--json`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# The core dependencies of tore-studio before issue 12 (commit ffcdc89), all installed by default.
BEFORE = [
    "numpy>=1.26", "pandas>=2.1", "plotly>=5.20", "streamlit>=1.40", "pillow>=10", "pymupdf>=1.24",
    "tqdm>=4.66", "ijson>=3.2", "scipy>=1.11", "msgspec>=0.18", "rapidfuzz>=3.0", "scikit-learn>=1.3",
    "seqeval==1.2.2", "faster-coco-eval>=1.8", "apted>=1.0.3", "lxml>=5", "pylatexenc>=2.10",
]
# Targets: name -> (extra of the wheel, or None for plain requirements; requirements).
EXTRAS = ["core", "app", "scores", "dask", "docling", "parquet", "test", "bench"]
PYMUPDF_VERSIONS = ["2.1", "2.0", "1.28.2", "1.27.2.3", "1.26.7"]


def targets(wheel: Path) -> dict[str, list[str]]:
    found = {"core": [str(wheel)]}
    provided = wheel_extras(wheel)
    for extra in EXTRAS[1:]:
        if extra in provided:
            found[extra] = [f"{wheel}[{extra}]"]
    # The app without the scorers its Scores page runs: what the `scores` in `app` costs.
    found["app without scores"] = [str(wheel), *extra_requirements(wheel, "app", without="tore-studio")]
    found["before"] = BEFORE
    for version in PYMUPDF_VERSIONS:
        found[f"pymupdf=={version}"] = [f"pymupdf=={version}"]
    return found


def wheel_extras(wheel: Path) -> set[str]:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(name).decode().splitlines()
    return {line.split(":", 1)[1].strip() for line in lines if line.startswith("Provides-Extra:")}


def extra_requirements(wheel: Path, extra: str, without: str) -> list[str]:
    """The requirements of one extra, as `name specifier` strings, leaving out `without`."""
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(name).decode().splitlines()
    found = []
    for line in lines:
        if line.startswith("Requires-Dist:") and f'extra == "{extra}"' in line:
            requirement = line.split(":", 1)[1].split(";")[0].strip()
            if not requirement.startswith(without):
                found.append(requirement)
    return found


def pip_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PIP_FIND_LINKS", None)
    env.pop("PIP_CONSTRAINT", None)
    return env


def build_wheel(out: Path) -> Path:
    """From a copy of the sources: setuptools' `build/lib` in the repository may hold stale modules."""
    source = out.parent / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "tore_engine", source / "tore_engine", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(out)], check=True)
    return next(out.glob("tore_studio-*.whl"))


def distributions(python: Path) -> set[str]:
    listing = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True)
    return {entry["name"].lower() for entry in json.loads(listing.stdout)}


def site_packages(python: Path) -> Path:
    path = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True)
    return Path(path.stdout.strip())


def du_mb(path: Path) -> int:
    return int(subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


def measure(interpreter: str, requirements: list[str], scratch: Path) -> dict:
    venv = Path(tempfile.mkdtemp(prefix="venv-", dir=scratch))
    try:
        subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        # As run.sh does (not timed): the interpreter's bundled pip may predate the wheel's metadata.
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, env=pip_env())
        empty = distributions(python)
        empty_mb = du_mb(site_packages(python))
        start = time.perf_counter()
        pip = subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], capture_output=True, text=True, env=pip_env())
        seconds = time.perf_counter() - start
        if pip.returncode != 0:  # e.g. PyMuPDF 2.1 requires a pymupdf-layout 2.1 that PyPI does not have
            error = [line for line in pip.stderr.splitlines() if line.startswith("ERROR")][-1:]
            return {"requirements": requirements, "error": " ".join(error) or f"pip exited {pip.returncode}"}
        added = sorted(distributions(python) - empty)
        loads_onnx = import_seconds = None
        if "pymupdf" in added:
            probe = "import sys, time; t = time.perf_counter(); import pymupdf; print(time.perf_counter() - t, 'onnxruntime' in sys.modules)"
            runs = [subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.split() for _ in range(5)]
            import_seconds = round(min(float(seconds) for seconds, _ in runs), 3)
            loads_onnx = runs[0][1] == "True"
        return {
            "requirements": requirements,
            "seconds": round(seconds, 1),
            "packages": len(added),
            "site_packages_mb": du_mb(site_packages(python)),
            "empty_venv_mb": empty_mb,
            "added": added,
            "pymupdf_loads_onnxruntime": loads_onnx,
            "import_pymupdf_seconds": import_seconds,
        }
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default="python3.11", help="interpreter of the fresh venvs (default python3.11)")
    parser.add_argument("--only", help="comma-separated target names (default: all)")
    parser.add_argument("--json", type=Path, help="write the raw numbers here")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tore-bench-install-"))
    try:
        wheel = build_wheel(scratch / "wheel")
        chosen = targets(wheel)
        if args.only:
            chosen = {name: chosen[name] for name in args.only.split(",")}
        results = {}
        for name, requirements in chosen.items():
            print(f"{name}: installing {' '.join(requirements)}", file=sys.stderr, flush=True)
            results[name] = measure(args.python, requirements, scratch)
        version = subprocess.run([args.python, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"\n{version}, pip from PyPI with no cache; site-packages includes pip itself\n")
        print("| target | site-packages (du -sm) | packages added | pip install |")
        print("|---|---:|---:|---:|")
        for name, result in results.items():
            if "error" in result:
                print(f"| {name} | does not install: {result['error']} | | |")
            else:
                print(f"| {name} | {result['site_packages_mb']} MB | {result['packages']} | {result['seconds']} s |")
        empty = next((r["empty_venv_mb"] for r in results.values() if "error" not in r), 0)
        print(f"\n(an empty venv: {empty} MB)")
        for name, result in results.items():
            if "error" in result:
                continue
            onnx = result["pymupdf_loads_onnxruntime"]
            note = "" if onnx is None else f"  [import pymupdf: {result['import_pymupdf_seconds']} s (best of 5), loads onnxruntime: {onnx}]"
            print(f"- {name}: {', '.join(result['added'])}{note}")
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
