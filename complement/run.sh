#!/usr/bin/env bash
# Runs Complement (the Matrix project's integration suite, ../shared/complement/src or $COMPLEMENT_DIR)
# against this checkout, as .ci/run does after the test suite:
#   1. Docker: docker.io from Debian, dockerd started unless one answers;
#   2. a base image from Debian's packages with debootstrap (no image registry is reachable), cached as
#      a tarball in ~/.cache/weft-ci;
#   3. Weft's image (complement/Dockerfile): Node, the compiled checkout and its production modules;
#   4. `go test -json` over Complement's packages, then complement/summary.mjs: a line per package, the
#      totals, and a failure for every test of complement/passes.txt (what passed here before) that did not.
# Needs the checkout built (dist/) and installed (node_modules); run as root (Docker). Prints its progress.
# Environment: COMPLEMENT_DIR, WEFT_COMPLEMENT_RUN (a `go test -run` pattern, to run part of the suite),
# WEFT_COMPLEMENT_PACKAGES (default ./tests/...), WEFT_COMPLEMENT_IMAGE (the image tag), WEFT_COMPLEMENT_OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
CACHE="${WEFT_CI_CACHE:-$HOME/.cache/weft-ci}"
COMPLEMENT_DIR="${COMPLEMENT_DIR:-$ROOT/../shared/complement/src}"
BASE_IMAGE=weft-complement-base:bookworm
IMAGE="${WEFT_COMPLEMENT_IMAGE:-weft-complement:latest}"
mkdir -p "$CACHE"
out="${WEFT_COMPLEMENT_OUT:-$CACHE/complement-output.json}"
say() { echo "complement: $*"; }

