#!/usr/bin/env bash
# Installs the pinned matrix-synapse (scripts/synapse-version) from PyPI into a virtualenv the federation
# interop tests start as a live peer: ${WEFT_SYNAPSE_VENV:-~/.cache/weft-ci/synapse-venv-VERSION}. Kept
# between runs (CI reuses it); installed into a temporary folder and renamed, under a lock, so parallel
# callers never see half an install (scripts/lib/pypi-venv.sh). Prints the virtualenv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pypi-venv.sh
version="$(tr -d '[:space:]' < scripts/synapse-version)"
PYPI_VENV_PYTHON="${WEFT_SYNAPSE_PYTHON:-python3}" pypi_venv install-synapse "matrix-synapse==$version" \
  "${WEFT_SYNAPSE_VENV:-$HOME/.cache/weft-ci/synapse-venv-$version}" \
  "import synapse, sys; sys.exit(synapse.__version__ != '$version')"
