#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: installs dependencies, builds scenecrdt (release) and decodes the bundled
# sample scene stream to JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release >/dev/null
echo "scenecrdt: decoding examples/sample_scene.dcl" >&2
build/release/tools/scenecrdt decode examples/sample_scene.dcl
