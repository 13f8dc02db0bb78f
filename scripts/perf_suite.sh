#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures the performance targets of docs/ (listed in docs/PERFORMANCE.md) in one run and
# prints one Markdown table: target, measured, limit, pass/fail, command.
#   bash scripts/perf_suite.sh --quick            small sizes (CI, 2 cores: under 3 minutes)
#   bash scripts/perf_suite.sh --bin-dir DIR      full sizes, for a 16-core machine (~8 min)
# Binaries: --bin-dir DIR (a folder filled by scripts/perf_bundle.sh: scenecrdt,
# propagation_bench, redis-server, lib/*.so, tls/*.pem; LD_LIBRARY_PATH=DIR/lib is set here),
# else build/release (tools/scenecrdt, tools/bench/propagation_bench) and redis-server and
# openssl from PATH. A row whose tool is missing says "skipped" and why. Only bash, coreutils,
# grep, sed and awk are assumed on the machine.
# Options: --quick, --bin-dir DIR, --out FILE (also write the table there), --only REGEX (the
# groups to run: propagation fewdirty reparent replay snapshot load 2000 scenes cluster
# interest), --threads N (the N of "N threads", server threads of the big loads; default:
# nproc), --keep (keep the outputs: every JSON, CSV and log), --help. Exit status: 0 the suite
# ran (whatever the verdicts); 2 bad usage or no scenecrdt binary.
set -uo pipefail

usage() { sed -n "3,/^set -uo/p" "$0" | sed "\$d; s/^# \\{0,1\\}//"; }

quick=0 bin_dir="" out_file="" only="" threads="" keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=1 ;;
    --bin-dir) bin_dir=${2:?--bin-dir needs a folder}; shift ;;
    --out) out_file=${2:?--out needs a file}; shift ;;
    --only) only=${2:?--only needs a regular expression}; shift ;;
    --threads) threads=${2:?--threads needs a number}; shift ;;
    --keep) keep=1 ;;
    --help|-h) usage; exit 0 ;;
    *) echo "perf_suite: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n $bin_dir ]]; then
  bin_dir=$(cd "$bin_dir" && pwd) || { echo "perf_suite: no folder $bin_dir" >&2; exit 2; }
  sc=$bin_dir/scenecrdt pb=$bin_dir/propagation_bench redis=$bin_dir/redis-server
  export LD_LIBRARY_PATH=$bin_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  cert=$bin_dir/tls/cert.pem key=$bin_dir/tls/key.pem
else
  sc=$root/build/release/tools/scenecrdt pb=$root/build/release/tools/bench/propagation_bench
  redis=$(command -v redis-server || true)
  cert="" key=""
fi
if ! "$sc" --version >/dev/null 2>&1; then
  echo "perf_suite: $sc does not run (build it: cmake --preset release && cmake --build" \
    "--preset release --target scenecrdt propagation_bench; or give --bin-dir)" >&2
  exit 2
