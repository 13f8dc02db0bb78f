#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a networked example against a real `scenecrdt serve --demo` on free loopback ports:
#   run_against_demo.sh CLI EXAMPLE [ARGS...]
# ARGS may contain @URL@ and @SCENE@ (the server's tcp:// URL and "demo"). Starts the server,
# waits (30 s at most) for its "listening tcp://" line, runs the example, stops the server,
# and exits with the example's status (1 when the server did not start).
set -euo pipefail
if [[ $# -lt 2 || "$1" == "--help" ]]; then
  echo "usage: run_against_demo.sh CLI EXAMPLE [ARGS...] (@URL@ and @SCENE@ are replaced)" >&2
  exit 2
fi
cli=$1
example=$2
shift 2
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
"$cli" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$work/data" --no-fsync --demo \
  2>"$work/serve.log" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's|^scenecrdt serve: listening tcp://127\.0\.0\.1:\([0-9]*\).*|\1|p' \
    "$work/serve.log" | head -1)
  [[ -n "$port" ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [[ -z "$port" ]]; then
  echo "run_against_demo.sh: the server did not start:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi
args=()
for a in "$@"; do
  a=${a//@URL@/tcp://127.0.0.1:$port}
  args+=("${a//@SCENE@/demo}")
done
"$example" "${args[@]}"
