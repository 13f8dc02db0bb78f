#!/usr/bin/env bash
# Interop test: scenecrdt replay against the real @dcl/ecs 7.28.0 Engine.
set -euo pipefail
PROG=interop
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

usage() {
  cat <<EOF
usage: tests/interop/run.sh SCENECRDT [--streams N] [--seed S] [--jobs N] [--shuffle K] [--keep DIR]
       tests/interop/run.sh --model [options]

Checks that "SCENECRDT replay FILE" agrees with the real @dcl/ecs 7.28.0 Engine (installed from
npm with npm ci) on random DCL streams written by @dcl/ecs's own writers.

  1. npm ci in tests/interop (skipped when node_modules already matches package-lock.json)
  2. tests/data/conflicts.ops.json through @dcl/ecs (and SCENECRDT) must give
     tests/data/conflicts.expected.json
  3. gen_streams.js: N seeded random streams, each applied to a fresh Engine in one chunk and,
     as a check of @dcl/ecs itself, split into several chunks/updates
  4. compare.js: SCENECRDT replay on every stream; live Transforms (timestamp, dataHex), the
     remove-set, the harness's opaque components and append values, and entity states must match,
     except the deliberate divergences listed in tests/interop/README.md
  5. ws_interop.js (not with --model): SCENECRDT serve on free loopback ports; two @dcl/ecs
     Engines editing Transforms over ws://.../dcl/<scene>, a read-only one, and SCENECRDT send;
     all converge to what SCENECRDT pull prints, whose stateHash equals SCENECRDT replay of
     everything sent (about 10 s)
  6. ecs_transport.js (not with --model): ecs-transport/ built with npm ci + tsc and its unit
     tests (npm test); then 4 @dcl/ecs
     engines with that transport, 200 rounds of edits in systems and random disconnects, must
     all equal SCENECRDT pull; a plain WebSocket transport runs the same schedule for comparison
     (about 10 s); then ecs_transport_limit.js: one update() of 1 000 components of 4 KB goes
     out under the server's WebSocket read limit, with no disconnect (a few seconds); then
     ecs_transport_snippet.js: the node snippet of docs/ECS-TRANSPORT.md runs as written and
     its cube reaches the server (2 s); then authority_engines.js: SCENECRDT serve --authority
     owner, 3 engines with their own tokens each own 4 entities and move all 12 for 100
     rounds; every engine equals pull and each entity holds its owner's last write (2 s)
  7. cluster_interop.js (not with --model): a redis-server on a unix socket in a temporary
     directory and three SCENECRDT serve --redis nodes; two @dcl/ecs engines with that transport
     on nodes 1 and 2, SCENECRDT send on node 3; the engines converge with each other and with
     pull, and every node's stateHash equals SCENECRDT replay of everything sent (about 15 s;
     needs redis-server, scripts/deps.sh installs it); then authority_engines.js --redis-server:
     the authority schedule (3 engines, 40 rounds) on two serve --redis nodes, engines 1 and 3
     on node 1; every engine and both nodes' pulls agree, each entity holds its owner's last write

Prints "interop: N streams, M mismatches"; on mismatch also the stream, its messages
(SCENECRDT decode), the differences and both states, and exits 1. Exit 2: setup or usage error.

  --streams N   number of random streams (default 500)
  --seed S      corpus seed (default 1); the same seed gives the same streams
  --jobs N      parallel replay processes (default: number of CPUs)
  --shuffle K   also replay each stream with "--shuffle 1..K" and require the same state
                (default 0)
  --keep DIR    write the corpus to DIR and keep it (default: a temporary directory, removed
                when everything passes)
  --model       use the JS model in model/ instead of a binary (self-test of the harness)
  --no-ws       skip steps 5, 6 and 7
EOF
}

bin=""
streams=500
seed=1
jobs=""
shuffle=0
keep=""
model=0
ws=1
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --streams) [ $# -ge 2 ] || die "--streams needs a value"; streams="$2"; shift 2 ;;
    --seed) [ $# -ge 2 ] || die "--seed needs a value"; seed="$2"; shift 2 ;;
    --jobs) [ $# -ge 2 ] || die "--jobs needs a value"; jobs="$2"; shift 2 ;;
    --shuffle) [ $# -ge 2 ] || die "--shuffle needs a value"; shuffle="$2"; shift 2 ;;
    --keep) [ $# -ge 2 ] || die "--keep needs a value"; keep="$2"; shift 2 ;;
    --model) model=1; shift ;;
    --no-ws) ws=0; shift ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$bin" ] || die "only one binary path expected, got '$bin' and '$1'"; bin="$1"; shift ;;
  esac
