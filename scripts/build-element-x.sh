#!/usr/bin/env bash
# Builds test/element-x (Element X's engine, matrix-sdk + matrix-sdk-ui, as a scripted CLI) for
# test/clients/element-x.test.ts. The build lives outside the repository, in
# ${WEFT_ELEMENT_X_TARGET:-~/.cache/weft-element-x/target} (CI caches that folder; Cargo's registry stays
# in ~/.cargo). Idempotent: a second run with nothing changed is a no-op of about a second. Cargo runs at
# nice 19 and with CARGO_BUILD_JOBS (default: all cores) so a test run beside it keeps its CPU.
# Cargo's output goes to stderr; the binary's path is the only line on stdout.
set -euo pipefail
cd "$(dirname "$0")/../test/element-x"
export CARGO_TARGET_DIR="${WEFT_ELEMENT_X_TARGET:-$HOME/.cache/weft-element-x/target}"
command -v cargo >/dev/null || export PATH="$HOME/.cargo/bin:$PATH"  # rustup's place, when PATH lacks it
command -v cargo >/dev/null || { echo "build-element-x: cargo not found (install Rust 1.93 or later)" >&2; exit 127; }
nice -n 19 cargo build --locked --bin weft-element-x ${WEFT_ELEMENT_X_RELEASE:+--release} >&2
profile=debug
[ -n "${WEFT_ELEMENT_X_RELEASE:-}" ] && profile=release
echo "$CARGO_TARGET_DIR/$profile/weft-element-x"
