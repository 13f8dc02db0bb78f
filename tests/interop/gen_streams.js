#!/usr/bin/env node
'use strict'
// Generates N random DCL streams with @dcl/ecs's own writers, applies each to a fresh real
// @dcl/ecs Engine through a transport, and writes, per stream i:
//   OUT/stream-NNNNN.bin       the stream (concatenated CRDT messages)
//   OUT/stream-NNNNN.ecs.json  the Engine's final state (see README.md for the shape)
// plus OUT/manifest.json. Deterministic for a given --seed.

const fs = require('fs')
const path = require('path')
const { parseOptions } = require('./lib/args')

const USAGE = `usage: node gen_streams.js --out DIR [--count N] [--seed S] [--split-check] [--order-check K] [--quiet]

  --out DIR         output directory (created; existing stream files are overwritten)
  --count N         number of streams (default 500)
  --seed S          corpus seed (default 1); stream i uses seed "S/i"
  --split-check     also feed each stream split into 2-8 chunks (one engine.update() per chunk;
                    every 5th stream one message per update) and require the same compared
                    state as the single-chunk run (a check of @dcl/ecs itself)
  --order-check K   also apply K random permutations of each stream to @dcl/ecs and report
                    streams whose compared state depends on the order (exploration tool)
  --quiet           no progress output
`

function parseArgs(argv) {
  const o = parseOptions(argv, USAGE, { count: 500, seed: '1', out: null, splitCheck: false, orderCheck: 0, quiet: false },
    { '--out': ['out', String], '--count': ['count', Number], '--seed': ['seed', String], '--split-check': ['splitCheck', true], '--order-check': ['orderCheck', Number], '--quiet': ['quiet', true] })
  if (!o.out) throw new Error('--out DIR is required')
  if (!Number.isInteger(o.count) || o.count < 1) throw new Error('--count must be a positive integer')
  if (!Number.isInteger(o.orderCheck) || o.orderCheck < 0) throw new Error('--order-check must be a non-negative integer')
  return o
}

async function main() {
  let o
  try {
    o = parseArgs(process.argv.slice(2))
  } catch (e) {
    process.stderr.write(`gen_streams: ${e.message}\n${USAGE}`)
    process.exit(2)
  }
  const L = require('./lib/ecs')
  const { Rng } = require('./lib/prng')
  const { genStream } = require('./lib/gen')
  const { diffStates } = require('./lib/view')

  fs.mkdirSync(o.out, { recursive: true })
  const manifest = { ecsVersion: L.E.version, seed: o.seed, count: o.count, streams: [] }
  const problems = []
  const t0 = Date.now()
  let totalMessages = 0
  for (let i = 0; i < o.count; i++) {
    const rng = new Rng(`${o.seed}/${i}`)
    const s = genStream(rng)
    const { bytes, offsets } = L.encodeMessages(s.messages)
    const name = `stream-${String(i).padStart(5, '0')}`
    const file = path.join(o.out, `${name}.bin`)
    fs.writeFileSync(file, bytes)
    const carried = L.carriedEntities(s.messages)
    const state = L.dumpEngine(await L.runEngine([bytes]), carried)
    state.stream = {
      file: `${name}.bin`,
      seed: `${o.seed}/${i}`,
      profile: s.profile,
      timestamps: s.tsMode,
      pool: s.pool,
      messages: s.messages.length,
      bytes: bytes.length
    }
    totalMessages += s.messages.length

    if (o.splitCheck && s.messages.length > 1) {
      let cuts
      if (i % 5 === 0) cuts = offsets.map((_, k) => k)
      else {
        const k = rng.range(1, Math.min(7, s.messages.length - 1))
        cuts = [...new Set(Array.from({ length: k }, () => rng.range(1, s.messages.length - 1)))].sort((a, b) => a - b)
      }
      const chunks = L.splitAt(bytes, offsets, cuts)
      const split = L.dumpEngine(await L.runEngine(chunks), carried)
      const d = diffStates(state, split, 'one-chunk', `${chunks.length}-chunks`)
      state.stream.splitCheck = { chunks: chunks.length, equal: d.length === 0 }
      if (d.length) problems.push({ file, kind: `@dcl/ecs result depends on chunking (${chunks.length} chunks)`, diff: d })
    }
    for (let k = 0; k < o.orderCheck; k++) {
      const perm = rng.shuffle(s.messages.slice())
      const shuffled = L.dumpEngine(await L.runEngine([L.encodeMessages(perm).bytes]), carried)
      const d = diffStates(state, shuffled, 'file-order', `permutation#${k}`)
      if (d.length) {
        const pfile = path.join(o.out, `${name}.perm${k}.bin`)
        fs.writeFileSync(pfile, L.encodeMessages(perm).bytes)
        problems.push({ file, kind: `@dcl/ecs result depends on arrival order (permutation written to ${pfile})`, diff: d })
        break
      }
    }
    fs.writeFileSync(path.join(o.out, `${name}.ecs.json`), JSON.stringify(state) + '\n')
    manifest.streams.push(state.stream)
    if (!o.quiet && ((i + 1) % 100 === 0 || i + 1 === o.count)) {
      process.stderr.write(`gen_streams: ${i + 1}/${o.count} streams, ${totalMessages} messages (${((Date.now() - t0) / 1000).toFixed(1)}s)\n`)
    }
  }
  manifest.messages = totalMessages
  manifest.problems = problems.map((p) => ({ file: p.file, kind: p.kind, diff: p.diff.slice(0, 20) }))
  fs.writeFileSync(path.join(o.out, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n')
  for (const p of problems) {
    process.stderr.write(`gen_streams: ${p.file}: ${p.kind}\n`)
    for (const line of p.diff.slice(0, 10)) process.stderr.write(`    ${line}\n`)
  }
  if (problems.length) {
    process.stderr.write(`gen_streams: ${problems.length} stream(s) where @dcl/ecs itself is order/batch dependent; see above\n`)
    process.exit(1)
  }
}

main().catch((e) => {
  process.stderr.write(`gen_streams: ${e.stack || e}\n`)
  process.exit(2)
})
