#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The red-team re-run of the production edge (docs/REDTEAM.md): attacks a real `scenecrdt
# serve` (the binary given) with real traffic and prints one Markdown table row per attack:
# attack, what was sent, expected outcome, observed outcome, PASS/FAIL. Each attack starts
# its own server(s) on free ports in a temporary directory. Raw traffic comes from
# scripts/redteam_probe.py (python3 standard library), the rest from the binary's own
# send/pull/load commands, openssl and curl.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: bash scripts/redteam.sh [--only SUBSTRING] SCENECRDT_BINARY

Attacks a scenecrdt server as a hostile week would (malformed envelopes, mutated fuzz corpus
frames, slowloris, floods at 10x the rate limit, descriptor exhaustion, kill -9 under load
x5, a corrupted database, a full disk, token tricks, slow consumers, HTTP limits, Origin,
TLS close_notify, SIGHUP without TLS, a JWT sub forging log fields, deflate joiner storms,
a cluster node's scene cap and Redis restart, DNS rebinding, idle connections holding the
/healthz reserve, writes to another principal's entities under --authority owner, server-only
components and admin ranges under --authority rules) and prints a Markdown table, one row per
attack. Servers run from
SCENECRDT_BINARY (a release or dev build, e.g. build/release/tools/scenecrdt) on free
loopback ports in a temporary directory that is removed at the end.

options:
  --only SUBSTRING  run only the attacks whose name contains SUBSTRING
  --keep            keep the temporary directory (server logs) and print its path
  --help            print this help

needs: python3, curl, openssl (and redis-server for the cluster rows). Takes about 2 minutes
on a loaded 2-core machine.
exit status: 0 every row passed; 1 a row failed; 2 bad usage or a missing tool.
EOF
}

ONLY=""
KEEP=0
BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --only) ONLY="${2:-}"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -*) echo "redteam.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) BIN="$1"; shift ;;
  esac
done
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "redteam.sh: give the scenecrdt binary to attack, e.g. build/dev/tools/scenecrdt" \
    "(build it with: cmake --build build/dev --target scenecrdt); see --help" >&2
  exit 2
fi
for tool in python3 curl openssl; do
  command -v "$tool" >/dev/null || { echo "redteam.sh: $tool is needed (bash scripts/deps.sh installs it)" >&2; exit 2; }
