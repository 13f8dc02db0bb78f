#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: installs dependencies, builds scenecrdt (release) and the browser viewer, and
# runs the scene server on loopback with the animated "demo" scene, in the foreground (Ctrl-C
# stops it cleanly).
# Environment: SCENECRDT_TCP (default 127.0.0.1:7600), SCENECRDT_HTTP (127.0.0.1:7601),
# SCENECRDT_DATA (default build/release/demo-data).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
echo "scenecrdt: building (release)" >&2
cmake --preset release >/dev/null
cmake --build --preset release >/dev/null
echo "scenecrdt: building the viewer (wasm, client-web -> build/web)" >&2
bash scripts/build_web.sh --quiet
bin=build/release/tools/scenecrdt
tcp=${SCENECRDT_TCP:-127.0.0.1:7600}
http=${SCENECRDT_HTTP:-127.0.0.1:7601}
data=${SCENECRDT_DATA:-build/release/demo-data}
cat >&2 <<MSG
scenecrdt: starting the scene server with the animated "demo" scene.
Open the viewer in a browser:  http://$http/view/demo     (all scenes: http://$http/)
The same scene with three.js:  http://$http/web/examples-three.html?scene=demo
In another terminal:
    $bin watch --server tcp://$tcp --scene demo
    $bin pull --server ws://$http --scene demo          # the state as JSON
    curl -s http://$http/metrics                         # Prometheus metrics
Ctrl-C stops the server (it commits and exits 0).
MSG
exec "$bin" serve --demo --tcp "$tcp" --http "$http" --data "$data"
