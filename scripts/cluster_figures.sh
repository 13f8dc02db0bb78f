#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The figures of docs/CLUSTER.md "Figures", in one run: a redis-server (unix socket, AOF,
# appendfsync always) and three `scenecrdt serve --redis` nodes; `scenecrdt load` across the
# three nodes, then the same load on one node; Redis CPU and memory; the scene stream's length
# every 5 s during a 60 s run with compaction; last, the fail-over time: `load --kill-pid`
# kills node 1 with -9 under FAILOVER_CLIENTS writing clients. Usage:
#   bash scripts/cluster_figures.sh [BINARY]      (default build/release/tools/scenecrdt)
# Environment: CLIENTS (200), MOVERS (100), RATE (20), DURATION (20), LONG (60),
# FAILOVER_CLIENTS (100), ONLY (empty: everything; "failover": the fail-over figure alone).
set -euo pipefail
if [[ "${1:-}" == "--help" ]]; then
  sed -n 3,11p "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
bin=$(realpath "${1:-build/release/tools/scenecrdt}")
[[ -x "$bin" ]] || { echo "cluster_figures: no $bin; build it with cmake --preset release" >&2; exit 2; }
clients=${CLIENTS:-200} movers=${MOVERS:-100} rate=${RATE:-20} duration=${DURATION:-20}
long=${LONG:-60} failover_clients=${FAILOVER_CLIENTS:-100} only=${ONLY:-}
dir=$(mktemp -d /tmp/scenecrdt-cluster.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
sock=$dir/redis.sock
redis-server --port 0 --unixsocket "$sock" --appendonly yes --appendfsync always --save '' \
  --dir "$dir" --logfile "$dir/redis.log" &
pids+=($!)
redis_pid=$!
for _ in $(seq 100); do redis-cli -s "$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
urls=()
for i in 0 1 2; do
  port=$((17700 + 10 * i))
  "$bin" serve --redis "unix://$sock" --tcp "127.0.0.1:$port" --http off \
    --compact-interval-ms 5000 --compact-retain-ms 2000 2>"$dir/node$i.log" &
  pids+=($!)
  urls+=("tcp://127.0.0.1:$port")
done
sleep 2
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
run_load() {  # label servers scene
  local before after
  before=$(cpu "$redis_pid")
  "$bin" load --server "$2" --scene "$3" --clients "$clients" --movers "$movers" --rate "$rate" \
    --duration "$duration" --json >"$dir/$1.json"
  after=$(cpu "$redis_pid")
  echo "$1: $(cat "$dir/$1.json")"
  echo "$1: redis cpu $(awk -v a="$before" -v b="$after" -v hz="$hz" -v d="$duration" \
    'BEGIN{printf "%.1f%%", 100*(b-a)/hz/d}') (over the run, joins and warm-up included)," \
    "used_memory $(redis-cli -s "$sock" info memory | awk -F: '/^used_memory:/{print $2}' | tr -d '\r')"
}
if [[ "$only" != failover ]]; then
  run_load three_nodes "$(IFS=,; echo "${urls[*]}")" fig3
  run_load one_node "${urls[0]}" fig1
  echo "stream length every 5 s over ${long} s of load on three nodes (compaction every 5 s):"
  "$bin" load --server "$(IFS=,; echo "${urls[*]}")" --scene figlong --clients "$clients" \
    --movers "$movers" --rate "$rate" --duration "$long" --json >"$dir/long.json" &
  load_pid=$!
  for t in $(seq 5 5 $((long + 5))); do
    sleep 5
    echo "  t=${t}s XLEN $(redis-cli -s "$sock" xlen 'scenecrdt:{figlong}:log')" \
      "used_memory $(redis-cli -s "$sock" info memory | awk -F: '/^used_memory:/{print $2}' | tr -d '\r')"
  done
  wait "$load_pid" || true
  echo "long: $(cat "$dir/long.json")"
fi
# Last: it kills node 1 (its clients come back on nodes 2 and 3).
echo "fail-over: ${failover_clients} clients on node 1 writing 10 Hz each, node 1 killed with -9 after 3 s:"
"$bin" load --kill-pid "${pids[1]}" --server "$(IFS=,; echo "${urls[*]}")" --scene figfail \
  --clients "$failover_clients" --rate 10 --warmup 3 --timeout 60 --json >"$dir/failover.json" ||
  echo "fail-over: load exited $? (see below)"
echo "failover: $(cat "$dir/failover.json")"
