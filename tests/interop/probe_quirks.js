#!/usr/bin/env node
'use strict'
// Minimal reproductions of @dcl/ecs 7.28.0 behaviours that matter for the C++ store, most of them
// cases where the Engine's final state depends on arrival order or batching (so no convergent
// store can match it, and the interop corpus keeps away from them). Each case applies the same
// messages in two orders/batchings to a fresh real Engine and prints both states; with --out it
// writes every variant as a stream file; with --bin it also prints `scenecrdt replay` of each.
//
//   node probe_quirks.js [--out DIR] [--bin SCENECRDT] [--case NAME]

const fs = require('fs')
const path = require('path')
const { execFileSync } = require('child_process')
const L = require('./lib/ecs')

const USAGE = `usage: node probe_quirks.js [--out DIR] [--bin SCENECRDT] [--case NAME] [--list]

  --out DIR        write each variant as DIR/<case>.<variant>.bin (stream) and .ecs.json (state)
  --bin SCENECRDT  also run "SCENECRDT replay" on each variant and print its transforms/entities
  --case NAME      only this case (see --list)
`

function tf(x, { parent = 0, extra = 0 } = {}) {
  const b = L.transformBytes({ position: { x, y: 0, z: 0 }, rotation: { x: 0, y: 0, z: 0, w: 1 }, scale: { x: 1, y: 1, z: 1 }, parent })
  if (!extra) return b
  const out = new Uint8Array(44 + extra)
  out.set(b)
  return out
}
function withFloatBits(bits) {
  const b = tf(1)
  new DataView(b.buffer).setUint32(0, bits, true)
  return b
}
const put = (entity, timestamp, data, component = 1) => ({ type: 'put', entity, component, timestamp, data })
const del = (entity, timestamp, component = 1) => ({ type: 'delete', entity, component, timestamp })
const delEntity = (entity) => ({ type: 'delete_entity', entity })
const id = (n, v) => L.ecs.EntityUtils.toEntityId(n, v)

