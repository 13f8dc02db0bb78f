#!/usr/bin/env node
'use strict'
// Merge-throughput workload for @dcl/ecs, the node half of bench_merge.sh.
//
//   node bench_merge.js gen --out FILE [--entities 65536] [--messages 1048576] [--seed S]
//       one Transform-PUT stream written with @dcl/ecs's writers: entity ids 0..entities-1
//       (version 0), messages in random order, timestamps 1..16 so that many (entity, timestamp)
//       pairs repeat with different payloads (ties decided on bytes).
//   node bench_merge.js ecs --file FILE [--repeat 3] [--chunk-messages K]
//       applies the stream to a fresh Engine per repetition (transport.onmessage + engine.update(),
//       the whole stream as one chunk unless --chunk-messages) and prints one JSON line:
//       {"messages":N,"seconds":best,"messagesPerSecond":R,"runs":[...]}. Stream generation and
//       file reading are not timed.

const fs = require('fs')

const USAGE = `usage: node bench_merge.js gen --out FILE [--entities N] [--messages N] [--seed S]
       node bench_merge.js ecs --file FILE [--repeat N] [--chunk-messages K]
`

function args(argv) {
  const o = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE)
      process.exit(0)
    }
    if (!a.startsWith('--') || i + 1 >= argv.length) throw new Error(`bad argument ${a}`)
    o[a.slice(2)] = argv[++i]
  }
  return o
}

function gen(o) {
  const L = require('./lib/ecs')
  const { Rng } = require('./lib/prng')
  const entities = Number(o.entities || 65536)
  const messages = Number(o.messages || 1048576)
  if (!o.out) throw new Error('gen needs --out FILE')
  if (!(entities >= 1 && entities <= 65536)) throw new Error('--entities must be 1..65536')
  const rng = new Rng(`bench/${o.seed || 1}`)
  // @dcl/ecs's buffer grows by ~1 KiB per resize (quadratic for big streams): preallocate.
  const buf = new L.E.ReadWriteByteBuffer(new Uint8Array(messages * 68), 0, 0)
  const value = { position: { x: 0, y: 0, z: 0 }, rotation: { x: 0, y: 0, z: 0, w: 1 }, scale: { x: 1, y: 1, z: 1 }, parent: 0 }
  const t0 = Date.now()
  for (let i = 0; i < messages; i++) {
    const entity = rng.int(entities)
    // few distinct values so equal (entity, timestamp, bytes) also occurs
    value.position.x = rng.int(8) * 0.5
    value.position.y = rng.int(4)
    value.position.z = Math.fround(rng.float() * 10)
    value.parent = rng.chance(0.2) ? rng.int(entities) : 0
    L.ecs.PutComponentOperation.write(entity, rng.range(1, 16), 1, L.transformBytes(value), buf)
    if ((i + 1) % 262144 === 0) process.stderr.write(`bench_merge: generated ${i + 1}/${messages} messages\n`)
  }
  fs.writeFileSync(o.out, buf.toBinary())
  process.stderr.write(
    `bench_merge: wrote ${o.out}: ${messages} Transform PUTs over ${entities} entities (${buf.currentWriteOffset()} bytes, ${((Date.now() - t0) / 1000).toFixed(1)}s)\n`
  )
}

async function ecsRun(o) {
  const L = require('./lib/ecs')
  if (!o.file) throw new Error('ecs needs --file FILE')
  const bytes = new Uint8Array(fs.readFileSync(o.file))
  const repeat = Number(o.repeat || 3)
  const chunkMessages = Number(o['chunk-messages'] || 0)
  // message boundaries (all messages are PUTs; read the length field)
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const offsets = []
  for (let off = 0; off + 8 <= bytes.length; off += dv.getUint32(off, true)) offsets.push(off)
  const chunks = chunkMessages > 0 ? L.splitAt(bytes, offsets, offsets.filter((_, i) => i % chunkMessages === 0).map((_, k) => k * chunkMessages)) : [bytes]
  const runs = []
  for (let r = 0; r < repeat; r++) {
    if (global.gc) global.gc()
    const engine = L.ecs.Engine()
    const transport = { type: 'bench', filter: () => true, send: async () => {} }
    engine.addTransport(transport)
    const t0 = process.hrtime.bigint()
    for (const c of chunks) {
      transport.onmessage(c)
      await engine.update(1)
    }
    const s = Number(process.hrtime.bigint() - t0) / 1e9
    runs.push(s)
    const live = [...engine.getComponent(1).iterator()].length
    process.stderr.write(`bench_merge: @dcl/ecs run ${r + 1}/${repeat}: ${s.toFixed(3)}s, ${(offsets.length / s).toFixed(0)} messages/s, ${live} transforms\n`)
  }
  const best = Math.min(...runs)
  process.stdout.write(JSON.stringify({ messages: offsets.length, seconds: best, messagesPerSecond: offsets.length / best, runs }) + '\n')
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2)
  if (!cmd || cmd === '--help' || cmd === '-h') {
    process.stdout.write(USAGE)
    return cmd ? 0 : 2
  }
  const o = args(rest)
  if (cmd === 'gen') gen(o)
  else if (cmd === 'ecs') await ecsRun(o)
  else throw new Error(`unknown command ${cmd}`)
  return 0
}

main().then(
  (c) => process.exit(c),
  (e) => {
    process.stderr.write(`bench_merge: ${e.message}\n${USAGE}`)
    process.exit(2)
  }
)