done
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROBE="python3 $ROOT/scripts/redteam_probe.py"
CORPUS=$ROOT/tools/fuzz/corpus
TMP=$(mktemp -d /tmp/redteam.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$KEEP" = 1 ]; then echo "logs kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

FAILS=0
ROWS=0
echo "| attack | sent | expected | observed | result |"
echo "|---|---|---|---|---|"
row() {  # attack sent expected observed ok(0/1)
  local result=PASS
  if [ "$5" != 0 ]; then result=FAIL; FAILS=$((FAILS + 1)); fi
  ROWS=$((ROWS + 1))
  local observed=${4//|//}
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "${observed//$'\n'/ }" "$result"
}
want() { [ -z "$ONLY" ] || [[ "$1" == *"$ONLY"* ]]; }

# start NAME DATA_DIR [serve args...]: starts a server, sets SPID, TCP, HTTP (0 when off).
start() {
  local name=$1 data=$2
  shift 2
  "$BIN" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$data" "$@" >"$TMP/$name.log" 2>&1 &
  SPID=$!
  PIDS+=("$SPID")
  TCP=0
  HTTP=0
  for _ in $(seq 1 200); do
    if grep -q 'listening \(ws\|wss\)://' "$TMP/$name.log" 2>/dev/null; then break; fi
    if ! kill -0 "$SPID" 2>/dev/null; then break; fi
    sleep 0.05
  done
  TCP=$(grep -o 'listening t[cl][ps]://127.0.0.1:[0-9]*' "$TMP/$name.log" | grep -o '[0-9]*$' | head -1)
  HTTP=$(grep -o 'listening wss\?://127.0.0.1:[0-9]*' "$TMP/$name.log" | grep -o '[0-9]*$' | head -1)
  TCP=${TCP:-0}
  HTTP=${HTTP:-0}
}
stop() { kill -TERM "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; }
metric() { curl -s "http://127.0.0.1:$HTTP/metrics" | awk -v k="$1" 'index($0, k) == 1 {print $NF; exit}'; }
gen() { "$BIN" gen --shape "${3:-random}" --entities "$2" --seed "${4:-1}" -o "$1" >/dev/null; }

# ---- malformed envelopes
if want malformed; then
  start malformed "$TMP/d-malformed"
  obs=$($PROBE malformed "$TCP" "$HTTP"); ok=$?
  kill -0 "$SPID" 2>/dev/null || { ok=1; obs="$obs; server died"; }
  row "malformed envelopes" "39 framed-TCP cases: sizes 0/1/4/over the limit/2^32-1, HTTP on the TCP port, bad flatbuffer offsets, 30 random bodies" \
    "each refused (Error frame, connection closed), server up" "$obs" $ok
  stop
fi

# ---- mutated fuzz corpus frames
if want fuzzed; then
  start fuzz "$TMP/d-fuzz"
  obs=$($PROBE fuzzframes "$TCP" "$HTTP" "$CORPUS" 900); ok=$?
  kill -0 "$SPID" 2>/dev/null || { ok=1; obs="$obs; server died"; }
  row "fuzzed frames" "900 mutations of tools/fuzz/corpus seeds: fuzz_envelope on tcp://, fuzz_crdt_decoder+fuzz_admission chunks on /dcl/, fuzz_web_request paths" \
    "no crash, bad input refused, /healthz 200" "$obs" $ok
  stop
fi

# ---- slowloris
if want slowloris; then
  start slowloris "$TMP/d-slowloris"
  obs=$($PROBE slowloris "$HTTP" 1000 6); ok=$?
  row "slowloris" "1000 HTTP connections each sending a header line every 0.5 s, for 6 s" \
    "/healthz answers 200 within 2 s throughout" "$obs" $ok
  stop
fi

# ---- descriptor exhaustion
if want descriptors; then
  (ulimit -n 1024; exec "$BIN" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$TMP/d-fd" >"$TMP/fd.log" 2>&1) &
  SPID=$!
  PIDS+=("$SPID")
  for _ in $(seq 1 200); do grep -q 'listening ws://' "$TMP/fd.log" 2>/dev/null && break; sleep 0.05; done
  TCP=$(grep -o 'listening tcp://127.0.0.1:[0-9]*' "$TMP/fd.log" | grep -o '[0-9]*$')
  HTTP=$(grep -o 'listening ws://127.0.0.1:[0-9]*' "$TMP/fd.log" | grep -o '[0-9]*$')
  $PROBE hold "$TCP" 1100 12 "$TMP/fd.ready" &
  HOLD=$!
  for _ in $(seq 1 400); do [ -s "$TMP/fd.ready" ] && break; sleep 0.05; done
  cpu0=$(awk '{print $14 + $15}' "/proc/$SPID/stat")
  sleep 3
  cpu1=$(awk '{print $14 + $15}' "/proc/$SPID/stat")
  hz=$($PROBE healthz "$HTTP")
  gen "$TMP/fd.dcl" 50
  t0=$(date +%s.%N)
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene honest "$TMP/fd.dcl" >"$TMP/fd-send1.out" 2>&1
  during=$?
  t1=$(date +%s.%N)
  refused=$(metric 'scenecrdt_connections_refused_total{reason="max_connections"}')
  wait "$HOLD"  # the idle connections are cut by the Hello deadline meanwhile
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene honest "$TMP/fd.dcl" >/dev/null 2>&1
  after=$?
  cpu=$(( (cpu1 - cpu0) ))
  send_s=$(python3 -c "print('%.2f' % ($t1 - $t0))")
  why=$(grep -m1 -o 'connection limit[^;(]*' "$TMP/fd-send1.out" | head -c 80)
  ok=1
  [ "${hz%% *}" = 200 ] && [ "$cpu" -lt 100 ] && [ "${refused:-0}" -gt 0 ] && [ "$after" = 0 ] &&
    { [ "$during" = 0 ] || [ -n "$why" ]; } && ok=0
  row "descriptor exhaustion" "ulimit -n 1024, $(cat "$TMP/fd.ready") idle connections opened (1100 tried), held 12 s" \
    "no accept spin; /healthz answers; an honest send is served or refused at once with a reason; served once the idle ones are cut" \
    "server CPU ${cpu} ticks/3 s; /healthz ${hz}s; send during: exit $during in ${send_s}s (${why:-served}); after: exit $after; refused ${refused:-?}" $ok
  stop
fi

# ---- flood at 10x the rate limit
if want flood; then
  start flood "$TMP/d-flood" --rate 100 --burst 100
  "$BIN" load --server "tcp://127.0.0.1:$TCP" --scene flood --clients 2 --movers 20 --rate 50 \
    --duration 4 --warmup 0 >"$TMP/flood.out" 2>&1
  limited=$(metric 'scenecrdt_refusals_total{reason="rate_limited"}')
  gen "$TMP/flood.dcl" 20
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene calm "$TMP/flood.dcl" >/dev/null 2>&1; sent=$?
  hz=$($PROBE healthz "$HTTP")
  ok=1
  [ "${limited:-0}" -gt 0 ] && [ "$sent" = 0 ] && [ "${hz%% *}" = 200 ] && ok=0
  row "flood at 10x the rate limit" "--rate 100: 2 clients x 500 messages/s for 4 s (load)" \
    "over-budget frames refused as rate_limited; another client's send acked; /healthz 200" \
    "rate_limited refusals ${limited:-0}; other send exit $sent; /healthz ${hz%% *}" $ok
  stop
fi

# ---- kill -9 under load x5
if want kill; then
  data="$TMP/d-kill"
  lost_rounds=0
  started_all=0
  for r in 1 2 3 4 5; do
    start "kill$r" "$data"
    [ "$TCP" != 0 ] || started_all=1
    "$BIN" load --server "tcp://127.0.0.1:$TCP" --scene churn --clients 20 --movers 40 --rate 20 \
      --duration 20 --warmup 0 >/dev/null 2>&1 &
    LOADPID=$!
    sleep 1  # the load's clients join and start writing
    python3 - "$r" >"$TMP/kill$r.json" <<'EOF'
import json, sys
r = int(sys.argv[1])
print(json.dumps([{"op": "put", "entity": 1000 + r * 100 + i, "timestamp": 1,
                   "position": [r, i, 0]} for i in range(100)]))
EOF
    "$BIN" encode "$TMP/kill$r.json" -o "$TMP/kill$r.dcl" >/dev/null
    "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene acked --frame-messages 10 "$TMP/kill$r.dcl" \
      >/dev/null 2>&1 || lost_rounds=$((lost_rounds + 100))
    kill -9 "$SPID"
    wait "$SPID" 2>/dev/null
    wait "$LOADPID" 2>/dev/null
  done
  start kill-check "$data"
  "$BIN" pull --server "tcp://127.0.0.1:$TCP" --scene acked >"$TMP/kill-pull.json" 2>&1
  present=$(python3 - "$TMP/kill-pull.json" <<'EOF'
import json, sys
state = json.load(open(sys.argv[1]))
have = {(t["entity"], tuple(t["position"])) for t in state["transforms"]}
print(sum((1000 + r * 100 + i, (float(r), float(i), 0.0)) in have
          for r in range(1, 6) for i in range(100)))
EOF
  )
  ok=1
  [ "$started_all" = 0 ] && [ "$lost_rounds" = 0 ] && [ "${present:-0}" = 500 ] && ok=0
  row "kill -9 under load x5" "5 rounds: 20 load clients writing, an acked send of 100 entities, then kill -9 and restart" \
    "every acknowledged write present after the restarts" \
    "acked sends $((500 - lost_rounds))/500 entities; present after restart ${present:-0}/500" $ok
  stop
fi

# ---- corrupted database
if want corrupt; then
  data="$TMP/d-corrupt"
  start corrupt "$data"
  gen "$TMP/big.dcl" 20000
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene big "$TMP/big.dcl" >/dev/null 2>&1
  stop
  db="$data/scenes.sqlite3"
  size=$(stat -c %s "$db")
  python3 -c "
import random, sys
r = random.Random(14)
with open(sys.argv[1], 'r+b') as f:
    f.seek(int(sys.argv[2]) // 2)
    f.write(bytes(r.getrandbits(8) for _ in range(65536)))" "$db" "$size"
  timeout 30 "$BIN" serve --tcp 127.0.0.1:0 --http off --data "$data" >"$TMP/corrupt2.log" 2>&1
  status=$?
  ok=1
  [ "$status" = 2 ] && grep -q corrupt "$TMP/corrupt2.log" && grep -q db-salvage "$TMP/corrupt2.log" && ok=0
  row "corrupted database" "64 KiB of garbage in the middle of a $((size / 1024)) KiB scenes.sqlite3, then serve" \
    "refuses to start: exit 2, says corrupt and names db-salvage" \
    "exit $status: $(grep -m1 -o 'corrupt[^.]*' "$TMP/corrupt2.log" | head -c 120)" $ok
fi

# ---- disk full
if want disk; then
  start disk "$TMP/d-disk" --max-db-bytes 262144
  gen "$TMP/disk.dcl" 20000
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene full --timeout 5 "$TMP/disk.dcl" >"$TMP/disk.out" 2>&1
  sent=$?
  hz=$(curl -s "http://127.0.0.1:$HTTP/healthz")
  logged=$(grep -c 'storage_unavailable error=' "$TMP/disk.log")
  ok=1
  [ "$sent" != 0 ] && grep -q storage_unavailable "$TMP/disk.out" && [[ "$hz" == storage_unavailable* ]] &&
    [ "$logged" = 1 ] && ok=0
  row "disk full" "--max-db-bytes 262144, then a 20 000-entity send" \
    "no ack for what is not durable; writer told storage_unavailable; /healthz 503; cause logged once" \
    "send exit $sent ($(grep -m1 -o 'storage_unavailable[^:]*' "$TMP/disk.out")); /healthz: ${hz%%$'\n'*}; log lines $logged" $ok
  stop
fi

# ---- token tricks
if want token; then
  head -c 48 /dev/urandom | base64 >"$TMP/jwt-secret"
  start jwt "$TMP/d-jwt" --jwt-secret "$TMP/jwt-secret"
  gen "$TMP/jwt.dcl" 10
  good=$($PROBE token "$TMP/jwt-secret" valid lobby write)
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene lobby --token "$good" "$TMP/jwt.dcl" >"$TMP/jwt-good.out" 2>&1
  s=$?
  row "token: valid (control)" "HS256, scenes [lobby], role write, exp +300 s" "joined, write acked" "send exit $s" $([ "$s" = 0 ]; echo $?)
  for trick in expired not_yet_valid wrong_key alg_none wrong_scene tampered garbage; do
    t=$($PROBE token "$TMP/jwt-secret" "$trick" lobby read)
    "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene lobby --token "$t" "$TMP/jwt.dcl" >"$TMP/jwt-$trick.out" 2>&1
    s=$?
    why=$(grep -m1 -o 'unauthorized[^(]*' "$TMP/jwt-$trick.out" | head -c 90)
    ok=1
    [ "$s" != 0 ] && [ -n "$why" ] && ok=0
    case "$trick" in
      expired) what="exp 1 h ago" ;;
      not_yet_valid) what="nbf in 1 h" ;;
      wrong_key) what="signed with another secret" ;;
      alg_none) what="alg none, no signature" ;;
      wrong_scene) what="scenes [elsewhere], joins lobby" ;;
      tampered) what="claims rewritten to scenes * role write, signature kept" ;;
      *) what="300 bytes of x" ;;
    esac
    row "token: $trick" "HS256 token: $what" \
      "refused: unauthorized with a reason" "send exit $s: ${why:-$(head -c 90 "$TMP/jwt-$trick.out")}" $ok
  done
  rd=$($PROBE token "$TMP/jwt-secret" valid lobby read)
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene lobby --token "$rd" "$TMP/jwt.dcl" >"$TMP/jwt-ro.out" 2>&1
  s=$?
  ws=$($PROBE wssend "$HTTP" "/dcl/lobby?token=$rd" "$TMP/jwt.dcl")
  dropped=$(metric 'scenecrdt_dcl_dropped_messages_total{reason="read_only"}')
  ok=1
  [ "$s" != 0 ] && [ "$ws" = 101 ] && [ "${dropped:-0}" = 10 ] && ok=0
  row "token: read role writes" "a valid read token: send over tcp://; 10 PUTs over /dcl/ (upgrade $ws)" \
    "no write merged: send refused; /dcl/ messages dropped as read_only" \
    "send exit $s ($(grep -o 'may not write[^(]*' "$TMP/jwt-ro.out")); read_only drops ${dropped:-0}/10" $ok
  rn=$($PROBE token "$TMP/jwt-secret" valid "*" read)
  codes=$($PROBE upgrades "$HTTP" "/dcl/new%d?token=$rn" 500)
  scenes=$(metric 'scenecrdt_scenes ')
  ok=1
  [ "$codes" = "404 x500" ] && [ "${scenes:-1}" -le 1 ] && ok=0
  row "token: read * creates scenes" "500 /dcl/ upgrades to new scene names with a read token for *" \
    "each refused before the upgrade (404); no scene created" "HTTP $codes; scenes in memory ${scenes:-?}" $ok
  stop
