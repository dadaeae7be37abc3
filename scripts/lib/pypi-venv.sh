# Shared by scripts/install-*.sh: installs one pinned PyPI package into a virtualenv kept between runs,
# built in a temporary folder and renamed under a lock so parallel callers never see half an install.
# Usage (sourced): pypi_venv <label> <pip requirement> <venv path> <python check that exits 0 when usable>
pypi_venv() {
  local label="$1" requirement="$2" venv="$3" check="$4"
  local python="${PYPI_VENV_PYTHON:-python3}"
  installed() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; }
  if ! installed; then
    mkdir -p "$(dirname "$venv")"
    local lock="$venv.lock"
    for _ in $(seq 1 600); do mkdir "$lock" 2>/dev/null && break; sleep 1; done
    [ -d "$lock" ] || { echo "$label: could not take $lock" >&2; return 1; }
    trap "rmdir '$lock'" EXIT
    if ! installed; then
      local tmp="$venv.tmp.$$"
      rm -rf "$tmp"
      if ! "$python" -m venv "$tmp" >&2; then
        # Debian's own python3 keeps venv (ensurepip) in a separate package.
        rm -rf "$tmp"
        if command -v apt-get >/dev/null; then apt-get install -y -q python3-venv >&2 || { apt-get update -q >&2 && apt-get install -y -q python3-venv >&2; }; fi
        "$python" -m venv "$tmp" >&2
      fi
      "$tmp/bin/pip" install --quiet --disable-pip-version-check "$requirement" >&2
      rm -rf "$venv"
      # Moved whole: its python finds its packages from where it lies (only `bin/python -m` is used; the
      # other launchers keep the temporary path in their first line).
      mv "$tmp" "$venv"
    fi
  fi
  installed || { echo "$label: $requirement is not usable in $venv" >&2; return 1; }
  echo "$venv"
}
