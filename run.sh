#!/usr/bin/env bash
# Set up TORE Studio in ./.venv and run it:
#   ./run.sh app    the Streamlit app on the embedded demo (http://localhost:8501)
#   ./run.sh test   the whole test suite
# Works on a fresh Debian machine with only python3 >= 3.11 (as root it installs python3-venv
# when the interpreter lacks it).
set -euo pipefail
cd "$(dirname "$0")"

python_ok() { python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; }

make_venv() {
  [ -x .venv/bin/python ] && return
  python_ok || { echo "run.sh: TORE Studio needs python3 >= 3.11" >&2; exit 1; }
  if ! python3 -m venv .venv 2>/dev/null; then
    rm -rf .venv
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    else
      echo "run.sh: python3 -m venv failed; install python3-venv (sudo apt-get install python3-venv)" >&2
      exit 1
    fi
    python3 -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip
}

# The extras (pyproject.toml): the core is the engine and `tore evaluate`; `app` adds Streamlit,
# Plotly, PyMuPDF and the scorers; `docling` reads DoclingDocuments and docling-eval datasets (the
# sidebar offers both); `test` adds every extra and the test tools.
install() {
  make_venv
  .venv/bin/python -m pip install -q -e ".[$1]"
}

case "${1:-}" in
  app)
    install app,dask,docling  # every format the sidebar offers opens
    shift
    # From a checkout, paths typed into the app are confined to the folder that holds the repository
    # (so the Scores page finds the samples in ../shared/data); `tore app` alone uses the current folder.
    TORE_STUDIO_DATA_ROOT="${TORE_STUDIO_DATA_ROOT:-$(cd .. && pwd)}" exec .venv/bin/tore app "$@"
    ;;
  test)
    install test  # every extra (app, scores, dask, ...) and the test tools
    shift
    .venv/bin/python -m tore_engine.run.warm  # compile the kernels into the per-user cache once (a few seconds)
    exec .venv/bin/python -m pytest "$@"
    ;;
  *)
    echo "usage: ./run.sh app | ./run.sh test [pytest options]" >&2
    exit 2
    ;;
esac
