#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The browser side of scenecrdt (docs/WEB.md): builds the WebAssembly runtime (preset wasm,
# Debian's emscripten), the client-web package and the viewer's assets (build/web, which
# `scenecrdt serve` serves by default), then runs the node tests of client-web/test against
# BIN: wasm = `replay --world` bitwise, the TypeScript client against a real server, component
# reads against the golden and a live @dcl/ecs engine (tests/interop's, npm ci'd here),
# DclSceneView (an engine and the replica on one ecs-transport connection, built here), the npm
# package (npm pack, unbundled, esbuild, types), and in headless chromium (puppeteer-core) the
# viewer (the Z mirror by pixels, framing, labels, /view/<unknown>), the three.js binding and
# example, DclSceneView in a page, and the 10 000-entity frame times and allocation checks
# (about 3 minutes).
# Usage: bash tests/web/run.sh path/to/scenecrdt      (a built binary; any preset)
# Environment: CHROMIUM (default /usr/bin/chromium); SCENECRDT_WEB_ARTIFACTS=DIR keeps the
# viewer's screenshots there.
set -euo pipefail
usage() { sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
bin=$(realpath "$1")
cd "$(dirname "$0")/../.."
root=$PWD
[ -x "$bin" ] || { echo "tests/web/run.sh: $bin is not an executable scenecrdt binary" >&2; exit 2; }
for tool in node "${CHROMIUM:-/usr/bin/chromium}"; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "tests/web/run.sh: $tool is missing: run bash scripts/deps.sh" >&2; exit 1; }
done

echo "-- wasm runtime, client-web and the viewer's assets (scripts/build_web.sh)"
bash scripts/build_web.sh

echo "-- @dcl/ecs of tests/interop (components.test.mjs, dcl_view.test.mjs drive real engines), ecs-transport"
PROG=tests/web/run.sh
# shellcheck source=tests/interop/lib/common.sh
source tests/interop/lib/common.sh
ensure_node_modules
ensure_ecs_transport

echo "-- node tests (wasm, client, headless chromium)"
cd client-web
SCENECRDT_BIN="$bin" SCENECRDT_WASM_DIR="$root/build/wasm/wasm" SCENECRDT_WEB_ROOT="$root/build/web" \
  node --test --test-reporter=spec test/*.test.mjs
