"""The package as installed: a light core (issue 12).

- What the core paths import, checked in a fresh interpreter through `sys.modules`: `import
  tore_engine`, `tore --help`, `tore evaluate --help` and a `tore evaluate` run load none of the
  app's or the scorers' libraries (they are extras, imported inside the functions that need them).
- The wheel, built once (`pip wheel --no-deps` of a copy of the source): its core `Requires-Dist` has none of the heavy
  libraries, and the archive holds the app, its pages, the demo data, `py.typed` and the LICENSE.
  Installing it in a fresh venv and measuring is `benchmarks/bench_install.py`, not a test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.helpers import shared_path
from tore_engine.core.extras import install_command

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "tore_engine"

# Top-level modules of the extras: none may be loaded by the core paths.
APP_MODULES = {"streamlit", "plotly", "pymupdf", "fitz", "onnxruntime", "pyarrow", "docling_core", "dask", "distributed"}
SCORER_MODULES = {"scipy", "sklearn", "seqeval", "rapidfuzz", "faster_coco_eval", "apted", "lxml", "pylatexenc"}
# Core libraries that are imported only when used: not by `import tore_engine` or `--help`.
LAZY_CORE_MODULES = {"pandas", "numba", "llvmlite", "openpyxl", "PIL", "tqdm"}
HEAVY = APP_MODULES | SCORER_MODULES | LAZY_CORE_MODULES

# Runs the `tore` command in-process with sys.argv, then writes the top-level modules it loaded.
PROBE = """
import json, os, sys
sys.argv = ["tore", *json.loads(os.environ["TORE_PROBE_ARGS"])]
code = 0
try:
    from tore_engine.cli import main
    main()
except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else (stop.code is not None)
finally:
    with open(os.environ["TORE_PROBE_OUT"], "w") as out:
        json.dump(sorted({name.partition(".")[0] for name in sys.modules}), out)
sys.exit(code)
"""


def loaded_modules(tmp_path: Path, code: str, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    env = {**os.environ, "TORE_PROBE_ARGS": json.dumps(list(args)), "TORE_PROBE_OUT": str(out)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert result.returncode == 0, f"tore {' '.join(args)}: {result.stderr}"
    return set(json.loads(out.read_text()))


def test_import_tore_engine_loads_no_heavy_module(tmp_path):
    code = "import json, os, sys, tore_engine\njson.dump(sorted(sys.modules), open(os.environ['TORE_PROBE_OUT'], 'w'))"
    loaded = {name.partition(".")[0] for name in loaded_modules(tmp_path, code)}
    assert not loaded & HEAVY


@pytest.mark.parametrize("args", [["--help"], ["evaluate", "--help"], ["score", "--help"], ["app", "--help"]])
def test_help_loads_no_heavy_module(tmp_path, args):
    assert not loaded_modules(tmp_path, PROBE, *args) & HEAVY


def test_evaluate_loads_no_module_of_the_app_or_the_scorers(tmp_path):
    demo = PACKAGE / "demo" / "data"
    loaded = loaded_modules(tmp_path, PROBE, "evaluate", str(demo / "reference.json"), str(demo / "model_b.json"), "--out", str(tmp_path / "out"))
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert (report["mode"], report["pages"]) == ("dual", len(json.loads((demo / "reference.json").read_text())["pages"]))
    assert not loaded & (APP_MODULES | SCORER_MODULES | {"pandas", "openpyxl"})


def test_evaluate_funsd_needs_no_scorer_library(tmp_path):
    annotations = shared_path("data", "funsd", "funsd", "testing_data", "annotations")
    loaded = loaded_modules(tmp_path, PROBE, "evaluate", str(annotations), str(annotations), "--format", "funsd", "--out", str(tmp_path / "out"))
    assert json.loads((tmp_path / "out" / "report.json").read_text())["pages"] == len(list(annotations.glob("*.json")))
    assert not loaded & (APP_MODULES | SCORER_MODULES)


# The wheel --------------------------------------------------------------------------------------

FORBIDDEN_IN_CORE = {"streamlit", "plotly", "scipy", "scikit-learn", "onnxruntime", "pyarrow", "docling-core", "pymupdf",
                     "pymupdf4llm", "pymupdf-layout", "networkx", "seqeval", "faster-coco-eval", "dask", "playwright"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of what the wheel is made of: setuptools keeps a `build/lib` in the source
    folder, and would pack the stale modules it still holds (a renamed module, twice)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(PACKAGE, source / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    (built,) = out.glob("tore_studio-*.whl")
    return built


@pytest.fixture(scope="session")
def wheel_names(wheel) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


@pytest.fixture(scope="session")
def requirements(wheel) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    return [Requirement(line.split(":", 1)[1]) for line in metadata.splitlines() if line.startswith("Requires-Dist:")]


def extra_of(requirement: Requirement) -> str | None:
    match = re.search(r'extra\s*==\s*"([^"]+)"', str(requirement.marker or ""))
    return match.group(1) if match else None


def test_core_requirements_are_light(requirements):
    core = {normalise(r.name) for r in requirements if extra_of(r) is None}
    assert {"numpy", "msgspec"} <= core
    assert not core & FORBIDDEN_IN_CORE


def test_extras_cover_the_app_the_scorers_and_the_tests(requirements):
    by_extra: dict[str, set[str]] = {}
    for r in requirements:
        if (extra := extra_of(r)) is not None:
            by_extra.setdefault(extra, set()).add(normalise(r.name) + "".join(f"[{e}]" for e in sorted(r.extras)))
    assert {"app", "scores", "dask", "test", "bench"} <= set(by_extra)
    assert {"streamlit", "plotly", "pillow", "pymupdf"} <= by_extra["app"]
    assert {"scipy", "scikit-learn", "seqeval", "rapidfuzz", "faster-coco-eval", "apted", "lxml", "pylatexenc"} <= by_extra["scores"]
    test_extras = {extra for name in by_extra["test"] if name.startswith("tore-studio[") for extra in name[12:-1].split("][")}
    assert set(by_extra) - {"test", "bench"} <= test_extras, "the test extra must install every other extra"


def test_app_pymupdf_brings_no_onnx_runtime(requirements):
    """PyMuPDF 2.x requires onnxruntime, networkx and pymupdf4llm (a layout model): the app takes 1.x."""
    (pymupdf,) = [r for r in requirements if normalise(r.name) == "pymupdf"]
    assert not SpecifierSet(str(pymupdf.specifier)).contains("2.0")


def test_wheel_holds_the_app_the_demo_and_the_licence(wheel_names):
    assert "tore_engine/studio/app.py" in wheel_names
    pages = {f"tore_engine/studio/app_pages/{p.name}" for p in (PACKAGE / "studio" / "app_pages").glob("*.py")}
    assert pages and pages <= wheel_names
    demo = {f"tore_engine/demo/data/{p.name}" for p in (PACKAGE / "demo" / "data").iterdir() if p.is_file()}
    assert {"tore_engine/demo/data/reference.json", "tore_engine/demo/data/model_a.json"} <= demo <= wheel_names
    assert "tore_engine/py.typed" in wheel_names
    assert any(re.fullmatch(r"tore_studio-[^/]+\.dist-info/licenses/LICENSE", n) for n in wheel_names)
    assert {n.split("/")[0] for n in wheel_names} == {"tore_engine", next(n.split("/")[0] for n in wheel_names if ".dist-info/" in n)}
    assert not any(n.startswith(("studio/", "app_pages/", "tests/", "benchmarks/")) for n in wheel_names)
    modules = {str(p.relative_to(REPO)) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    assert {n for n in wheel_names if n.endswith(".py")} == modules, "the wheel's modules are the source's"


# A missing extra ---------------------------------------------------------------------------------

BLOCK_AND_RUN = """
import json, os, sys
for name in json.loads(os.environ["TORE_BLOCKED"]):
    sys.modules[name] = None  # `import name` now raises ModuleNotFoundError, as if not installed