fi

# ---- slow consumers
if want slow; then
  start slow "$TMP/d-slow" --slow-consumer-ms 1000
  $PROBE slowreader "$HTTP" /dcl/busy 15 "$TMP/slow.ready" &
  READER=$!
  for _ in $(seq 1 200); do [ -s "$TMP/slow.ready" ] && break; sleep 0.05; done
  "$BIN" load --server "tcp://127.0.0.1:$TCP" --scene busy --clients 5 --movers 200 --rate 40 \
    --duration 6 --warmup 0 >"$TMP/slow.out" 2>&1
  l=$?
  drops=$(metric 'scenecrdt_drops_total{reason="slow_consumer"}')
  hz=$($PROBE healthz "$HTTP")
  kill "$READER" 2>/dev/null
  wait "$READER" 2>/dev/null
  ok=1
  [ "${drops:-0}" -ge 1 ] && [ "$l" = 0 ] && [ "${hz%% *}" = 200 ] && ok=0
  row "slow consumer" "a /dcl/ reader with a 2 KiB receive buffer that never reads, 5 writers at 8 000 messages/s for 6 s" \
    "the reader is dropped (slow_consumer) after --slow-consumer-ms; writers unaffected" \
    "slow_consumer drops ${drops:-0}; load exit $l; /healthz ${hz%% *}" $ok
  stop
