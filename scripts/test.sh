#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds scenecrdt and passes every test: formatting, the GoogleTest suites under ASan+UBSan
# (warnings are errors), each libFuzzer target for a bounded time with clang, and the
# interop tests against the real @dcl/ecs. Installs its own dependencies first.
# Environment: FUZZ_SECONDS (default 30) per fuzz target.
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

step "fuzz targets (clang libFuzzer, ${FUZZ_SECONDS:-30}s each)"
cmake --preset fuzz >/dev/null
targets=$(ls tools/fuzz/corpus)
# shellcheck disable=SC2086
cmake --build --preset fuzz --target $targets
for target in $targets; do
  work=$(mktemp -d)
  mkdir "$work/corpus"
  echo "-- $target"
  status=0
  "build/fuzz/tools/fuzz/$target" -max_total_time="${FUZZ_SECONDS:-30}" -print_final_stats=1 \
    -max_len=4096 -artifact_prefix="$work/" "$work/corpus" "tools/fuzz/corpus/$target" \
    >"$work/log" 2>&1 || status=$?
  grep -E "^(stat::number_of_executed_units|Done)" "$work/log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$work/log" >&2
    echo "fuzz target $target failed (exit $status); the input is in $work" \
      "(reproduce: build/fuzz/tools/fuzz/$target FILE)" >&2
    exit 1
  fi
  rm -rf "$work"
done

step "interop with @dcl/ecs"
bash tests/interop/run.sh build/asan/tools/scenecrdt

step "browser: wasm runtime, TypeScript client, viewer in headless chromium"
bash tests/web/run.sh build/asan/tools/scenecrdt

step "all tests passed"