done
[[ "$streams" =~ ^[1-9][0-9]*$ ]] || die "--streams must be a positive integer"
[[ "$shuffle" =~ ^[0-9]+$ ]] || die "--shuffle must be a non-negative integer"

if [ "$model" = 1 ]; then
  [ -z "$bin" ] || die "give either a binary or --model, not both"
  bin="$INTEROP_DIR/model/scenecrdt-model"
else
  bin="$(resolve_binary "$bin")"
  if ! "$bin" replay --help >/dev/null 2>&1; then
    die "$bin has no working 'replay' subcommand ('$bin replay --help' failed): build a scenecrdt with replay, or run with --model to self-test the harness"
  fi
fi

start=$(date +%s)
ensure_node_modules

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  corpus="$(cd "$keep" && pwd)"
else
  corpus="$(mktemp -d "${TMPDIR:-/tmp}/scenecrdt-interop.XXXXXX")"
fi

note "sanity check: tests/data/conflicts.ops.json through @dcl/ecs and $(basename "$bin")"
node "$INTEROP_DIR/check_conflicts.js" --bin "$bin" >&2 || {
  note "conflicts check failed (see above); corpus not generated"
  exit 1
}

note "generating $streams streams with @dcl/ecs (seed $seed) into $corpus"
node "$INTEROP_DIR/gen_streams.js" --out "$corpus" --count "$streams" --seed "$seed" --split-check

note "replaying with $bin"
status=0
node "$INTEROP_DIR/compare.js" --bin "$bin" --dir "$corpus" ${jobs:+--jobs "$jobs"} --shuffle "$shuffle" || status=$?

if [ "$status" = 0 ] && [ "$model" = 0 ] && [ "$ws" = 1 ]; then
  note "raw-DCL WebSocket interop: @dcl/ecs engines and the C++ client through $(basename "$bin") serve"
  node "$INTEROP_DIR/ws_interop.js" --bin "$bin" ${keep:+--keep "$corpus/ws"} || status=$?
fi

if [ "$status" = 0 ] && [ "$model" = 0 ] && [ "$ws" = 1 ]; then
  note "drop-in @dcl/ecs transport with an outbox (ecs-transport/) through $(basename "$bin") serve"
  ensure_ecs_transport
  unit_log="$(mktemp)"
  (cd "$INTEROP_DIR/../../ecs-transport" && node --test test/ >"$unit_log" 2>&1) ||
    { cat "$unit_log" >&2; note "ecs-transport unit tests failed (cd ecs-transport && npm test)"; status=1; }
  rm -f "$unit_log"
  [ "$status" != 0 ] || node "$INTEROP_DIR/ecs_transport.js" --bin "$bin" ${keep:+--keep "$corpus/ecs-transport"} || status=$?
  [ "$status" != 0 ] || node "$INTEROP_DIR/ecs_transport_limit.js" --bin "$bin" || status=$?
  [ "$status" != 0 ] || node "$INTEROP_DIR/ecs_transport_snippet.js" --bin "$bin" || status=$?
  [ "$status" != 0 ] || node "$INTEROP_DIR/authority_engines.js" --bin "$bin" ${keep:+--keep "$corpus/authority"} || status=$?
fi

if [ "$status" = 0 ] && [ "$model" = 0 ] && [ "$ws" = 1 ]; then
  note "two @dcl/ecs engines on different cluster nodes (serve --redis) and the C++ client on a third"
  command -v redis-server >/dev/null 2>&1 ||
    die "redis-server not found: install it (apt-get install redis-server; scripts/deps.sh does) or skip with --no-ws"
  node "$INTEROP_DIR/cluster_interop.js" --bin "$bin" ${keep:+--keep "$corpus/cluster"} || status=$?
  # Three engines with their own tokens on two nodes, --authority owner (docs/AUTHORITY.md "Cluster").
  [ "$status" != 0 ] || node "$INTEROP_DIR/authority_engines.js" --bin "$bin" --redis-server "$(command -v redis-server)" \
    --rounds 40 ${keep:+--keep "$corpus/authority-cluster"} || status=$?
fi

if [ "$status" = 0 ] && [ -z "$keep" ]; then
  rm -rf "$corpus"
elif [ "$status" != 0 ]; then
  note "corpus kept in $corpus (re-run one stream: $bin replay $corpus/stream-NNNNN.bin; @dcl/ecs state in stream-NNNNN.ecs.json)"
fi
note "done in $(($(date +%s) - start))s"
exit "$status"