fi

# ---- HTTP limits and Origin
if want http; then
  start http "$TMP/d-http"
  h=$($PROBE rawhttp "$HTTP" headers)
  p=$($PROBE rawhttp "$HTTP" path)
  b=$($PROBE rawhttp "$HTTP" body)
  o=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Origin: https://evil.example' \
    -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "http://127.0.0.1:$HTTP/scene/lobby")
  ok=1
  [ "$h" = 431 ] && [ "$p" = 431 ] && [ "$b" = 400 ] && [ "$o" = 403 ] && ok=0
  row "HTTP limits and Origin" "9 KiB header; 1 MiB path; GET with a body; upgrade with Origin https://evil.example" \
    "431; 431; 400; 403 (no resets)" "$h; $p; $b; $o" $ok
  stop
fi

# ---- TLS close_notify
if want tls; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$TMP/tls.key" -out "$TMP/tls.crt" >/dev/null 2>&1
  start tls "$TMP/d-tls" --tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key"
  obs=$($PROBE tlsclose "$TCP" "$TMP/tls.crt"); ok=$?
  hc=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/tls.crt" "https://127.0.0.1:$HTTP/healthz")
  row "TLS Error-then-close" "tls://: an empty frame (fatal envelope_invalid), read with Python's ssl (ragged EOFs reported)" \
    "Error frame, then a TLS close_notify (not a truncation)" "$obs; https /healthz $hc" $ok
  stop