from tore_engine.cli import main
sys.exit(main(json.loads(os.environ["TORE_PROBE_ARGS"])))
"""


def run_without(tmp_path: Path, blocked: list[str], *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TORE_BLOCKED": json.dumps(blocked), "TORE_PROBE_ARGS": json.dumps(list(args))}
    return subprocess.run([sys.executable, "-c", BLOCK_AND_RUN], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_a_score_without_the_scores_extra_names_the_extra(tmp_path):
    reference = shared_path("data", "omnidocbench", "OmniDocBench_demo.json")
    layout = shared_path("data", "omnidocbench", "pred_layout_detection", "detection_prediction.json")
    result = run_without(tmp_path, ["faster_coco_eval", "scipy", "rapidfuzz"], "score", "omnidocbench", "--reference", str(reference), "--layout", str(layout))
    assert result.returncode == 2 and result.stdout == ""
    assert install_command("scores") in result.stderr and "bug" not in result.stderr


def test_the_app_without_the_app_extra_names_the_extra(tmp_path):
    result = run_without(tmp_path, ["streamlit"], "app", "--port", "8799")
    assert result.returncode == 2 and install_command("app") in result.stderr


def test_the_python_api_imports_pandas_only_for_a_dataframe(tmp_path):
    demo = PACKAGE / "demo" / "data"
    code = f"""
import json, os, sys
import tore_engine as tore
ev = tore.evaluate({str(demo / 'reference.json')!r}, {str(demo / 'model_a.json')!r})
before = sorted({{name.partition(".")[0] for name in sys.modules}})
frame = ev.recall
json.dump([before, type(frame).__module__.partition(".")[0]], open(os.environ["TORE_PROBE_OUT"], "w"))
"""
    out = tmp_path / "modules.json"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "TORE_PROBE_OUT": str(out)}, timeout=300)
    assert result.returncode == 0, result.stderr
    before, frame_module = json.loads(out.read_text())
    assert not set(before) & (APP_MODULES | SCORER_MODULES | {"pandas", "openpyxl"})
    assert frame_module == "pandas"


def test_wheel_version_is_the_package_version(wheel):
    import tore_engine

    assert wheel.name.split("-")[1] == tore_engine.__version__


# Every module is type-checked (mypy in CI): none may be excused again with `ignore_errors`.
def test_no_module_is_excused_from_mypy():
    import tomllib

    overrides = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"].get("overrides", [])
    excused = [module for override in overrides if override.get("ignore_errors") for module in override["module"]]
    assert not excused, f"excused from mypy: {excused}"