# 1. Docker.
if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  say "installing docker.io and debootstrap from Debian"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null; }
fi
# What this script starts it stops on its way out: the daemon (when it started it) and the build context.
dockerd_pid=""
ctx=""
cleanup() {
  [ -z "$ctx" ] || rm -rf "$ctx"
  if [ -n "$dockerd_pid" ]; then kill "$dockerd_pid" 2>/dev/null && wait "$dockerd_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
if ! docker info >/dev/null 2>&1; then
  say "starting dockerd"
  dockerd >"$CACHE/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { tail -20 "$CACHE/dockerd.log"; exit 1; }
fi

# 2. The base image: Debian bookworm, minimal, with what Node and the entrypoint need.
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  tarball="$CACHE/complement-base-bookworm.tar"
  if [ ! -f "$tarball" ]; then
    say "building the base image with debootstrap"
    rootfs="$(mktemp -d)"
    debootstrap --variant=minbase --include=openssl,ca-certificates,curl,libstdc++6,libssl3 bookworm "$rootfs" http://deb.debian.org/debian >"$CACHE/debootstrap.log" 2>&1 ||
      { tail -20 "$CACHE/debootstrap.log"; exit 1; }
    tar -C "$rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs"
  fi
  docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tarball" "$BASE_IMAGE" >/dev/null
fi

# 3. Weft's image: the build context holds Node, the compiled server and its production dependencies.
# That Node is the one first in PATH: one Weft does not run on would fail every test after a 90 s wait.
node --input-type=module -e 'const { nodeVerdict } = await import(process.argv[1]); const v = nodeVerdict(process.versions.node); if (v.refuse) { console.error(`complement: ${v.refuse}: put a supported Node first in PATH`); process.exit(1); }' "$ROOT/scripts/node-version.mjs"
node scripts/build.mjs
ctx="$(mktemp -d)"
mkdir -p "$ctx/app/src/graphql/explorer"
cp "$(command -v node)" "$ctx/node"
cp -r package.json package-lock.json bin dist prisma "$ctx/app/"
mkdir -p "$ctx/app/scripts" && cp scripts/build.mjs scripts/node-version.mjs "$ctx/app/scripts/"
# The GraphQL explorer's page script is read from src/ at run time.
cp src/graphql/explorer/explorer.js "$ctx/app/src/graphql/explorer/"
(cd "$ctx/app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
# better-sqlite3's native module, built for this very Node by npm ci in the checkout.
mkdir -p "$ctx/app/node_modules/better-sqlite3/build/Release"
cp node_modules/better-sqlite3/build/Release/better_sqlite3.node "$ctx/app/node_modules/better-sqlite3/build/Release/"
cp complement/Dockerfile complement/entrypoint.sh "$ctx/"
say "building $IMAGE ($(du -sh "$ctx" | cut -f1) of context)"
# (Debian's Docker has no BuildKit: the legacy builder's deprecation notice goes to the log with the rest.)
docker build -q --build-arg BASE="$BASE_IMAGE" -t "$IMAGE" "$ctx" >"${out%.json}-docker-build.log" 2>&1 || { tail -30 "${out%.json}-docker-build.log"; exit 1; }

# 4. The suite: its Go modules come through the module proxy (cached in Go's own cache). Go's own
# tarball installs under /usr/local/go, which a bare PATH may lack.
command -v go >/dev/null 2>&1 || [ ! -x /usr/local/go/bin/go ] || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { say "no go command: Complement needs Go"; exit 1; }
say "running the suite from $COMPLEMENT_DIR"
status=0
(
  cd "$COMPLEMENT_DIR"
  COMPLEMENT_BASE_IMAGE="$IMAGE" COMPLEMENT_ENABLE_DIRTY_RUNS=1 COMPLEMENT_SPAWN_HS_TIMEOUT_SECS=90 \
    go test -count=1 -timeout 60m -json -p 1 ${WEFT_COMPLEMENT_RUN:+-run "$WEFT_COMPLEMENT_RUN"} ${WEFT_COMPLEMENT_PACKAGES:-./tests/...} >"$out" 2>"${out%.json}-stderr.log"
) || status=$?
lost="${out%.json}-lost.txt"
rm -f "$lost"
if ! node complement/summary.mjs "$out" complement/passes.txt "$COMPLEMENT_DIR/../SYNAPSE-PASSES.txt" --lost "$lost" ${WEFT_COMPLEMENT_RUN:+--partial} ${WEFT_COMPLEMENT_PACKAGES:+--partial}; then
  [ -s "$lost" ] || exit 1
  # go test itself failing (not its tests: status 1), or more lost than a flaky few, is no race.
  [ "$status" -eq 0 ] || [ "$status" -eq 1 ] || { say "go test exited $status"; tail -20 "${out%.json}-stderr.log"; exit 1; }
  [ "$(wc -l <"$lost")" -le 10 ] || { say "$(wc -l <"$lost") known passes lost: not run again"; exit 1; }
  # A known pass that failed is run once more, alone: Complement's timing-bound tests (a server stopped
  # and started, a retry awaited) can lose a race on a loaded machine. Failing again fails CI; passing is
  # reported as flaky.
  say "running the $(wc -l <"$lost") test(s) again"
  retry="${out%.json}-retry.json"
  : >"$retry"
  while read -r pkg test; do
    dir="./tests"; [ "$pkg" = tests ] || dir="./tests/$pkg"
    (cd "$COMPLEMENT_DIR" && COMPLEMENT_BASE_IMAGE="$IMAGE" COMPLEMENT_ENABLE_DIRTY_RUNS=1 COMPLEMENT_SPAWN_HS_TIMEOUT_SECS=90 \
      go test -count=1 -timeout 10m -json -p 1 -run "^${test}\$" "$dir" >>"$retry" 2>>"${out%.json}-stderr.log") || true
  done <"$lost"
  node complement/summary.mjs "$retry" complement/passes.txt --partial || exit 1
  say "flaky (failed, then passed alone): $(tr '\n' ' ' <"$lost")"
fi
# go test fails when any test fails; the summary decides instead (only a known pass that failed fails CI).
[ "$status" -eq 0 ] || [ "$status" -eq 1 ] || { say "go test exited $status"; tail -20 "${out%.json}-stderr.log"; exit 1; }