fi

# ---- one server per data directory
if want lock; then
  start lock1 "$TMP/d-lock"
  first=$SPID
  timeout 20 "$BIN" serve --tcp 127.0.0.1:0 --http off --data "$TMP/d-lock" >"$TMP/lock2.log" 2>&1
  status=$?
  ok=1
  [ "$status" = 2 ] && grep -q "$first" "$TMP/lock2.log" && ok=0
  row "second server on one data directory" "serve --data D while another serve holds D" \
    "exit 2 naming the holder's PID" "exit $status: $(grep -o 'in use by [^;]*' "$TMP/lock2.log") (holder PID $first)" $ok
  stop
fi

# ---- issue 23 (edge): SIGHUP without TLS, a JWT sub forging log fields, deflate joiners
if want sighup; then
  start sighup "$TMP/d-sighup"
  kill -HUP "$SPID"
  sleep 1
  alive=dead
  kill -0 "$SPID" 2>/dev/null && alive=alive
  hz=$($PROBE healthz "$HTTP")
  kill -TERM "$SPID" 2>/dev/null
  wait "$SPID" 2>/dev/null
  status=$?
  ok=1
  [ "$alive" = alive ] && [ "$status" = 0 ] && grep -q 'reload tls=off' "$TMP/sighup.log" && ok=0
  row "SIGHUP without TLS" "kill -HUP on a server started without --tls-cert, then SIGTERM" \
    "logged (reload tls=off), still serving, then a clean stop (exit 0)" \
    "$alive after SIGHUP, /healthz ${hz%% *}, $(grep -c 'reload tls=off' "$TMP/sighup.log") log line; exit $status after SIGTERM" $ok
fi

if want logforge; then
  head -c 48 /dev/urandom | base64 >"$TMP/forge-secret"
  start logforge "$TMP/d-logforge" --jwt-secret "$TMP/forge-secret"
  gen "$TMP/forge.dcl" 5
  t=$($PROBE token "$TMP/forge-secret" log_forge lobby write)
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene lobby --token "$t" "$TMP/forge.dcl" >/dev/null 2>&1
  line=$(grep -m1 ' auth ' "$TMP/logforge.log")
  ok=1
  [[ "$line" == *'subject="alice\" role=write scene=admin" role=write '* ]] && ok=0
  row "JWT sub forging log fields" "a valid write token whose sub is: alice\" role=write scene=admin" \
    "one escaped subject field, then the real role" "${line#* auth }" $ok
  stop
fi

if want deflate; then
  start deflate "$TMP/d-deflate" --rate 1000000 --burst 1000000
  gen "$TMP/deflate.dcl" 20000
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene big "$TMP/deflate.dcl" >/dev/null 2>&1
  obs=$($PROBE deflatejoin "$HTTP" /dcl/big 60 60); ok=$?
  drops=$(grep -c 'reason=slow_consumer' "$TMP/deflate.log")
  [ "$drops" = 0 ] || ok=1
  row "deflate joiner storm" "60 /dcl/ joiners at once offering permessage-deflate, scene of 20 000 Transforms (~1.4 MB)" \
    "every snapshot served uncompressed (shared bytes), no slow_consumer drop" "$obs; slow_consumer drops $drops" $ok
  stop
fi

