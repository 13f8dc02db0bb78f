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
# Background steps still running when a foreground step fails are stopped with their children.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
background=()
forget() {  # a finished background step: its pid may be reused
  local i
  for i in "${!background[@]}"; do [ "${background[$i]}" != "$1" ] || unset "background[$i]"; done
}
trap 'for pid in "${background[@]}"; do pkill -CONT -s "$pid" 2>/dev/null; kill_tree "$pid"; done' EXIT
# Waits for a background step, prints its log and stops the script when it failed.
finish() {  # NAME PID LOG
  local status=0
  wait "$2" || status=$?
  forget "$2"
  cat "$3"
  rm -f "$3"
  [ "$status" -eq 0 ] || { echo "$1 failed" >&2; exit 1; }
}

step "dependencies of the C++ build (scripts/deps.sh --build); the rest installs meanwhile"
bash scripts/deps.sh --build
deps_log=$(mktemp)
bash scripts/deps.sh >"$deps_log" 2>&1 &
deps_pid=$!
background+=("$deps_pid")

step "clang-format"
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror

step "build under ASan+UBSan (preset asan: warnings are errors)"
cmake --preset asan
cmake --build --preset asan

step "the other dependencies (clang, emscripten, chromium, mono)"
finish "scripts/deps.sh" "$deps_pid" "$deps_log"

# The docs snippets (ctest label "docs") run once, all of them, in their own step below: with
# --strict, after the web build the JavaScript ones need.
step "GoogleTest suites and the other ctest tests under ASan+UBSan (ctest --preset asan -LE docs)"
ctest --preset asan --label-exclude docs

# The Debian packages need a release build of their own: it compiles in the background, at a
# lower priority, through the steps below that leave cores idle (servers, browsers, sockets).
step "Debian packages: viewer (scripts/build_web.sh), then the release build started in the background"
bash scripts/build_web.sh --quiet
rm -rf build/package-web && cp -r build/web build/package-web  # the web step rebuilds build/web
package_log=$(mktemp)
# Its own session (setsid), so that it can be paused as a whole (below): by session, not by
# process group, since ninja starts every compile in a process group of its own.
setsid nice -n 10 bash scripts/package.sh --build-dir build/package --web build/package-web \
  >"$package_log" 2>&1 &
package_pid=$!
background+=("$package_pid")

# The bindings' tests (one core, mono then pytest) run while converge uses the other.
step "bindings: C# (mono) and Python (pytest, Hypothesis) started in the background"
bindings_log=$(mktemp)
( set -e
  bash bindings/csharp/run_tests.sh build/asan
  bash bindings/python/run_tests.sh build/asan ) >"$bindings_log" 2>&1 &
bindings_pid=$!
background+=("$bindings_pid")

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
finish "bindings tests" "$bindings_pid" "$bindings_log"

step "fuzz targets (clang libFuzzer, ${FUZZ_SECONDS:-20}s each, $(nproc) at once)"
bash scripts/fuzz_all.sh

step "interop with @dcl/ecs"
bash tests/interop/run.sh build/asan/tools/scenecrdt

# The package build is paused meanwhile: the browser tests' allocation and frame-time checks
# sample V8's heap and want the cores they had before (a compile beside them fails them).
step "browser: wasm runtime, TypeScript client, viewer in headless chromium (package build paused)"
pkill -STOP -s "$package_pid" 2>/dev/null || true
bash tests/web/run.sh build/asan/tools/scenecrdt
pkill -CONT -s "$package_pid" 2>/dev/null || true

step "docs snippets, the web ones included (tests/docs/run_snippets.sh --strict)"
bash tests/docs/run_snippets.sh build/asan --strict

step "Debian packages: the background build's result"
finish "scripts/package.sh" "$package_pid" "$package_log"

step "Debian packages: extract, run (scripts/package_test.sh; own temporary folders and ports)"
timeout 3600 bash scripts/package_test.sh --packages build/package

step "all tests passed"
