#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Server memory for joiners that do not read: starts `scenecrdt serve` (BIN), fills scene
# "big" with 65 000 Transforms (4.4 MB of DCL), then connects 4 joiners that send a Hello and
# never read (4 KiB receive buffers), and prints the server's RSS before and with them.
# Figures and their reading: docs/SERVER.md "Memory bounds".
# usage: tools/bench/joiner_rss.sh BIN [PORT]
set -euo pipefail
if [[ $# -lt 1 || $1 == --help ]]; then
  echo "usage: tools/bench/joiner_rss.sh BIN [PORT]   (BIN: a scenecrdt binary)"
  exit 2
fi
BIN=$1
PORT=${2:-7800}
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN" gen --shape random --entities 65000 --seed 1 -o "$WORK/big.dcl" > /dev/null
# The Hello a real client sends, captured by a listener that only records.
python3 - "$PORT" "$WORK/hello.bin" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(1); s.settimeout(30)
c, _ = s.accept(); c.settimeout(2); data = b''
try:
    while True:
        d = c.recv(65536)
        if not d: break
        data += d
except OSError:
    pass
open(sys.argv[2], 'wb').write(data)
PY
CAPTURE=$!
sleep 1
"$BIN" pull --server "tcp://127.0.0.1:$PORT" --scene big --timeout 4 > /dev/null 2>&1 || true
wait $CAPTURE
"$BIN" serve --data "$WORK/data" --tcp "127.0.0.1:$PORT" --http off --no-fsync \
  --max-entities 70000 --rate 1000000 --burst 1000000 --slow-consumer-ms 600000 \
  2> "$WORK/serve.log" &
SERVER=$!
sleep 2
"$BIN" send --server "tcp://127.0.0.1:$PORT" --scene big "$WORK/big.dcl" \
  --frame-messages 10000 > /dev/null 2>&1
rss() { awk '/VmRSS/ {print $2}' "/proc/$SERVER/status"; }
sleep 1
BEFORE=$(rss)
python3 - "$PORT" "$WORK/hello.bin" <<'PY' &
import socket, sys, time
hello = open(sys.argv[2], 'rb').read()
joiners = []
for _ in range(4):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(('127.0.0.1', int(sys.argv[1]))); s.sendall(hello); joiners.append(s)
    time.sleep(0.3)
time.sleep(8)
PY
JOINERS=$!
sleep 5
WITH=$(rss)
echo "rss_before_kib=$BEFORE rss_with_4_joiners_kib=$WITH delta_kib=$((WITH - BEFORE))"
wait $JOINERS