# ---- cluster node (serve --redis, issue 23): read tokens, idle scenes, a Redis restart
# start_redis: a redis-server on a unix socket in $TMP/redis (AOF, appendfsync always); RPID.
start_redis() {
  mkdir -p "$TMP/redis"
  redis-server --port 0 --unixsocket "$TMP/redis/sock" --dir "$TMP/redis" --appendonly yes \
    --appendfsync always --save '' >>"$TMP/redis.log" 2>&1 &
  RPID=$!
  PIDS+=("$RPID")
  for _ in $(seq 1 200); do grep -q 'Ready to accept' "$TMP/redis.log" 2>/dev/null && break; sleep 0.05; done
}
if want cluster && command -v redis-server >/dev/null; then
  start_redis
  R="unix://$TMP/redis/sock"
  printf '%s' '{"tokens":[{"token":"w","scenes":["*"],"role":"write"},{"token":"r","scenes":["*"],"role":"read"}]}' \
    >"$TMP/cluster-auth.json"
  gen "$TMP/cluster.dcl" 10
  start cluster "$TMP/d-cluster" --redis "$R" --auth "$TMP/cluster-auth.json" --max-scenes-in-memory 100
  codes=$($PROBE upgrades "$HTTP" "/dcl/new%d?token=r" 1010)
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene made --token w "$TMP/cluster.dcl" >"$TMP/cluster-send.out" 2>&1
  s=$?
  scenes=$(metric 'scenecrdt_scenes ')  # after the send: the writer's scene only
  names=$(curl -s "http://127.0.0.1:$HTTP/metrics" | grep -c 'scene="')
  ok=1
  [ "$codes" = "404 x1010" ] && [ "${scenes:-1}" = 1 ] && [ "$s" = 0 ] && [ "$names" = 0 ] && ok=0
  row "cluster: read token fills the scene cap" "serve --redis --auth --max-scenes-in-memory 100: 1010 /dcl/ upgrades to new scenes with a read token for *, then a writer's new scene" \
    "each 404 before the upgrade, no scene held; the writer gets in; /metrics names no scene" \
    "HTTP $codes; scenes in memory ${scenes:-?} (the writer's); send exit $s; scene labels on /metrics $names" $ok
  stop
  start cluster-open "$TMP/d-cluster-open" --redis "$R" --max-scenes-in-memory 100 --scene-idle-evict-ms 200
  codes=$($PROBE upgrades "$HTTP" "/dcl/open%d" 300)
  sleep 1  # the idle time, a few sweeps
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene another "$TMP/cluster.dcl" >"$TMP/cluster-open.out" 2>&1
  s=$?
  evicted=$(metric 'scenecrdt_scene_evictions_total')
  ok=1
  [ "$s" = 0 ] && [ "${evicted:-0}" -ge 100 ] && ok=0
  row "cluster: open mode fills the scene cap" "serve --redis, cap 100, idle eviction 200 ms: 300 /dcl/ upgrades to new scenes (open mode creates them), then a new scene" \
    "idle scenes evicted; the new scene gets in" "HTTP $codes; evicted ${evicted:-0}; send exit $s" $ok
  # Redis killed with -9 and restarted from its AOF; the first joiners of a new scene.
  kill -9 "$RPID"
  wait "$RPID" 2>/dev/null
  start_redis
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene another "$TMP/cluster.dcl" >"$TMP/cluster-again.out" 2>&1
  a=$?
  timeout 120 "$BIN" load --server "tcp://127.0.0.1:$TCP" --scene after-restart --clients 50 --movers 5 \
    --rate 5 --duration 1 --warmup 0 >"$TMP/cluster-load.out" 2>&1
  l=$?
  failures=$(metric 'scenecrdt_cluster_scene_load_failures_total')
  ok=1
  [ "$a" = 0 ] && [ "$l" = 0 ] && [ "${failures:-1}" = 0 ] && ok=0
  row "cluster: Redis restart, then a new scene" "redis-server killed -9 and restarted (AOF); a write acked again; load --clients 50 on a new scene" \
    "every client joins; no scene load fails" "send exit $a; load exit $l; scene load failures ${failures:-?}" $ok
  stop
fi

# ---- DNS rebinding (issue 23 item 6)
if want rebinding; then
  start rebinding "$TMP/d-rebinding"
  evil="evil.example:$HTTP"
  up=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Host: $evil" -H "Origin: http://$evil" \
    -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "http://127.0.0.1:$HTTP/dcl/lobby")
  list=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Host: $evil" "http://127.0.0.1:$HTTP/api/scenes")
  met=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Host: $evil" "http://127.0.0.1:$HTTP/metrics")
  own=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://localhost:$HTTP/api/scenes")
  refused=$(metric 'scenecrdt_http_host_refused_total')
  ok=1
  [ "$up" = 403 ] && [ "$list" = 403 ] && [ "$met" = 403 ] && [ "$own" = 200 ] &&
    [ "${refused:-0}" = 3 ] && grep -q 'reason=host_not_allowed' "$TMP/rebinding.log" && ok=0
  row "DNS rebinding" "open mode; Host $evil + Origin http://$evil: /dcl/ upgrade, /api/scenes, /metrics; then http://localhost" \
    "403 x3 (logged, counted); localhost 200" \
    "upgrade $up; /api/scenes $list; /metrics $met; localhost $own; host_refused ${refused:-?}" $ok
  stop
fi

