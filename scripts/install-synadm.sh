#!/usr/bin/env bash
# Installs the pinned synadm (scripts/synadm-version), the admin-API command line tool, from PyPI into a
# virtualenv the admin interop test drives against Weft: ${WEFT_SYNADM_VENV:-~/.cache/weft-ci/synadm-venv-VERSION}.
# Kept between runs (scripts/lib/pypi-venv.sh). Prints the virtualenv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pypi-venv.sh
version="$(tr -d '[:space:]' < scripts/synadm-version)"
PYPI_VENV_PYTHON="${WEFT_SYNADM_PYTHON:-python3}" pypi_venv install-synadm "synadm==$version" \
  "${WEFT_SYNADM_VENV:-$HOME/.cache/weft-ci/synadm-venv-$version}" \
  "import importlib.metadata as m, sys; sys.exit(m.version('synadm') != '$version')"
