#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bindings/python/run_tests.sh BUILD_DIR [SCENECRDT] [PYTEST ARGS...]: runs the pytest suite
# of the `scenecrdt` Python module built in BUILD_DIR (target scenecrdt_python) with Debian's
# /usr/bin/python3 (docs/BINDINGS.md): replays against `scenecrdt replay --world`, decode and
# encode against the CLI, two Clients through a `scenecrdt serve` started here, and the
# Hypothesis convergence properties (with statistics). SCENECRDT defaults to
# BUILD_DIR/tools/scenecrdt. A sanitized BUILD_DIR works: libasan is preloaded into python.
# Needs python3-pytest, python3-hypothesis, python3-numpy (scripts/deps.sh).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bindings/python/run_tests.sh BUILD_DIR [SCENECRDT] [PYTEST ARGS...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
cli="$build/tools/scenecrdt"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then cli=$1; shift; fi
python=${PYTHON:-/usr/bin/python3}
[ -x "$cli" ] || { echo "run_tests.sh: $cli not found" >&2; exit 2; }
ls "$build"/bindings/python/scenecrdt/_native*.so >/dev/null 2>&1 ||
  { echo "run_tests.sh: no module in $build/bindings/python/scenecrdt (build scenecrdt_python)" >&2; exit 2; }

# shellcheck source=bindings/test_env.sh
source "$(dirname "$0")/../test_env.sh"

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

echo "-- pytest ($python, server on port $port, $(elapsed))"
# Run from the work folder: no .pytest_cache or .hypothesis in the source tree.
(cd "$work" && SCENECRDT_CLI="$cli" SCENECRDT_URL="tcp://127.0.0.1:$port" \
  PYTHONPATH="$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}" LD_PRELOAD="$preload" \
  "$python" -m pytest -p no:cacheprovider -q --hypothesis-show-statistics \
  "$here/tests" "$@") || fail "pytest"
echo "run_tests.sh: Python binding tests passed ($(elapsed))"
