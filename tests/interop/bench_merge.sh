#!/usr/bin/env bash
# Merge throughput: the same Transform-PUT stream through @dcl/ecs 7.28.0 (node) and through
# "scenecrdt bench merge", in the same run; prints both rates and the ratio.
set -euo pipefail
PROG=bench_merge
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

usage() {
  cat <<EOF
usage: tests/interop/bench_merge.sh SCENECRDT [--messages N] [--entities N] [--repeat N]
                                    [--seed S] [--stream FILE] [--keep FILE]

  1. writes one stream with @dcl/ecs's writers: N Transform PUTs (default 1048576) over entity
     ids 0..E-1 (default 65536, version 0), random order, timestamps 1..16 (so many equal-timestamp
     ties decided on bytes)   [or uses --stream FILE as is]
  2. applies it to a fresh @dcl/ecs Engine in node (transport.onmessage + engine.update()),
     best of --repeat runs (default 3); generation and file reading are not timed
  3. runs "SCENECRDT bench merge --json FILE --repeat R" (best of R runs, one core)
  4. prints both rates (messages/s) and the ratio scenecrdt / @dcl/ecs

Use a release build of scenecrdt (cmake --preset release && cmake --build --preset release:
build/release/tools/scenecrdt). The node side takes ~30-45 s per run for 1 M messages.

  --messages N   messages in the generated stream (default 1048576)
  --entities N   distinct entities, at most 65536 (default 65536)
  --repeat N     runs on each side, the best counts (default 3)
  --seed S       generator seed (default 1)
  --stream FILE  use this DCL stream instead of generating one (e.g. from "scenecrdt bench stream")
  --keep FILE    keep the generated stream at FILE (default: a temporary file, removed)
EOF
}

bin=""
messages=1048576
entities=65536
repeat=3
seed=1
stream=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --messages) [ $# -ge 2 ] || die "--messages needs a value"; messages="$2"; shift 2 ;;
    --entities) [ $# -ge 2 ] || die "--entities needs a value"; entities="$2"; shift 2 ;;
    --repeat) [ $# -ge 2 ] || die "--repeat needs a value"; repeat="$2"; shift 2 ;;
    --seed) [ $# -ge 2 ] || die "--seed needs a value"; seed="$2"; shift 2 ;;
    --stream) [ $# -ge 2 ] || die "--stream needs a value"; stream="$2"; shift 2 ;;
    --keep) [ $# -ge 2 ] || die "--keep needs a value"; keep="$2"; shift 2 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$bin" ] || die "only one binary path expected"; bin="$1"; shift ;;
  esac
done
for v in messages entities repeat; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "--$v must be a positive integer"
done
bin="$(resolve_binary "$bin")"
ensure_node_modules

tmp=""
errfile="$(mktemp "${TMPDIR:-/tmp}/scenecrdt-bench-stderr.XXXXXX")"
cleanup() { rm -f "$errfile"; [ -z "$tmp" ] || rm -f "$tmp"; }
trap cleanup EXIT
if [ -n "$stream" ]; then
  [ -f "$stream" ] || die "--stream $stream does not exist"
  file="$stream"
else
  if [ -n "$keep" ]; then
    file="$keep"
  else
    tmp="$(mktemp "${TMPDIR:-/tmp}/scenecrdt-bench.XXXXXX.dcl")"
    file="$tmp"
  fi
  note "generating $messages Transform PUTs over $entities entities with @dcl/ecs's writers"
  node "$INTEROP_DIR/bench_merge.js" gen --out "$file" --messages "$messages" --entities "$entities" --seed "$seed"
fi

note "@dcl/ecs: applying $(basename "$file") to a fresh Engine, best of $repeat"
ecs_json="$(node --expose-gc --max-old-space-size=4096 "$INTEROP_DIR/bench_merge.js" ecs --file "$file" --repeat "$repeat")"

note "scenecrdt: $bin bench merge --json $(basename "$file") --repeat $repeat"
ours_status=0
ours_json="$("$bin" bench merge --json "$file" --repeat "$repeat" 2>"$errfile")" || ours_status=$?
ours_err="$(cat "$errfile")"

ECS_JSON="$ecs_json" OURS_JSON="$ours_json" OURS_STATUS="$ours_status" OURS_ERR="$ours_err" \
  ECS_VERSION="$(node -p 'require(process.argv[1]).version' "$INTEROP_DIR/node_modules/@dcl/ecs/package.json")" \
  node -e '
    const ecs = JSON.parse(process.env.ECS_JSON)
    const fmt = (r) => Math.round(r).toLocaleString("en-US")
    console.log(`@dcl/ecs ${process.env.ECS_VERSION} (node ${process.version}): ${fmt(ecs.messagesPerSecond)} messages/s  (${ecs.messages} messages, best ${ecs.seconds.toFixed(3)} s)`)
    if (process.env.OURS_STATUS !== "0") {
      console.log(`scenecrdt bench merge failed (exit ${process.env.OURS_STATUS}): ${process.env.OURS_ERR.trim()}`)
      console.log("the binary needs the \"bench merge --json FILE\" subcommand; rebuild it and retry")
      process.exit(1)
    }
    const ours = JSON.parse(process.env.OURS_JSON)
    if (ours.messages !== ecs.messages) console.log(`warning: scenecrdt counted ${ours.messages} messages, node ${ecs.messages}`)
    console.log(`scenecrdt bench merge: ${fmt(ours.messagesPerSecond)} messages/s  (${ours.messages} messages, best ${Number(ours.seconds).toFixed(3)} s)`)
    console.log(`ratio scenecrdt / @dcl/ecs: ${(ours.messagesPerSecond / ecs.messagesPerSecond).toFixed(1)}x`)
  '
