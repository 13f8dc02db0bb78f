#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the browser side of scenecrdt (docs/WEB.md): the WebAssembly runtime with Debian's
# emscripten (cmake preset wasm -> build/wasm), then the client-web package (npm ci, tsc,
# esbuild) and the viewer's assets in build/web, where `scenecrdt serve` finds them by default.
# Usage: bash scripts/build_web.sh [--quiet]
set -euo pipefail
case "${1:-}" in
  -h | --help) sed -n '3,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --quiet | "") ;;
  *) echo "scripts/build_web.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
quiet=${1:-}
cd "$(dirname "$0")/.."
root=$PWD
for tool in emcc node npm; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "scripts/build_web.sh: $tool is missing: run bash scripts/deps.sh" >&2; exit 1; }
done
out() { if [ -n "$quiet" ]; then "$@" >/dev/null; else "$@"; fi; }
# Debian's emcc runs its optimizer with the system node modules (acorn).
export NODE_PATH=/usr/share/nodejs
out cmake --preset wasm
out cmake --build --preset wasm
cd client-web
out npm ci --no-audit --no-fund --loglevel=error
OUT_DIR="$root/build/web" WASM_DIR="$root/build/wasm/wasm" out npm run --silent build
[ -n "$quiet" ] || echo "build/web: $(ls "$root/build/web" | tr '\n' ' ')(wasm module" \
  "$(stat -c %s "$root/build/web/scenecrdt.wasm") bytes)"