// variants: [{name, messages, batching: 'one-chunk' | 'per-message'}]
const CASES = [
  {
    name: 'transform-48-byte-tie',
    what:
      'A Transform PUT with a 48-byte payload is accepted and stored re-serialised to 44 bytes. At an equal ' +
      'timestamp the tie-break compares the STORED 44 bytes with the INCOMING payload, longer first, so a ' +
      '48-byte payload beats any stored value, but once stored it loses on bytes: order-dependent.',
    variants: [
      { name: 'long-first', messages: [put(600, 5, tf(2, { extra: 4 })), put(600, 5, tf(1))] },
      { name: 'long-last', messages: [put(600, 5, tf(1)), put(600, 5, tf(2, { extra: 4 }))] }
    ]
  },
  {
    name: 'transform-signalling-nan',
    what:
      'The Engine stores Transforms deserialised to JS numbers; DataView float32 -> double -> float32 quiets ' +
      'a signalling NaN (0x7f800001 is stored and re-sent as 0x7fc00001). Ties then compare the quieted ' +
      'stored bytes with the raw incoming ones: order-dependent, and the stored bytes differ from the wire.',
    variants: [
      { name: 'snan-alone', messages: [put(600, 5, withFloatBits(0x7f800001))] },
      { name: 'a-then-b', messages: [put(600, 5, withFloatBits(0x7f800001)), put(600, 5, withFloatBits(0x7fa00001))] },
      { name: 'b-then-a', messages: [put(600, 5, withFloatBits(0x7fa00001)), put(600, 5, withFloatBits(0x7f800001))] }
    ]
  },
  {
    name: 'transform-short-payload',
    what:
      'A Transform PUT shorter than 44 bytes makes engine.update() throw "Outside of the bounds of writen data." ' +
      'AFTER the LWW timestamp was stored: the key is left as a remove-set entry (deletedTransforms ts=1) with ' +
      'no data, and every later message of the same batch is lost (602 stays Unknown in one-chunk).',
    variants: [
      { name: 'one-chunk', messages: [put(601, 1, new Uint8Array(10)), put(602, 1, tf(3))] },
      { name: 'per-message', messages: [put(601, 1, new Uint8Array(10)), put(602, 1, tf(3))], batching: 'per-message' }
    ]
  },
  {
    name: 'reserved-delete-entity',
    what:
      'Divergence (b). DELETE_ENTITY for a reserved number (< 512) wipes the data but records no tombstone; ' +
      'the next update() emits a DELETE_COMPONENT at stored+1. A later PUT with a higher timestamp ' +
      'resurrects the entity, an earlier-arriving one is wiped: order-dependent.',
    variants: [
      { name: 'put-after-delete', messages: [put(5, 1, tf(1)), delEntity(5), put(5, 9, tf(2))], batching: 'per-message' },
      { name: 'put-before-delete', messages: [put(5, 1, tf(1)), put(5, 9, tf(2)), delEntity(5)], batching: 'per-message' }
    ]
  },
  {
    name: 'delete-entity-batch-bump',
    what:
      'DELETE_ENTITY is deferred to the end of the batch, and the wipe marks the components dirty so the ' +
      'next update() bumps their timestamp (+1) into a DELETE_COMPONENT. Messages after the DELETE_ENTITY ' +
      'in the same batch are still applied first, so the remove-set timestamp left on the Removed entity ' +
      'depends on batching (2 vs 100). Only the remove-set of a Removed entity differs; not compared.',
    variants: [
      { name: 'per-message', messages: [put(605, 1, tf(3)), delEntity(605), put(605, 99, tf(4))], batching: 'per-message' },
      { name: 'one-chunk', messages: [put(605, 1, tf(3)), delEntity(605), put(605, 99, tf(4))] }
    ]
  },
  {
    name: 'old-version-data-kept',
    what:
      'Divergence (a). A message for (n, v>0) marks versions < v Removed but leaves their component data in ' +
      'memory (Transform.has(600v0) stays true); DELETE_ENTITY(n, v) wipes only the exact id (n, v).',
    variants: [
      { name: 'newer-version', messages: [put(600, 1, tf(1)), put(id(600, 2), 1, tf(2))] },
      { name: 'delete-newer-version', messages: [put(600, 1, tf(1)), delEntity(id(600, 1))] }
    ]
  },
  {
    name: 'network-entity-mapping',
    what:
      'PUT_COMPONENT_NETWORK is not keyed by the entity it carries: the Engine allocates a NEW local entity ' +
      '(engine.addEntity(), the first free number from 512) and maps (networkId, entity) to it. If a plain ' +
      'message for 512 arrived first the network entity becomes 513, otherwise both land on 512: ' +
      'order-dependent, and the carried entity (700) itself stays Unknown.',
    variants: [
      { name: 'network-first', messages: [{ type: 'put_network', entity: 700, component: 1, timestamp: 1, networkId: 77, data: tf(7) }, put(512, 1, tf(5))] },
      { name: 'plain-first', messages: [put(512, 1, tf(5)), { type: 'put_network', entity: 700, component: 1, timestamp: 1, networkId: 77, data: tf(7) }] }
    ]
  },
  {
    name: 'append-value-list',
    what:
      'APPEND_VALUE lands only in a component defined with defineValueSetComponentFromSchema (otherwise it is ' +
      'dropped). The "set" is a list: duplicates are kept, the message timestamp is ignored (ordering uses ' +
      'the component\'s timestampFunction(value)), and the oldest values are dropped beyond maxElements. ' +
      'The corpus compares append values as sets.',
    variants: [
      {
        name: 'duplicates',
        messages: [
          { type: 'append', entity: 600, component: L.APPEND_SET_ID, timestamp: 9, data: Uint8Array.from([1, 2]) },
          { type: 'append', entity: 600, component: L.APPEND_SET_ID, timestamp: 1, data: Uint8Array.from([1, 2]) },
          { type: 'append', entity: 600, component: L.APPEND_SET_ID, timestamp: 5, data: Uint8Array.from([3]) }
        ]
      }
    ]
  }
]

