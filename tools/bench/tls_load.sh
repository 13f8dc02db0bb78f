#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Plain vs TLS at the standard load, alternated in one run: for each round starts
# `scenecrdt serve` (BIN) on framed TCP, then with --tls-cert/--tls-key (a P-256 certificate
# made here with the openssl CLI), and runs `scenecrdt load --clients 200 --movers 100
# --rate 20 --threads 2 --json` against it. Prints one JSON line per run (latency, bytes,
# server CPU). Figures and their reading: docs/SERVER.md "TLS".
# usage: tools/bench/tls_load.sh BIN [ROUNDS] [SECONDS]
set -euo pipefail
if [[ $# -lt 1 || $1 == --help ]]; then
  echo "usage: tools/bench/tls_load.sh BIN [ROUNDS (default 3)] [SECONDS per run (default 20)]"
  exit 2
fi
BIN=$1
ROUNDS=${2:-3}
SECONDS_PER_RUN=${3:-20}
WORK=$(mktemp -d)
SERVER=
trap '[[ -n $SERVER ]] && kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
run() {  # MODE ROUND
  local mode=$1 round=$2 port=$((7800 + $2 * 10)) serve_args=() load_args=() url
  if [[ $mode == tls ]]; then
    serve_args=(--tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem")
    load_args=(--ca "$WORK/cert.pem")
    url=tls://127.0.0.1:$port
  else
    url=tcp://127.0.0.1:$port
  fi
  rm -rf "$WORK/data"
  "$BIN" serve --tcp 127.0.0.1:$port --http off --data "$WORK/data" "${serve_args[@]}" \
    2> "$WORK/serve.log" &
  SERVER=$!
  for _ in $(seq 50); do
    grep -q "listening tcp\|listening tls" "$WORK/serve.log" && break
    sleep 0.1
  done
  "$BIN" load --server "$url" "${load_args[@]}" --scene "s$round" --clients 200 --movers 100 \
    --rate 20 --duration "$SECONDS_PER_RUN" --threads 2 --server-pid $SERVER --json \
    > "$WORK/out.json"
  kill $SERVER
  wait $SERVER || true
  SERVER=
  echo "$mode round $round: $(cat "$WORK/out.json")"
}
for round in $(seq "$ROUNDS"); do
  echo "round $round of $ROUNDS" >&2
  run plain "$round"
  run tls "$round"
done
