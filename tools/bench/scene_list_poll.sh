#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The scene list under polling (issue 23 item 4), two binaries alternated in one run: builds
# once a database of ROWS register rows (100 scenes, the schema of a server without the
# scene_names table, so a newer binary fills it at open), then for each round and binary
# copies it, starts `scenecrdt serve` on it, runs 4 pollers of GET /api/scenes in tight loops
# (python3, keep-alive) beside `scenecrdt load --clients 20 --movers 50 --rate 20 --json`, and
# prints one line per run: the load's summary (latency in ms) and what the pollers got.
# Figures and their reading: docs/SERVER.md "Scene list under polling".
# usage: tools/bench/scene_list_poll.sh OLD_BIN NEW_BIN [ROUNDS] [SECONDS] [ROWS]
set -euo pipefail
if [[ $# -lt 2 || $1 == --help ]]; then
  echo "usage: tools/bench/scene_list_poll.sh OLD_BIN NEW_BIN [ROUNDS (default 3)]" \
    "[SECONDS per run (default 15)] [ROWS (default 2000000)]"
  exit 2
fi
OLD=$1
NEW=$2
ROUNDS=${3:-3}
SECONDS_PER_RUN=${4:-15}
ROWS=${5:-2000000}
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WORK"' EXIT
python3 - "$WORK/template" "$ROWS" <<'EOF'
import os, sqlite3, struct, sys
path, rows = sys.argv[1], int(sys.argv[2])
os.makedirs(path)
db = sqlite3.connect(os.path.join(path, "scenes.sqlite3"))
db.executescript("""
PRAGMA journal_mode=WAL;
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE registers(
  scene TEXT NOT NULL, component INTEGER NOT NULL, entity INTEGER NOT NULL,
  number INTEGER NOT NULL, version INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  has_data INTEGER NOT NULL, data BLOB,
  PRIMARY KEY(scene, component, entity)) WITHOUT ROWID;
CREATE INDEX registers_by_number ON registers(scene, number);
CREATE TABLE tombstones(
  scene TEXT NOT NULL, number INTEGER NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY(scene, number)) WITHOUT ROWID;
CREATE TABLE appends(
  scene TEXT NOT NULL, component INTEGER NOT NULL, entity INTEGER NOT NULL,
  number INTEGER NOT NULL, version INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(scene, component, entity, timestamp, data)) WITHOUT ROWID;
INSERT INTO meta VALUES('incarnation', 1);
""")
per_scene = max(1, rows // 100)
# A Transform (component 1): position, rotation (identity), scale, parent 0.
data = struct.pack("<3f4f3fI", 1, 2, 3, 0, 0, 0, 1, 1, 1, 1, 0)
def gen():
    for i in range(rows):
        n = 512 + i % per_scene
        yield ("stored%03d" % (i // per_scene), 1, n, n, 0, 1, 1, data)
with db:
    db.executemany("INSERT INTO registers VALUES(?,?,?,?,?,?,?,?)", gen())
db.close()
EOF
cat > "$WORK/poll.py" <<'EOF'
import http.client, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
codes, end, conn = {}, time.monotonic() + seconds, None
while time.monotonic() < end:
    try:
        conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/scenes")
        r = conn.getresponse()
        r.read()
        codes[r.status] = codes.get(r.status, 0) + 1
        if r.getheader("Connection", "") == "close":
            conn.close()
            conn = None
    except OSError:
        codes[0] = codes.get(0, 0) + 1
        conn = None
print(" ".join("%d:%d" % kv for kv in sorted(codes.items())))
EOF
run() {  # LABEL BIN ROUND POLLERS
  local label=$1 bin=$2 round=$3 pollers=$4 tcp=$((7900 + $3 * 10)) http=$((7901 + $3 * 10))
  rm -rf "$WORK/data"
  cp -r "$WORK/template" "$WORK/data"
  local t0=$(date +%s.%N)
  "$bin" serve --tcp 127.0.0.1:$tcp --http 127.0.0.1:$http --data "$WORK/data" --no-fsync \
    2> "$WORK/serve.log" &
  local server=$!
  PIDS+=("$server")
  for _ in $(seq 600); do
    grep -q "listening ws" "$WORK/serve.log" && break
    sleep 0.1
  done
  local started=$(python3 -c "print('%.1f' % ($(date +%s.%N) - $t0))")
  local polls=()
  for i in $(seq "$pollers"); do
    python3 "$WORK/poll.py" $http $((SECONDS_PER_RUN + 3)) > "$WORK/poll$i.out" &
    polls+=($!)
  done
  "$bin" load --server tcp://127.0.0.1:$tcp --scene "live$round" --clients 20 --movers 50 \
    --rate 20 --duration "$SECONDS_PER_RUN" --warmup 1 --server-pid $server --json \
    > "$WORK/out.json" || true
  local got=""
  for p in "${polls[@]}"; do wait "$p" || true; done
  for i in $(seq "$pollers"); do got="$got [$(cat "$WORK/poll$i.out")]"; done
  kill $server
  wait $server || true
  echo "$label round $round (serve up in ${started}s, $pollers pollers, HTTP status:count$got): $(cat "$WORK/out.json")"
}
for round in $(seq "$ROUNDS"); do
  echo "round $round of $ROUNDS" >&2
  run old "$OLD" "$round" 4
  run new "$NEW" "$round" 4
  run new-idle "$NEW" "$round" 0
done