function parseArgs(argv) {
  const o = { out: null, bin: null, only: null }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE)
      process.exit(0)
    } else if (a === '--list') {
      for (const c of CASES) process.stdout.write(`${c.name}\n`)
      process.exit(0)
    } else if (a === '--out' && i + 1 < argv.length) o.out = argv[++i]
    else if (a === '--bin' && i + 1 < argv.length) o.bin = argv[++i]
    else if (a === '--case' && i + 1 < argv.length) o.only = argv[++i]
    else {
      process.stderr.write(`probe_quirks: bad argument ${a}\n${USAGE}`)
      process.exit(2)
    }
  }
  return o
}

function summary(state, errors) {
  const lines = []
  for (const t of state.transforms) lines.push(`transform ${t.entity} (n=${t.number} v=${t.version}) ts=${t.timestamp} ${t.dataHex}`)
  for (const t of state.deletedTransforms) lines.push(`deleted   ${t.entity} ts=${t.timestamp}`)
  for (const a of state.appendValues || []) lines.push(`append    ${a.component}/${a.entity} [${a.values.join(',')}]`)
  lines.push(`entities  ${state.entities.map((e) => `${e.entity}:${e.state}`).join(' ')}`)
  if (errors && errors.length) lines.push(`update() threw: ${errors.join(' | ')}`)
  return lines
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  if (o.out) fs.mkdirSync(o.out, { recursive: true })
  const cases = CASES.filter((c) => !o.only || c.name === o.only)
  if (!cases.length) {
    process.stderr.write(`probe_quirks: no case named ${o.only} (--list shows them)\n`)
    process.exit(2)
  }
  for (const c of cases) {
    process.stdout.write(`\n## ${c.name}\n${c.what}\n`)
    const seen = []
    for (const v of c.variants) {
      const { bytes, offsets } = L.encodeMessages(v.messages)
      const chunks = v.batching === 'per-message' ? L.splitAt(bytes, offsets, offsets.map((_, i) => i)) : [bytes]
      const errors = []
      const state = L.dumpEngine(await L.runEngine(chunks, { errors }), L.carriedEntities(v.messages))
      const lines = summary(state, errors)
      process.stdout.write(`-- ${v.name} (${v.batching || 'one-chunk'}; ${v.messages.length} messages, stream ${L.hex(bytes)})\n`)
      for (const l of lines) process.stdout.write(`   ecs:  ${l}\n`)
      seen.push(JSON.stringify({ t: state.transforms, e: state.entities, d: state.deletedTransforms }))
      let file = null
      if (o.out) {
        file = path.join(o.out, `${c.name}.${v.name}.bin`)
        fs.writeFileSync(file, bytes)
        fs.writeFileSync(file.replace(/\.bin$/, '.ecs.json'), JSON.stringify({ ...state, batching: v.batching || 'one-chunk', errors }) + '\n')
      }
      if (o.bin) {
        const f = file || path.join(require('os').tmpdir(), `probe-${process.pid}.bin`)
        if (!file) fs.writeFileSync(f, bytes)
        try {
          const ours = JSON.parse(execFileSync(o.bin, ['replay', f], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
          for (const l of summary({ appendValues: [], ...ours })) process.stdout.write(`   ours: ${l}\n`)
        } catch (e) {
          process.stdout.write(`   ours: replay exit ${e.status}: ${String(e.stderr || e.message).trim().split('\n').pop()}\n`)
        }
      }
    }
    if (c.variants.length > 1) {
      const differs = new Set(seen).size > 1
      process.stdout.write(`=> @dcl/ecs final state ${differs ? 'DIFFERS between the variants' : 'is the same for all variants'}\n`)
    }
  }
}

main().catch((e) => {
  process.stderr.write(`probe_quirks: ${e.stack || e}\n`)
  process.exit(2)
})