fi
cores=$(nproc)
threads=${threads:-$cores}
work=$(mktemp -d /tmp/scenecrdt-perf.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  if ((keep)); then log "outputs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
log() { echo "perf_suite: $*" >&2; }
want() { [[ -z $only ]] || [[ $1 =~ $only ]]; }

# Sizes: quick (CI) | full (16 cores).
if ((quick)); then
  prop_n=100000 few_n=1000000 reparent_args=100000/1000 stream_updates=200
  load_s=3 load_threads=1 big_clients=1100 big_movers=10 big_rate=10 big_load_threads=2
  int_clients=200 int_movers=50
  scene_clients=25 scene_movers=10 scene_rate=10 cluster_clients=60 cluster_movers=30
  mode="quick (small sizes: verdicts hold for these sizes only)"
else
  prop_n=1000000 few_n=1000000 reparent_args=1000000/1000 stream_updates=2000
  load_s=10 load_threads=2 big_clients=2000 big_movers=100 big_rate=20 big_load_threads=8
  int_clients=2000 int_movers=500
  scene_clients=250 scene_movers=100 scene_rate=20 cluster_clients=200 cluster_movers=100
  mode="full"
fi

rows=()
# row TARGET MEASURED LIMIT VERDICT COMMAND
row() { rows+=("| $1 | $2 | $3 | $4 | \`$5\` |"); log "$1: $2 ($4)"; }
# verdict VALUE OP LIMIT: pass/FAIL (OP: le, lt, ge); "n/a" for an empty value.
verdict() {
  [[ -z $1 ]] && { echo "n/a"; return; }
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
    ok = (op == "le") ? v <= l : (op == "lt") ? v < l : v >= l; print ok ? "pass" : "FAIL" }'
}
# json_num FILE KEY: the first number after "KEY": in FILE (flat enough for load's summary).
json_num() { grep -o "\"$2\":-\?[0-9.e+-]*" "$1" 2>/dev/null | head -1 | cut -d: -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b }'; }
# csv_col FILE NAME_PREFIX COLUMN: a Google Benchmark CSV column of the first matching row.
csv_col() {
  awk -F, -v want="$2" -v col="$3" '
    /^name,/ { for (i = 1; i <= NF; i++) { gsub(/"/, "", $i); idx[$i] = i }; next }
    idx[col] && index($1, "\"" want) == 1 { print $idx[col]; exit }' "$1"
}

# Servers: start_serve NAME ARGS... -> sets port_tcp, port_http, serve_pid (stderr in NAME.log).
start_serve() {
  local name=$1 need_http=1 i
  shift
  [[ " $* " == *" --http off "* ]] && need_http=0
  "$sc" serve "$@" 2>"$work/$name.log" &
  serve_pid=$!
  pids+=("$serve_pid")
  port_tcp="" port_http=""
  for i in $(seq 300); do
    port_tcp=$(grep -o 'listening t[a-z]*://[0-9.]*:[0-9]*' "$work/$name.log" | head -1 |
      sed 's/.*://')
    port_http=$(grep -o 'listening wss*://[0-9.]*:[0-9]*' "$work/$name.log" | head -1 |
      sed 's/.*://')
    [[ -n $port_tcp ]] && { ((!need_http)) || [[ -n $port_http ]]; } && return 0
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
  done
  log "serve $name did not start: $(tail -3 "$work/$name.log")"
  return 1
}
stop_pid() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
# GET PATH from 127.0.0.1:PORT with bash's /dev/tcp (no curl assumed).
http_get() {
  exec 9<>"/dev/tcp/127.0.0.1/$1" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&9
  timeout 5 cat <&9
  exec 9<&-
}
metric() { http_get "$1" /metrics | awk -v m="$2" '$1 == m { print $2; exit }'; }

log "mode $mode, $cores cores, --threads $threads, binaries $(dirname "$sc")"

# --- Propagation: 1 thread vs the reference kernel, 2 threads, N threads -------------------
if want propagation; then
  if [[ -x $pb ]]; then
    cmd="propagation_bench --benchmark_filter=BM_VersusReference/4/$prop_n/ --benchmark_format=csv"
    "$pb" --benchmark_filter="BM_VersusReference/4/$prop_n/" --benchmark_format=csv \
      >"$work/versus.csv" 2>/dev/null
    v=$(csv_col "$work/versus.csv" BM_VersusReference/4/$prop_n/ 1t_over_ref_cpu | xargs printf %.3f)
    row "propagation, all dirty random forest $prop_n: 1 thread / reference kernel (CPU)" \
      "${v:-none}" "<= 1.0" "$(verdict "$v" le 1.0)" "$cmd"
    v=$(csv_col "$work/versus.csv" BM_VersusReference/4/$prop_n/ 2t_over_1t | xargs printf %.3f)
    row "propagation, all dirty random forest $prop_n: 2 threads / 1 thread (wall)" \
      "${v:-none}" "<= 0.55" "$(verdict "$v" le 0.55)" "$cmd"
  else
    row "propagation vs the reference kernel" "skipped: no propagation_bench" "<= 1.0" "n/a" \
      "propagation_bench --benchmark_filter=BM_VersusReference"
  fi
  base="bench propagate --shape random --entities $prop_n --json"
  "$sc" $base --threads 1 >"$work/p1.json" 2>/dev/null
  "$sc" $base --threads "$threads" >"$work/pn.json" 2>/dev/null
  t1=$(json_num "$work/p1.json" ms_per_update) tn=$(json_num "$work/pn.json" ms_per_update)
  s=$(ratio "$t1" "$tn")
  row "propagation, all dirty random forest $prop_n: $threads threads speed-up over 1 ($t1 / $tn ms)" \
    "${s:-none}" ">= $((threads / 2))" "$(verdict "$s" ge $((threads / 2)))" \
    "scenecrdt $base --threads 1; scenecrdt $base --threads $threads"
fi

# --- Few dirty, reparent ---------------------------------------------------------------
if want fewdirty; then
  cmd="scenecrdt bench propagate --shape random --entities $few_n --threads 1 --dirty-fraction 0.0001 --updates 201 --json"
  "$sc" ${cmd#scenecrdt } >"$work/few.json" 2>/dev/null
  v=$(awk -v ms="$(json_num "$work/few.json" ms_per_update)" 'BEGIN { if (ms != "") printf "%.1f", ms * 1000 }')
  row "propagation, few dirty: 0.01 % of $few_n, median us per update" "${v:-none}" "<= 20" \
    "$(verdict "$v" le 20)" "$cmd"
fi
if want reparent; then
  if [[ -x $pb ]]; then
    cmd="propagation_bench --benchmark_filter=BM_Reparent/$reparent_args/ --benchmark_format=csv"
    "$pb" --benchmark_filter="BM_Reparent/$reparent_args/" --benchmark_format=csv \
      >"$work/reparent.csv" 2>/dev/null
    v=$(csv_col "$work/reparent.csv" "BM_Reparent/$reparent_args/" real_time)
    unit=$(csv_col "$work/reparent.csv" "BM_Reparent/$reparent_args/" time_unit)
    v=$(awk -v x="$v" -v u="$unit" 'BEGIN {
      if (x != "") printf "%.3f", x * (u == "ns" ? 1e-6 : u == "us" ? 1e-3 : u == "s" ? 1e3 : 1) }')
    row "propagation, reparent 0.1 % of ${reparent_args%/*} (random forest): next update, ms" \
      "${v:-none}" "<= 5" "$(verdict "$v" le 5)" "$cmd"
  else
    row "propagation, reparent" "skipped: no propagation_bench" "<= 5 ms" "n/a" \
      "propagation_bench --benchmark_filter=BM_Reparent"
  fi
fi

# --- Decode + merge, and whole-process replay against it --------------------------------
if want replay; then
  f=$work/stream.dcl
  "$sc" bench stream -o "$f" --entities 1000 --updates "$stream_updates" >/dev/null 2>&1
  "$sc" bench merge "$f" --repeat 5 --json >"$work/merge.json" 2>/dev/null
  merge=$(json_num "$work/merge.json" messagesPerSecond)
  messages=$(json_num "$work/merge.json" messages)
  m=$(awk -v r="$merge" 'BEGIN { if (r != "") printf "%.1f", r / 1e6 }')
  row "decode + merge Transform PUTs, one core, M messages/s" "${m:-none}" ">= 30" \
    "$(verdict "$m" ge 30)" "scenecrdt bench merge F --repeat 5 --json"
  best=""
  for _ in 1 2 3; do  # CPU seconds (user + system) of the whole process, best of 3
    TIMEFORMAT='%U %S'
    t=$({ time "$sc" replay "$f" >/dev/null 2>&1; } 2>&1 | awk '{ print $1 + $2 }')
    best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  r=$(awk -v n="$messages" -v t="$best" -v m="$merge" 'BEGIN { if (t > 0 && m > 0) printf "%.2f", n / t / m }')
  row "replay (whole process, CPU) / merge rate, $messages PUTs" "${r:-none}" ">= 0.7" \
    "$(verdict "$r" ge 0.7)" \
    "scenecrdt bench stream -o F --entities 1000 --updates $stream_updates; time scenecrdt replay F"
fi

# --- Late-join snapshot of 3 000 Transforms ---------------------------------------------
if want snapshot && start_serve snap --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data "$work/snap"; then
  "$sc" gen --shape random --entities 3000 -o "$work/3000.dcl" >/dev/null 2>&1
  "$sc" send --server "tcp://127.0.0.1:$port_tcp" --scene s3000 --frame-messages 1000 \
    "$work/3000.dcl" >/dev/null 2>&1
  b0=$(metric "$port_http" scenecrdt_state_bytes_total) u0=$(metric "$port_http" scenecrdt_state_build_microseconds_total)
  "$sc" pull --server "tcp://127.0.0.1:$port_tcp" --scene s3000 >/dev/null 2>&1
  b1=$(metric "$port_http" scenecrdt_state_bytes_total) u1=$(metric "$port_http" scenecrdt_state_build_microseconds_total)
  stop_pid "$serve_pid"
  bytes=$(awk -v a="$b0" -v b="$b1" 'BEGIN { if (b != "") print b - a }')
  ms=$(awk -v a="$u0" -v b="$u1" 'BEGIN { if (b != "") printf "%.3f", (b - a) / 1000 }')
  cmd="scenecrdt serve --tcp 127.0.0.1:P --http 127.0.0.1:H --data D; scenecrdt gen --shape random --entities 3000 -o F; scenecrdt send --server tcp://127.0.0.1:P --scene s3000 --frame-messages 1000 F; scenecrdt pull --server tcp://127.0.0.1:P --scene s3000; GET /metrics before and after the pull: scenecrdt_state_bytes_total, scenecrdt_state_build_microseconds_total"
  # As built for the joining client: `pull` offers zstd frames by default (the state frames
  # are compressed once and shared; the build time includes that).
  row "late-join snapshot of 3 000 Transforms (to a default client): bytes" "${bytes:-none}" "<= 210000" \
    "$(verdict "$bytes" le 210000)" "$cmd"
  row "late-join snapshot of 3 000 Transforms (to a default client): build ms" "${ms:-none}" "<= 2" \
    "$(verdict "$ms" le 2)" "$cmd"
fi

# --- The standard load: 200 clients, 100 movers, 20 Hz, default serve ------------------
# run_load NAME URL EXTRA... -> NAME.json
run_load() {
  local name=$1 url=$2
  shift 2
  "$sc" load --server "$url" --scene "$name" --duration "$load_s" --server-pid "$serve_pid" \
    --json "$@" >"$work/$name.json" 2>"$work/$name.err"
}
load_row() {  # NAME TARGET LIMIT_MS COMMAND: p99, with bytes and CPU beside it
  local p99 cpu bytes joined
  p99=$(json_num "$work/$1.json" p99) cpu=$(json_num "$work/$1.json" server_cpu_percent)
  bytes=$(json_num "$work/$1.json" bytes_per_client_per_second)
  joined="$(json_num "$work/$1.json" connected)/$(json_num "$work/$1.json" clients)"
  [[ -z $p99 ]] && p99="" && log "$1: $(tail -2 "$work/$1.err")"
  row "$2: p99 ms" "${p99:-none: $(tail -1 "$work/$1.err" | cut -c1-80)} (clients $joined, server CPU ${cpu:-?} %, ${bytes:-?} B/client/s)" \
    "<= $3" "$(verdict "$p99" le "$3")" "$4"
}
std="--clients 200 --movers 100 --rate 20 --threads $load_threads"
if want load && start_serve std --tcp 127.0.0.1:0 --http off --data "$work/std"; then
  u=tcp://127.0.0.1:$port_tcp
  run_load std-default "$u" $std
  run_load std-plain "$u" $std --compression none
  stop_pid "$serve_pid"
  c="scenecrdt serve --tcp 127.0.0.1:P --http off --data D; scenecrdt load --server tcp://127.0.0.1:P --scene S $std --duration $load_s --server-pid PID --json"
  load_row std-default "standard load, default client (zstd frames)" 5 "$c"
  b=$(json_num "$work/std-default.json" bytes_per_client_per_second)
  row "standard load, default client: bytes per client per second (Colyseus: 41 700)" \
    "${b:-none}" "< 41700" "$(verdict "$b" lt 41700)" "$c"
  load_row std-plain "standard load, plain frames" 5 "$c --compression none"
  if [[ -z $cert && -n $(command -v openssl) ]]; then
    cert=$work/cert.pem key=$work/key.pem
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
      -keyout "$key" -out "$cert" -subj /CN=localhost \
      -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" >/dev/null 2>&1
  fi
  if [[ -f $cert ]] && start_serve tls --tcp 127.0.0.1:0 --http off --data "$work/tls" \
    --tls-cert "$cert" --tls-key "$key"; then
    run_load std-tls "tls://127.0.0.1:$port_tcp" $std --ca "$cert"
    stop_pid "$serve_pid"
    load_row std-tls "standard load over TLS (default client)" 5 \
      "scenecrdt serve --tcp 127.0.0.1:P --http off --data D --tls-cert C --tls-key K; scenecrdt load --server tls://127.0.0.1:P --ca C --scene S $std --duration $load_s --server-pid PID --json"
  else
    row "standard load over TLS" "skipped: no certificate (no openssl, no DIR/tls)" "<= 5" "n/a" "-"
  fi
fi

# --- Many clients in one scene (crosses the per-address cap of a default serve) ---------
big="--clients $big_clients --movers $big_movers --rate $big_rate --threads $big_load_threads"
if want 2000 && start_serve big --tcp 127.0.0.1:0 --http off --data "$work/big" --threads "$threads"; then
  run_load big "tcp://127.0.0.1:$port_tcp" $big
  stop_pid "$serve_pid"
  load_row big "$big_clients clients in one scene, $big_movers movers at $big_rate Hz, serve --threads $threads" \
    10 "scenecrdt serve --tcp 127.0.0.1:P --http off --data D --threads $threads; scenecrdt load --server tcp://127.0.0.1:P --scene S $big --duration $load_s --server-pid PID --json"
fi

# --- 8 scenes on one server against 8 servers (one scene each) --------------------------
scene="--clients $scene_clients --movers $scene_movers --rate $scene_rate"
# scenes_run LABEL URL... (one per scene; the same URL 8 times for one server): prints the
# worst and the median p99 of the 8 generators.
scenes_run() {
  local label=$1 i lp=()
  shift
  for i in 0 1 2 3 4 5 6 7; do
    # Distinct source addresses per generator, so no address meets the per-address cap.
    "$sc" load --server "${@:i+1:1}" --scene "$label$i" $scene --duration "$load_s" \
      --source-ip "127.0.$((i + 1)).1" --json >"$work/$label$i.json" 2>"$work/$label$i.err" &
    lp+=($!)
  done
  for i in "${lp[@]}"; do wait "$i"; done
  for i in 0 1 2 3 4 5 6 7; do json_num "$work/$label$i.json" p99; done | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 8) print v[8], (v[4] + v[5]) / 2 }'
}
if want scenes && start_serve scenes --tcp 127.0.0.1:0 --http off --data "$work/scenes" --threads "$threads"; then
  urls=()
  for i in 0 1 2 3 4 5 6 7; do urls+=("tcp://127.0.0.1:$port_tcp"); done
  one="" one_median=""
  read -r one one_median < <(scenes_run one "${urls[@]}")
  stop_pid "$serve_pid"
  urls=() sp=()
  per=$(((threads + 7) / 8))
  for i in 0 1 2 3 4 5 6 7; do
    start_serve "sep$i" --tcp 127.0.0.1:0 --http off --data "$work/sep$i" --threads "$per" || break
    urls+=("tcp://127.0.0.1:$port_tcp") sp+=("$serve_pid")
  done
  sep="" sep_median=""
  [[ ${#urls[@]} -eq 8 ]] && read -r sep sep_median < <(scenes_run sep "${urls[@]}")
  for p in "${sp[@]}"; do stop_pid "$p"; done
  c="scenecrdt serve --tcp 127.0.0.1:P --http off --data D --threads $threads; for I in 1..8: scenecrdt load --server tcp://127.0.0.1:P --scene SI $scene --duration $load_s --source-ip 127.0.I.1 --json, all at once"
  row "8 scenes x $scene_clients clients on one serve --threads $threads: worst p99 ms" \
    "${one:-none}" "<= 10" "$(verdict "$one" le 10)" "$c"
  r=$(ratio "${one_median:-}" "$sep_median")
  row "8 scenes x $scene_clients: median p99 on one server / on 8 servers of --threads $per (${one_median:-?} / ${sep_median:-?} ms; worst ${sep:-?} ms on 8 servers)" \
    "${r:-none}" "<= 1.25" "$(verdict "$r" le 1.25)" "the same, then against 8 x scenecrdt serve --threads $per (one scene each)"
fi

# --- 3-node cluster through Redis ------------------------------------------------------
if want cluster; then
  if [[ -n $redis && -x $redis ]]; then
    "$redis" --port 0 --unixsocket "$work/redis.sock" --appendonly yes --appendfsync always \
      --save '' --dir "$work" --logfile "$work/redis.log" &
    rp=$!
    pids+=("$rp")
    for _ in $(seq 100); do [[ -S $work/redis.sock ]] && break; sleep 0.1; done
    urls=() np=()
    for i in 0 1 2; do
      start_serve "node$i" --redis "unix://$work/redis.sock" --tcp 127.0.0.1:0 --http off || break
      urls+=("tcp://127.0.0.1:$port_tcp") np+=("$serve_pid")
    done
    cl="--clients $cluster_clients --movers $cluster_movers --rate 20"
    if [[ ${#urls[@]} -eq 3 ]]; then
      serve_pid=${np[0]}
      run_load cluster "$(IFS=,; echo "${urls[*]}")" $cl
      load_row cluster "3-node cluster (Redis), $cluster_clients clients across the nodes" 10 \
        "redis-server --port 0 --unixsocket S --appendonly yes --appendfsync always --save ''; 3 x scenecrdt serve --redis unix://S --tcp 127.0.0.1:PI --http off; scenecrdt load --server tcp://127.0.0.1:P1,tcp://127.0.0.1:P2,tcp://127.0.0.1:P3 --scene S $cl --duration $load_s --server-pid PID1 --json"
    fi
    for p in "${np[@]}" "$rp"; do stop_pid "$p"; done
  else
    row "3-node cluster" "skipped: no redis-server" "<= 10" "n/a" "-"
  fi
fi

# --- Interest management ----------------------------------------------------------------
# The same load over a 1 km square without and with a 50 m interest, on one serve
# (docs/INTEREST.md "Performance").
int="--clients $int_clients --movers $int_movers --rate 20 --world-size 1000 --threads $big_load_threads"
if want interest && ! "$sc" load --help 2>/dev/null | grep -q -- '--interest'; then
  row "interest: $int_clients clients over 1 km, radius 50 m" "not measured: load has no --interest yet" \
    "p99 <= 10, bytes <= 5 %" "n/a" "-"
elif want interest && start_serve interest --tcp 127.0.0.1:0 --http off --data "$work/interest" \
  --threads "$threads"; then
  run_load int-without "tcp://127.0.0.1:$port_tcp" $int
  run_load int-with "tcp://127.0.0.1:$port_tcp" $int --interest-radius 50
  stop_pid "$serve_pid"
  c="scenecrdt serve --tcp 127.0.0.1:P --http off --data D --threads $threads; scenecrdt load --server tcp://127.0.0.1:P --scene S $int --duration $load_s --server-pid PID --json"
  load_row int-without "interest baseline: $int_clients clients over 1 km, no interest" 10 "$c"
  load_row int-with "interest: $int_clients clients over 1 km, radius 50 m" 10 "$c --interest-radius 50"
  bw=$(json_num "$work/int-without.json" bytes_per_client_per_second)
  bi=$(json_num "$work/int-with.json" bytes_per_client_per_second)
  r=$(ratio "$bi" "$bw")
  row "interest: bytes per client, radius 50 m / no interest" "${r:-none}" "<= 0.05" \
    "$(verdict "$r" le 0.05)" "$c --interest-radius 50"
fi

{
  echo "scenecrdt performance suite, $mode: $(date -u +%Y-%m-%dT%H:%MZ), $cores cores ($(
    grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $("$sc" --version)"
  echo
  echo "| target | measured | limit | verdict | command |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee ${out_file:+"$out_file"}
