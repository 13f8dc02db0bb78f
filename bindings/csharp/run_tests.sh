#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bindings/csharp/run_tests.sh BUILD_DIR [SCENECRDT]: builds the SceneCrdt C# binding with mcs
# and runs its tests with mono (docs/BINDINGS.md) against BUILD_DIR's libscenecrdt.so.1:
# random, generated and conflict streams against `scenecrdt replay --world` bit for bit, two
# Clients through a `scenecrdt serve`, interpolation, misuse, component reads (the golden
# @dcl/ecs stream of docs/COMPONENTS.md). SCENECRDT defaults to
# BUILD_DIR/tools/scenecrdt. A sanitized BUILD_DIR works: libasan is preloaded into mono.
# Needs mono-mcs, mono-runtime and /usr/bin/python3 (scripts/deps.sh). Exits non-zero on a failure.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bindings/csharp/run_tests.sh BUILD_DIR [SCENECRDT]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
cli=${2:-$build/tools/scenecrdt}
libdir="$build/capi"
[ -x "$cli" ] || { echo "run_tests.sh: $cli not found" >&2; exit 2; }
[ -e "$libdir/libscenecrdt.so.1" ] || { echo "run_tests.sh: no $libdir/libscenecrdt.so.1" >&2; exit 2; }
command -v mcs >/dev/null && command -v mono >/dev/null ||
  { echo "run_tests.sh: mcs and mono are needed (scripts/deps.sh)" >&2; exit 2; }

# mono's own SEGV handler must stay in charge of its signals.
asan_extra=handle_segv=0:allow_user_segv_handler=1
# shellcheck source=bindings/test_env.sh
source "$(dirname "$0")/../test_env.sh"

echo "-- compile (mcs)"
mcs -nologo -target:library -warn:4 -warnaserror -out:"$work/SceneCrdt.dll" "$here"/Runtime/*.cs
mcs -nologo -warn:4 -warnaserror -r:"$work/SceneCrdt.dll" -out:"$work/SceneCrdtTests.exe" \
  "$here"/Tests~/*.cs

echo "-- streams and what replay --world says of them ($(elapsed))"
pairs=()
worlds=()
add_stream() { # DCL
  local name
  name=$(basename "$1" .dcl)
  "$cli" replay "$1" --world >"$work/$name.world.json" || fail "replay $1"
  worlds+=("$work/$name.world.json")
  pairs+=("$1" "$work/$name.world.expected")
}
for seed in 1 2 3; do
  /usr/bin/python3 "$src/tests/package/gen_ops.py" "$seed" >"$work/ops$seed.json"
  "$cli" encode "$work/ops$seed.json" -o "$work/ops$seed.dcl" >/dev/null
  add_stream "$work/ops$seed.dcl"
done
for shape in random deep wide; do
  "$cli" gen --shape "$shape" --entities 500 --seed 7 -o "$work/gen_$shape.dcl" >/dev/null
  add_stream "$work/gen_$shape.dcl"
done
"$cli" encode "$src/tests/data/conflicts.ops.json" -o "$work/conflicts.dcl" >/dev/null
add_stream "$work/conflicts.dcl"
add_stream "$src/examples/sample_scene.dcl"
/usr/bin/python3 "$src/bindings/world_bits.py" --each "${worlds[@]}"
# The golden @dcl/ecs component stream (docs/COMPONENTS.md) as lines the test reads.
/usr/bin/python3 "$src/bindings/components_golden.py" \
  "$src/tests/data/components/ecs_components.json" >"$work/components.txt"

echo "-- a scene server ($(elapsed))"
"$cli" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$work/serve" --no-fsync \
  2>"$work/serve.log" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's|^scenecrdt serve: listening tcp://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
    "$work/serve.log" | head -1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log" >&2; fail "scenecrdt serve did not start"; }

echo "-- mono tests ($(elapsed))"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$preload" \
  mono --debug "$work/SceneCrdtTests.exe" --url "tcp://127.0.0.1:$port" \
  --components "$src/tests/data/components/ecs_components.dcl" "$work/components.txt" \
  "${pairs[@]}" ||
  fail "SceneCrdtTests.exe"
echo "run_tests.sh: C# binding tests passed ($(elapsed))"
