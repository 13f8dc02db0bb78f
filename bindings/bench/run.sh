#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bindings/bench/run.sh BUILD_DIR [ENTITIES] [CALLS]: the per-call cost of one bulk copy of
# every world matrix (ENTITIES, default 10 000, random shape) through the C ABI from C, from
# C# (mono) and from Python, in one run against BUILD_DIR's libscenecrdt (use a release build:
# docs/BINDINGS.md "Overhead"). BUILD_DIR needs the targets scenecrdt_c and scenecrdt_python;
# the stream comes from SCENECRDT (default BUILD_DIR/tools/scenecrdt; any build's `gen`
# writes the same bytes).
set -euo pipefail
build=$(cd "$1" && pwd)
entities=${2:-10000}
calls=${3:-2000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${SCENECRDT:-$build/tools/scenecrdt}" gen --shape random --entities "$entities" --seed 1 -o "$work/scene.dcl" >/dev/null
cc -O2 -std=c11 "$here/copy_world.c" -I "$build/include" -L "$build/capi" -lscenecrdt \
  -Wl,-rpath,"$build/capi" -o "$work/copy_world"
mcs -nologo -optimize -target:library -out:"$work/SceneCrdt.dll" "$here"/../csharp/Runtime/*.cs
mcs -nologo -optimize -r:"$work/SceneCrdt.dll" -out:"$work/SceneCrdtTests.exe" \
  "$here/../csharp/Tests~/SceneCrdtTests.cs"
"$work/copy_world" "$work/scene.dcl" "$calls"
LD_LIBRARY_PATH="$build/capi" mono "$work/SceneCrdtTests.exe" --bench "$work/scene.dcl" "$calls"
PYTHONPATH="$build/bindings/python" /usr/bin/python3 "$here/copy_world.py" "$work/scene.dcl" "$calls"
