#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds scenecrdt and passes every test: formatting, the GoogleTest suites under ASan+UBSan
# (warnings are errors), each libFuzzer target for a bounded time with clang, and the
# interop tests against the real @dcl/ecs, the C# and Python bindings' tests (mono, pytest +
# Hypothesis) and the Debian packages. Installs its own dependencies first.
# Environment: FUZZ_SECONDS (default 20) per fuzz target, FUZZ_JOBS (default nproc) at once.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(( $(date +%s) - start ))"; }

step "dependencies"
bash scripts/deps.sh

step "clang-format"
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror

step "build and test under ASan+UBSan (cmake --workflow --preset ci)"
cmake --workflow --preset ci

# The bindings' tests (one core, mono then pytest) run while converge uses the other.
step "bindings: C# (mono) and Python (pytest, Hypothesis) started in the background"
bindings_log=$(mktemp)
( set -e
  bash bindings/csharp/run_tests.sh build/asan
  bash bindings/python/run_tests.sh build/asan ) >"$bindings_log" 2>&1 &
bindings_pid=$!

step "converge: 10 000 seeded replica/server schedules (ASan build)"
cli=build/asan/tools/scenecrdt
corpus=$(mktemp -d)
"$cli" encode tests/data/conflicts.ops.json -o "$corpus/conflicts.dcl"
"$cli" gen --shape random --entities 30 --seed 9 -o "$corpus/random.dcl"
"$cli" converge "$corpus/conflicts.dcl" "$corpus/random.dcl" examples/sample_scene.dcl \
  --replicas 3 --trials 10000 --seed 1 --failure-out "$corpus/failure.dcl"
"$cli" converge "$corpus/conflicts.dcl" "$corpus/random.dcl" examples/sample_scene.dcl \
  --trials 10000 --seed 1
rm -rf "$corpus"

step "bindings: C# and Python results"
bindings_status=0
wait "$bindings_pid" || bindings_status=$?
cat "$bindings_log"
rm -f "$bindings_log"
[ "$bindings_status" -eq 0 ] || { echo "bindings tests failed" >&2; exit 1; }

step "fuzz targets (clang libFuzzer, ${FUZZ_SECONDS:-20}s each, $(nproc) at once)"
bash scripts/fuzz_all.sh

step "interop with @dcl/ecs"
bash tests/interop/run.sh build/asan/tools/scenecrdt

step "browser: wasm runtime, TypeScript client, viewer in headless chromium"
bash tests/web/run.sh build/asan/tools/scenecrdt

step "docs snippets, the web ones included (tests/docs/run_snippets.sh --strict)"
bash tests/docs/run_snippets.sh build/asan --strict

step "Debian packages: build, extract, run (scripts/package_test.sh; own build folder and ports)"
timeout 3600 bash scripts/package_test.sh

step "all tests passed"
