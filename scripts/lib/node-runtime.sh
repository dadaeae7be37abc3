# Shared by .ci/run and bench/peer/install.sh: a pinned Node from the npm registry, and better-sqlite3's
# native module built for it. The registry's node-linux-<arch> package carries the binary and the headers
# native builds compile against; it is unpacked once into ${WEFT_NODE_CACHE:-~/.cache/weft-node}/VERSION,
# outside the repository, in a temporary folder renamed when complete (parallel callers never see half).
# Usage (sourced):
#   node_runtime VERSION      prints the unpacked Node's folder (bin/node, include/node)
#   sqlite_binding NODE_DIR   prints the path of better_sqlite3.node compiled for that Node's ABI from this
#                             checkout's node_modules/better-sqlite3 (cached beside that Node, per version)

node_runtime() {
  local version="$1" cache="${WEFT_NODE_CACHE:-$HOME/.cache/weft-node}" arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "node_runtime: no node-linux package for $(uname -m)" >&2; return 1 ;;
  esac
  if [ ! -x "$cache/$version/bin/node" ]; then
    mkdir -p "$cache"
    local tmp
    tmp="$(mktemp -d "$cache/.unpack-XXXXXX")"
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null && tar xzf "node-linux-$arch-$version.tgz") >&2 || { rm -rf "$tmp"; return 1; }
    rm -rf "$cache/$version"
    mv "$tmp/package" "$cache/$version"
    rm -rf "$tmp"
  fi
  [ "$("$cache/$version/bin/node" -p process.versions.node)" = "$version" ] || { echo "node_runtime: $cache/$version is not Node $version" >&2; return 1; }
  echo "$cache/$version"
}

sqlite_binding() {
  local nodedir="$1" module version out
  module="$(pwd)/node_modules/better-sqlite3"
  version="$(node -p "require('$module/package.json').version")"
  out="$nodedir/better-sqlite3-$version.node"
  # A cached module that this Node cannot load (an earlier build for another ABI) is built again.
  if [ -f "$out" ] && ! "$nodedir/bin/node" -e 'process.dlopen({ exports: {} }, process.argv[1])' "$out" 2>/dev/null; then
    rm -f "$out"
  fi
  if [ ! -f "$out" ]; then
    # Built in a copy of the package, so the checkout's own build (for the Node that ran npm ci) stays.
    local tmp gyp
    tmp="$(mktemp -d)"
    cp -r "$module" "$tmp/better-sqlite3" && rm -rf "$tmp/better-sqlite3/build"
    gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
    # node-gyp lets npm_config_* variables override its command line: .ci/run exports npm_config_nodedir
    # (the suite's Node) for npm ci, so both variables are cleared for this build. The result must load.
    (cd "$tmp/better-sqlite3" \
      && env -u npm_config_nodedir -u npm_package_config_node_gyp_nodedir \
        "$nodedir/bin/node" "$gyp" rebuild --release --nodedir="$nodedir" --jobs=2 >/dev/null 2>&1 \
      && "$nodedir/bin/node" -e 'process.dlopen({ exports: {} }, process.argv[1])' build/Release/better_sqlite3.node) || {
      echo "sqlite_binding: building better-sqlite3 $version for $("$nodedir/bin/node" -v) failed" >&2
      rm -rf "$tmp"
      return 1
    }
    cp "$tmp/better-sqlite3/build/Release/better_sqlite3.node" "$out.tmp" && mv "$out.tmp" "$out"
    rm -rf "$tmp"
  fi
  echo "$out"
}