# ---- the /healthz reserve under idle connections (issue 23 item 7)
if want reserve; then
  start reserve "$TMP/d-reserve" --max-connections 4
  plain=$($PROBE reserve "$HTTP" 40 30 -); ok_plain=$?
  ev=$(metric 'scenecrdt_http_reserve_evictions_total')
  stop
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$TMP/reserve.key" -out "$TMP/reserve.crt" >/dev/null 2>&1
  start reserve-tls "$TMP/d-reserve-tls" --max-connections 4 --tls-cert "$TMP/reserve.crt" \
    --tls-key "$TMP/reserve.key"
  tls=$($PROBE reserve "$HTTP" 40 30 "$TMP/reserve.crt"); ok_tls=$?
  ok=1
  [ "$ok_plain" = 0 ] && [ "$ok_tls" = 0 ] && ok=0
  row "/healthz reserve" "--max-connections 4; 40 idle HTTP connections (slow headers), then 30 /healthz; again over TLS with 40 handshakes never started" \
    "every /healthz answered 200 (unread reserve connections give way)" \
    "plain: $plain (evictions ${ev:-?}); TLS: $tls" $ok
  stop
fi

# ---- frames above the server's frame limit (issue 23 item 14)
if want frames; then
  python3 - "$TMP/big.dcl" "$TMP/oversized.dcl" <<'PY'
import struct, sys
def put(entity, payload):
    return struct.pack("<6I", 24 + payload, 1, entity, 1500, 1, payload) + bytes((entity + i) & 255 for i in range(payload))
open(sys.argv[1], "wb").write(b"".join(put(512 + e, 4000) for e in range(4000)))
open(sys.argv[2], "wb").write(put(512, 100) + put(513, 20000))
PY
  start frames "$TMP/d-frames"
  want_hash=$("$BIN" replay "$TMP/big.dcl" | grep -o '"stateHash": *"[0-9a-f]*"' | grep -o '[0-9a-f]\{64\}')
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene big-tcp "$TMP/big.dcl" >"$TMP/frames-tcp.out" 2>&1
  st=$?
  "$BIN" send --server "ws://127.0.0.1:$HTTP" --scene big-ws "$TMP/big.dcl" >"$TMP/frames-ws.out" 2>&1
  sw=$?
  ht=$("$BIN" pull --server "tcp://127.0.0.1:$TCP" --scene big-tcp | grep -o '"stateHash": *"[0-9a-f]*"' | grep -o '[0-9a-f]\{64\}')
  hw=$("$BIN" pull --server "tcp://127.0.0.1:$TCP" --scene big-ws | grep -o '"stateHash": *"[0-9a-f]*"' | grep -o '[0-9a-f]\{64\}')
  refused=$(grep -c frame_too_large "$TMP/frames.log")
  ok=1
  [ "$st" = 0 ] && [ "$sw" = 0 ] && [ -n "$want_hash" ] && [ "$ht" = "$want_hash" ] && [ "$hw" = "$want_hash" ] && [ "$refused" = 0 ] && ok=0
  row "frames: a 16 MB recording" "send of 4 000 PUTs of 4 KB (500 per frame made 2 MB frames) over tcp:// and ws:// to a default server (1 MiB frame limit)" \
    "both sent whole in frames under the limit the Welcome tells; pull = replay; no frame_too_large" \
    "send exit $st / $sw ($(grep -o 'in [0-9]* frames' "$TMP/frames-tcp.out")); hashes $([ "$ht" = "$want_hash" ] && echo equal || echo differ) / $([ "$hw" = "$want_hash" ] && echo equal || echo differ); frame_too_large $refused" $ok
  stop
  start frames-small "$TMP/d-frames-small" --max-frame-bytes 16384
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene limit "$TMP/oversized.dcl" >"$TMP/frames-small.out" 2>&1
  so=$?
  refused=$(grep -c frame_too_large "$TMP/frames-small.log")
  ok=1
  [ "$so" = 1 ] && grep -q 'nothing sent' "$TMP/frames-small.out" && [ "$refused" = 0 ] && ok=0
  row "frames: one message over the limit" "send of a stream holding a 20 024-byte message to serve --max-frame-bytes 16384" \
    "exit 1 before sending, naming the message and the limit; nothing reaches the server" \
    "exit $so: $(grep -o 'the message at[^;]*' "$TMP/frames-small.out"); frame_too_large $refused" $ok
  stop
fi

# ---- authority: a writer attacks entities it does not own (issue 20, docs/AUTHORITY.md)
if want authority; then
  python3 - "$TMP/alice.dcl" "$TMP/mallory.dcl" "$TMP/mallory-delete.dcl" <<'PY'
import struct, sys
def put(entity, ts, x):
    return struct.pack("<6I", 68, 1, entity, 1, ts, 44) + struct.pack("<10fI", x, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0)
open(sys.argv[1], "wb").write(put(600, 1, 1.0))
# 2 000 moves of Alice's entity with timestamps far above hers, and a deletion.
open(sys.argv[2], "wb").write(b"".join(put(600, 1000 + i, 66.0) for i in range(2000)) + struct.pack("<3I", 12, 3, 600))
open(sys.argv[3], "wb").write(struct.pack("<3I", 12, 3, 600))
PY
  cat >"$TMP/authority-auth.json" <<'EOF2'
{"tokens":[{"token":"ta","scenes":["*"],"role":"write","name":"alice"},
           {"token":"tm","scenes":["*"],"role":"write","name":"mallory"},
           {"token":"tr","scenes":["*"],"role":"read","name":"reader"}]}
