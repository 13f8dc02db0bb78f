#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that every metric the Grafana dashboard (deploy/grafana/scenecrdt.json) and the alert
# rules (deploy/prometheus/alerts.yml) name is exported by a running `scenecrdt serve`: one
# embedded server (SQLite) and one cluster node on a real redis-server, /metrics of both.
# Then `promtool check rules` when promtool is installed (Debian's prometheus package is a
# 96 MB server with its own daemon: not a CI dependency; the check is skipped, and says so).
# usage: check_metric_names.sh SCENECRDT_BINARY REPO_ROOT [REDIS_SERVER]
set -euo pipefail
bin=${1:?scenecrdt binary}
root=${2:?repository root}
redis=${3:-redis-server}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/scenecrdt-deploy.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# The port in "listening ws://127.0.0.1:PORT" of a server's log, waiting at most 30 s.
http_port() {
  local log=$1 port=""
  for _ in $(seq 300); do
    port=$(grep -o 'listening ws://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://' || true)
    [ -n "$port" ] && { echo "$port"; return 0; }
    sleep 0.1
  done
  echo "no listening line in $log:" >&2; cat "$log" >&2; return 1
}

metrics() {  # metrics PORT OUT
  python3 - "$1" "$2" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10) as r:
    open(sys.argv[2], "wb").write(r.read())
PY
}

"$bin" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$tmp/data" 2>"$tmp/embedded.log" &
pids+=($!)
metrics "$(http_port "$tmp/embedded.log")" "$tmp/embedded.txt"

redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$redis" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
  >"$tmp/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$redis_port),0.2)" \
    2>/dev/null && break
  sleep 0.1
done
"$bin" serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --redis "redis://127.0.0.1:$redis_port" \
  2>"$tmp/cluster.log" &
pids+=($!)
metrics "$(http_port "$tmp/cluster.log")" "$tmp/cluster.txt"

python3 - "$root/deploy/grafana/scenecrdt.json" "$root/deploy/prometheus/alerts.yml" \
  "$tmp/embedded.txt" "$tmp/cluster.txt" <<'PY'
import json, re, sys
dashboard, alerts, *pages = sys.argv[1:]
name = re.compile(r"\b((?:scenecrdt|process)_[a-z0-9_]+)\b")
exported = set()
for page in pages:
    for line in open(page):
        if line.startswith("#") or not line.strip():
            continue
        exported.add(re.split(r"[{ ]", line, 1)[0])
wanted = {}
def walk(node, where):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("expr", "query", "definition") and isinstance(v, str):
                for n in name.findall(v):
                    wanted.setdefault(n, where)
            walk(v, where)
    elif isinstance(node, list):
        for v in node:
            walk(v, where)
walk(json.load(open(dashboard)), "deploy/grafana/scenecrdt.json")
in_expr = False
for line in open(alerts):
    stripped = line.strip()
    if stripped.startswith("expr:"):
        in_expr = True
    elif re.match(r"^[a-z_]+:", stripped) or stripped.startswith("- "):
        in_expr = False
    if in_expr:
        for n in name.findall(line):
            wanted.setdefault(n, "deploy/prometheus/alerts.yml")
missing = sorted(n for n in wanted if n not in exported)
if not wanted:
    sys.exit("no metric names found in the dashboard and the alerts")
for n in missing:
    print(f"{wanted[n]}: {n} is not exported by /metrics", file=sys.stderr)
if missing:
    sys.exit(1)
print(f"{len(wanted)} metric names of the dashboard and the alerts are exported")
PY

if command -v promtool >/dev/null 2>&1; then
  promtool check rules "$root/deploy/prometheus/alerts.yml"
else
  echo "promtool not installed (Debian's prometheus package): rule syntax not checked"
fi
