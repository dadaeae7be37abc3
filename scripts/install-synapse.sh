#!/usr/bin/env bash
# Installs the pinned matrix-synapse (scripts/synapse-version) from PyPI into a virtualenv the federation
# interop tests start as a live peer: ${WEFT_SYNAPSE_VENV:-~/.cache/weft-ci/synapse-venv-VERSION}. Kept
# between runs (CI reuses it); installed into a temporary folder and renamed, under a lock, so parallel
# callers never see half an install. Prints the virtualenv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(tr -d '[:space:]' < scripts/synapse-version)"
venv="${WEFT_SYNAPSE_VENV:-$HOME/.cache/weft-ci/synapse-venv-$version}"
python="${WEFT_SYNAPSE_PYTHON:-python3}"

installed() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import synapse, sys; sys.exit(synapse.__version__ != '$version')" 2>/dev/null; }

if ! installed; then
  mkdir -p "$(dirname "$venv")"
  lock="$venv.lock"
  for _ in $(seq 1 600); do mkdir "$lock" 2>/dev/null && break; sleep 1; done
  [ -d "$lock" ] || { echo "install-synapse: could not take $lock" >&2; exit 1; }
  trap 'rmdir "$lock"' EXIT
  if ! installed; then
    tmp="$venv.tmp.$$"
    rm -rf "$tmp"
    if ! "$python" -m venv "$tmp" >&2; then
      # Debian's own python3 keeps venv (ensurepip) in a separate package.
      rm -rf "$tmp"
      if command -v apt-get >/dev/null; then apt-get install -y -q python3-venv >&2 || { apt-get update -q >&2 && apt-get install -y -q python3-venv >&2; }; fi
      "$python" -m venv "$tmp" >&2
    fi
    "$tmp/bin/pip" install --quiet --disable-pip-version-check "matrix-synapse==$version" >&2
    rm -rf "$venv"
    # Moved whole: its python finds its packages from where it lies (only `bin/python -m` is used; the
    # other launchers keep the temporary path in their first line).
    mv "$tmp" "$venv"
  fi
fi
installed || { echo "install-synapse: matrix-synapse $version is not usable in $venv" >&2; exit 1; }
echo "$venv"