EOF2
  start authority "$TMP/d-authority" --authority owner --auth "$TMP/authority-auth.json"
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene owned --token ta "$TMP/alice.dcl" >/dev/null 2>&1
  sa=$?
  ws=$($PROBE wssend "$HTTP" "/dcl/owned?token=tm" "$TMP/mallory.dcl")
  "$BIN" send --server "tcp://127.0.0.1:$TCP" --scene owned --token tm "$TMP/mallory-delete.dcl" >/dev/null 2>&1
  sm=$?
  "$BIN" own --server "tcp://127.0.0.1:$TCP" --scene owned --token tm --entity 600 --to mallory >"$TMP/own.out" 2>&1
  so=$?
  pulled=$("$BIN" pull --server "tcp://127.0.0.1:$TCP" --scene owned --token tr)
  # Alice's x = 1.0 is 0000803f in the Transform's bytes.
  held=$(echo "$pulled" | grep -c '"dataHex": *"0000803f')
  removed=$(echo "$pulled" | grep -c '"Removed"')
  corrections=$(metric scenecrdt_authority_corrections_total)
  ok=1
  [ "$sa" = 0 ] && [ "$ws" = 101 ] && [ "$held" -ge 1 ] && [ "$removed" = 0 ] && [ "$so" = 1 ] &&
    grep -q not_admin "$TMP/own.out" && [ "${corrections:-0}" -ge 1 ] && [ "${corrections:-0}" -le 2001 ] && ok=0
  row "authority: moves, deletes and a transfer of another's entity" \
    "serve --authority owner; alice creates entity 600; mallory sends 2 000 higher-stamped moves and a DELETE_ENTITY over /dcl/, a DELETE_ENTITY over tcp://, and 'own --to mallory'" \
    "alice's value holds (pull), the entity is not deleted, corrections <= refused messages, own exits 1 not_admin" \
    "send $sa, upgrade $ws, delete send $sm; pull holds alice's value: $held, removed $removed; corrections ${corrections:-none}; own exit $so ($(grep -o 'not_admin' "$TMP/own.out" | head -1))" $ok
  stop
fi

# ---- authority rules: server-only components and admin-only ranges (issue 20, docs/AUTHORITY.md)
if want authority-rules; then
  python3 - "$TMP/rules-mallory.dcl" <<'PY'
import struct, sys
def put(entity, component, ts, data):
    return struct.pack("<6I", 24 + len(data), 1, entity, component, ts, len(data)) + data
def move(entity, ts, x):
    return put(entity, 1, ts, struct.pack("<10fI", x, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0))
# 500 writes of the server-only component 1001 ("SECRET") and 500 moves inside the admin range.
open(sys.argv[1], "wb").write(b"".join(put(600, 1001, 10 + i, b"SECRET") for i in range(500)) +
                              b"".join(move(1050, 10 + i, 66.0) for i in range(500)))
PY
  cat >"$TMP/rules-auth.json" <<'EOF2'
{"tokens":[{"token":"tm","scenes":["*"],"role":"write","name":"mallory"},
           {"token":"tr","scenes":["*"],"role":"read","name":"reader"}]}
EOF2
  echo '{"components": {"1": "owner", "1001": "none"}, "admin_entities": [[1000, 1099]]}' >"$TMP/rules.json"
  start authority-rules "$TMP/d-authority-rules" --authority rules --authority-rules "$TMP/rules.json" --auth "$TMP/rules-auth.json"
  ws=$($PROBE wssend "$HTTP" "/dcl/ruled?token=tm" "$TMP/rules-mallory.dcl")
  pulled=$("$BIN" pull --server "tcp://127.0.0.1:$TCP" --scene ruled --token tr)
  secret=$(echo "$pulled" | grep -c '534543524554')  # "SECRET" in hex
  moved=$(echo "$pulled" | grep -c '"dataHex": *"00008442')  # x = 66.0
  dropped=$(curl -s "http://127.0.0.1:$HTTP/metrics" | grep -c 'reason="server_only_component"')
  ok=1
  [ "$ws" = 101 ] && [ "$secret" = 0 ] && [ "$moved" = 0 ] && [ "$dropped" -ge 1 ] && ok=0
  row "authority rules: a server-only component and an admin-only range" \
    "serve --authority rules (1001: none, entities 1000..1099: admins); mallory sends 500 PUTs of component 1001 and 500 moves of entity 1050 over /dcl/" \
    "none of them merges: pull shows neither the component's bytes nor the moves; the refusals are counted" \
    "upgrade $ws; pull: 1001 bytes $secret, moves $moved; server_only_component drop series $dropped" $ok
  stop
fi

echo
echo "$ROWS rows, $FAILS failed ($(basename "$BIN"), $(date -u +%Y-%m-%dT%H:%MZ))"
[ "$FAILS" = 0 ]
