#!/usr/bin/env bash
# Installs the pinned synadm (scripts/synadm-version), the admin-API command line tool, from PyPI into a
# virtualenv the admin interop test drives against Weft: ${WEFT_SYNADM_VENV:-~/.cache/weft-ci/synadm-venv-VERSION}.
# Kept between runs; installed into a temporary folder and renamed under a lock (as install-synapse.sh).
# Prints the virtualenv's path.
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(tr -d '[:space:]' < scripts/synadm-version)"
venv="${WEFT_SYNADM_VENV:-$HOME/.cache/weft-ci/synadm-venv-$version}"
python="${WEFT_SYNADM_PYTHON:-python3}"

installed() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('synadm') != '$version')" 2>/dev/null; }

if ! installed; then
  mkdir -p "$(dirname "$venv")"
  lock="$venv.lock"
  for _ in $(seq 1 600); do mkdir "$lock" 2>/dev/null && break; sleep 1; done
  [ -d "$lock" ] || { echo "install-synadm: could not take $lock" >&2; exit 1; }
  trap 'rmdir "$lock"' EXIT
  if ! installed; then
    tmp="$venv.tmp.$$"
    rm -rf "$tmp"
    if ! "$python" -m venv "$tmp" >&2; then
      rm -rf "$tmp"
      if command -v apt-get >/dev/null; then apt-get install -y -q python3-venv >&2 || { apt-get update -q >&2 && apt-get install -y -q python3-venv >&2; }; fi
      "$python" -m venv "$tmp" >&2
    fi
    "$tmp/bin/pip" install --quiet --disable-pip-version-check "synadm==$version" >&2
    rm -rf "$venv"
    # Moved whole: only `bin/python -m synadm.cli` is used (the launchers keep the temporary path).
    mv "$tmp" "$venv"
  fi
fi
installed || { echo "install-synadm: synadm $version is not usable in $venv" >&2; exit 1; }
echo "$venv"
