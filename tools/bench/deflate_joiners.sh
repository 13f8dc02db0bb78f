#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Joiner storms over permessage-deflate, two server binaries alternated (issue 23 item 5): for
# each round and binary, a fresh `serve` (one io thread, default --slow-consumer-ms 5000) gets
#   A. scene "blobs": 2 000 entities x 7 800-byte components (~15.7 MB), then 10 joiners;
#   B. scene "moving": 20 000 Transforms (~1.4 MB), then 150 joiners;
# all at once, each offering permessage-deflate (node `ws`), while /healthz is polled.
# Prints per run: joiners served and cut, the slow_consumer drops the server logged, the
# server CPU seconds the storm took, the slowest snapshot and /healthz's worst latency.
# usage: tools/bench/deflate_joiners.sh BIN_BEFORE BIN_AFTER [ROUNDS] [PORT]
#   NODE_PATH must hold `ws` (e.g. npm ci --prefix tests/interop; NODE_PATH=tests/interop/node_modules)
set -euo pipefail
if [[ $# -lt 2 || $1 == --help ]]; then
  sed -n '3,12p' "$0"
  exit 2
fi
BEFORE=$1
AFTER=$2
ROUNDS=${3:-2}
PORT=${4:-7890}
JS="$(dirname "$0")/deflate_joiners.js"
WORK=$(mktemp -d)
SERVER=
trap '[[ -n $SERVER ]] && kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() {  # LABEL BIN SCENE KIND COUNT BYTES JOINERS
  local label=$1 bin=$2 scene=$3 kind=$4 count=$5 bytes=$6 joiners=$7
  rm -rf "$WORK/data"
  "$bin" serve --data "$WORK/data" --tcp off --http "127.0.0.1:$PORT" --no-fsync \
    --rate 1000000 --burst 1000000 2> "$WORK/serve.log" &
  SERVER=$!
  for _ in $(seq 100); do
    grep -q "listening ws://" "$WORK/serve.log" && break
    sleep 0.1
  done
  node "$JS" fill "$PORT" "$scene" "$kind" "$count" "$bytes" > /dev/null
  local t0 t1 result
  t0=$(ticks $SERVER)
  result=$(node "$JS" storm "$PORT" "$scene" "$joiners" 120)
  sleep 1
  t1=$(ticks $SERVER)
  local drops
  drops=$(grep -c "reason=slow_consumer" "$WORK/serve.log" || true)
  kill $SERVER
  wait $SERVER || true
  SERVER=
  echo "$label $scene joiners=$joiners slow_consumer_drops=$drops" \
    "server_cpu_s=$(echo "scale=2; ($t1 - $t0) / $(getconf CLK_TCK)" | bc) $result"
}

for round in $(seq "$ROUNDS"); do
  for which in before after; do
    bin=$BEFORE
    [[ $which == after ]] && bin=$AFTER
    run "round=$round $which" "$bin" blobs blobs 2000 7800 10
    run "round=$round $which" "$bin" moving transforms 20000 0 150
  done
done
