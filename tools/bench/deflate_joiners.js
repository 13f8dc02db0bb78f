// SPDX-License-Identifier: Apache-2.0
// Joiner storms over permessage-deflate (issue 23 item 5; run by tools/bench/deflate_joiners.sh,
// figures in docs/SERVER.md "Compression"). Needs node's `ws` (NODE_PATH), which offers
// permessage-deflate by default, as browsers do.
//   node deflate_joiners.js fill PORT SCENE transforms|blobs COUNT [PAYLOAD_BYTES]
//     writes COUNT entities over ws://127.0.0.1:PORT/dcl/SCENE (no deflate), then waits until a
//     fresh reader's snapshot holds them all; prints the snapshot's bytes.
//   node deflate_joiners.js storm PORT SCENE JOINERS TIMEOUT_S
//     opens JOINERS /dcl/SCENE sockets at once (deflate offered) and GETs /healthz every 50 ms
//     meanwhile; prints one JSON line: joiners served (snapshot received), cut (closed before
//     it), the slowest snapshot and /healthz's worst latency.
'use strict';
const http = require('http');
const WebSocket = require('ws');

const [mode, portText, scene] = process.argv.slice(2, 5);
const port = Number(portText);
const url = `ws://127.0.0.1:${port}/dcl/${scene}`;

// One DCL PUT_COMPONENT (docs/PROTOCOL.md section 1), little-endian.
function put(entity, component, timestamp, data) {
  const b = Buffer.alloc(24 + data.length);
  b.writeUInt32LE(24 + data.length, 0);
  b.writeUInt32LE(1, 4);
  b.writeUInt32LE(entity, 8);
  b.writeUInt32LE(component, 12);
  b.writeUInt32LE(timestamp, 16);
  b.writeUInt32LE(data.length, 20);
  data.copy(b, 24);
  return b;
}

// Deterministic pseudo-random bytes (xorshift32).
let seed = 12345;
function next() {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed;
}

function transform() {
  const b = Buffer.alloc(44);
  const f = [next() % 1000, next() % 100, next() % 1000, 0, 0, 0, 1, 1, 1, 1];
  f.forEach((v, i) => b.writeFloatLE(v, i * 4));
  b.writeUInt32LE(0, 40);
  return b;
}

// Text-like payloads (lowercase letters and spaces): they deflate to about 60 %.
function blob(bytes) {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; ++i) b[i] = next() % 7 === 0 ? 32 : 97 + (next() % 26);
  return b;
}

function snapshotBytes(timeoutMs) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 << 20 });
    const timer = setTimeout(() => { ws.terminate(); resolve(-1); }, timeoutMs);
    ws.on('message', (data) => { clearTimeout(timer); ws.close(); resolve(data.length); });
    ws.on('error', () => { clearTimeout(timer); resolve(-1); });
  });
}

async function fill(kind, count, payloadBytes) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  let chunk = [];
  let chunkBytes = 0;
  let total = 0;
  const flush = () => {
    if (chunk.length) ws.send(Buffer.concat(chunk));
    chunk = [];
    chunkBytes = 0;
  };
  for (let i = 0; i < count; ++i) {
    const m = kind === 'transforms' ? put(600 + i, 1, 1, transform())
                                    : put(600 + i, 1100, 1, blob(payloadBytes));
    if (chunkBytes + m.length > 900 * 1024) flush();
    chunk.push(m);
    chunkBytes += m.length;
    total += m.length;
  }
  flush();
  setTimeout(() => ws.close(), 500);
  await new Promise((resolve) => ws.once('close', resolve));
  for (let i = 0; i < 100; ++i) {
    const n = await snapshotBytes(30000);
    if (n >= total) { console.log(JSON.stringify({ snapshot_bytes: n })); return; }
    await new Promise((r) => setTimeout(r, 200));
  }
  console.error('the scene never held everything that was sent');
  process.exit(1);
}

function healthz() {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: 20000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
    });
    req.on('error', () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
    req.on('timeout', () => req.destroy());
  });
}

async function storm(joiners, timeoutS) {
  const started = Date.now();
  const results = [];
  let pending = joiners;
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  for (let i = 0; i < joiners; ++i) {
    const r = { snapshot_ms: -1, bytes: 0, close: null, deflate: false };
    results.push(r);
    const ws = new WebSocket(url, { maxPayload: 256 << 20 });  // offers permessage-deflate
    let settled = false;
    const settle = () => { if (!settled) { settled = true; if (--pending === 0) done(); } };
    ws.on('open', () => { r.deflate = /permessage-deflate/.test(ws.extensions); });
    ws.on('message', (data) => {
      if (r.snapshot_ms < 0) { r.snapshot_ms = Date.now() - started; r.bytes = data.length; }
      settle();
    });
    ws.on('close', (code) => { r.close = code; settle(); });
    ws.on('error', () => settle());
  }
  const latencies = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      latencies.push(await healthz());
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await Promise.race([finished, new Promise((r) => setTimeout(r, timeoutS * 1000))]);
  // Joiners that got their snapshot stay a moment: a cut shows as a close before the snapshot.
  polling = false;
  await poller;
  const served = results.filter((r) => r.snapshot_ms >= 0);
  latencies.sort((a, b) => a - b);
  console.log(JSON.stringify({
    joiners,
    deflate_negotiated: results.filter((r) => r.deflate).length,
    served: served.length,
    cut: results.filter((r) => r.snapshot_ms < 0 && r.close !== null).length,
    no_answer: results.filter((r) => r.snapshot_ms < 0 && r.close === null).length,
    snapshot_bytes: served.length ? served[0].bytes : 0,
    slowest_snapshot_ms: served.length ? Math.max(...served.map((r) => r.snapshot_ms)) : -1,
    healthz_probes: latencies.length,
    healthz_max_ms: Math.round(latencies[latencies.length - 1] || 0),
    healthz_p50_ms: Math.round(latencies[Math.floor(latencies.length / 2)] || 0),
  }));
  process.exit(0);
}

if (mode === 'fill') {
  fill(process.argv[5], Number(process.argv[6]), Number(process.argv[7] || 0));
} else if (mode === 'storm') {
  storm(Number(process.argv[5]), Number(process.argv[6]));
} else {
  console.error('usage: see the comment at the top of tools/bench/deflate_joiners.js');
  process.exit(2);
}
