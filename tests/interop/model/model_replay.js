#!/usr/bin/env node
'use strict'
// A small, independent JS model of the store semantics documented in docs/CRDT.md, with
// the same command line as `scenecrdt replay FILE` / `scenecrdt decode FILE`. It exists only to
// self-test the interop harness when the C++ binary is not built yet (run.sh --model): if the
// harness reports mismatches against this model, either the model, the documented semantics or
// a divergence filter is wrong. It is NOT a reference for the C++ store.

const fs = require('fs')

const RESERVED = 512

function parse(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const u32 = (o) => dv.getUint32(o, true)
  const out = []
  let off = 0
  while (off < bytes.length) {
    if (bytes.length - off < 8) throw new Error(`truncated header at byte offset ${off}`)
    const length = u32(off)
    const type = u32(off + 4)
    if (length < 8 || off + length > bytes.length) throw new Error(`bad length ${length} at byte offset ${off}`)
    const m = { type, entity: length >= 12 ? u32(off + 8) : 0 }
    if (type === 1 || type === 4) {
      m.component = u32(off + 12)
      m.timestamp = u32(off + 16)
      const n = u32(off + 20)
      if (length !== 24 + n) throw new Error(`length mismatch at byte offset ${off}`)
      m.data = bytes.slice(off + 24, off + 24 + n)
    } else if (type === 2) {
      if (length !== 20) throw new Error(`length mismatch at byte offset ${off}`)
      m.component = u32(off + 12)
      m.timestamp = u32(off + 16)
    } else if (type === 3) {
      if (length !== 12) throw new Error(`length mismatch at byte offset ${off}`)
    } else {
      throw new Error(`message type ${type} not modelled (byte offset ${off})`)
    }
    out.push(m)
    off += length
  }
  return out
}

function cmpData(a, b) {
  if (a === null && b === null) return 0
  if (a === null) return -1
  if (b === null) return 1
  if (a.length !== b.length) return a.length > b.length ? 1 : -1
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i] ? 1 : -1
  return 0
}

function replay(messages) {
  const regs = new Map() // "c/e" -> {component, entity, timestamp, data}
  const sets = new Map() // "c/e" -> {component, entity, values:Set(hex)}
  const tomb = new Map() // number -> max deleted version
  const carried = new Set()
  const num = (e) => e & 0xffff
  const ver = (e) => e >>> 16
  const purge = (n, maxV) => {
    for (const m of [regs, sets]) for (const [k, r] of m) if (num(r.entity) === n && ver(r.entity) <= maxV) m.delete(k)
  }
  const retire = (n, v) => {
    if ((tomb.get(n) ?? -1) < v) tomb.set(n, v)
    purge(n, v)
  }
  for (const m of messages) {
    carried.add(m.entity >>> 0)
    const n = num(m.entity)
    const v = ver(m.entity)
    if (m.type === 3) {
      if (n >= RESERVED) retire(n, v) // reserved numbers: refused
      continue
    }
    if (n >= RESERVED) {
      if ((tomb.get(n) ?? -1) >= v) continue
      if (v > 0) retire(n, v - 1)
    }
    const key = `${m.component}/${m.entity}`
    if (m.type === 4) {
      if (!sets.has(key)) sets.set(key, { component: m.component, entity: m.entity, values: new Set() })
      sets.get(key).values.add(Buffer.from(m.data).toString('hex'))
      continue
    }
    const data = m.type === 1 ? m.data : null
    const cur = regs.get(key)
    let take
    if (!cur || cur.timestamp < m.timestamp) take = true
    else if (cur.timestamp > m.timestamp) take = false
    else take = cmpData(cur.data, data) < 0
    if (take) regs.set(key, { component: m.component, entity: m.entity, timestamp: m.timestamp, data })
  }
  const hex = (d) => Buffer.from(d).toString('hex')
  const byCE = (a, b) => a.component - b.component || a.entity - b.entity
  const all = [...regs.values()].sort(byCE)
  const f32 = (d, o) => new DataView(d.buffer, d.byteOffset).getFloat32(o, true)
  const out = { transforms: [], deletedTransforms: [], components: [], deletedComponents: [], appendValues: [], entities: [] }
  for (const r of all) {
    if (r.component === 1 && r.data && r.data.length === 44) {
      out.transforms.push({
        entity: r.entity,
        number: num(r.entity),
        version: ver(r.entity),
        timestamp: r.timestamp,
        position: [0, 4, 8].map((o) => f32(r.data, o)),
        rotation: [12, 16, 20, 24].map((o) => f32(r.data, o)),
        scale: [28, 32, 36].map((o) => f32(r.data, o)),
        parent: new DataView(r.data.buffer, r.data.byteOffset).getUint32(40, true),
        dataHex: hex(r.data)
      })
    } else if (r.component === 1 && !r.data) out.deletedTransforms.push({ entity: r.entity, timestamp: r.timestamp })
    else if (r.data) out.components.push({ component: r.component, entity: r.entity, timestamp: r.timestamp, dataHex: hex(r.data) })
    else out.deletedComponents.push({ component: r.component, entity: r.entity, timestamp: r.timestamp })
  }
  for (const s of [...sets.values()].sort(byCE)) out.appendValues.push({ component: s.component, entity: s.entity, values: [...s.values].sort() })
  for (const e of [...carried].sort((a, b) => a - b)) {
    const n = num(e)
    const state = n < RESERVED ? 'Reserved' : (tomb.get(n) ?? -1) >= ver(e) ? 'Removed' : 'UsedEntity'
    out.entities.push({ entity: e, number: n, version: ver(e), state })
  }
  out.stateHash = 'model'
  return out
}

function main() {
  const [cmd, file, ...rest] = process.argv.slice(2)
  if (!cmd || cmd === '--help' || !file) {
    process.stdout.write('usage: model_replay.js replay FILE [--shuffle SEED] | decode FILE\n')
    return cmd === '--help' ? 0 : 2
  }
  let messages
  try {
    messages = parse(new Uint8Array(fs.readFileSync(file)))
  } catch (e) {
    process.stderr.write(`model_replay: malformed stream: ${e.message}\n`)
    return 2
  }
  if (cmd === 'decode') {
    for (const m of messages) process.stdout.write(JSON.stringify({ ...m, data: m.data ? Buffer.from(m.data).toString('hex') : undefined }) + '\n')
    return 0
  }
  if (cmd !== 'replay') return 2
  const si = rest.indexOf('--shuffle')
  if (si >= 0) {
    const { Rng } = require('../lib/prng')
    new Rng(`shuffle/${rest[si + 1]}`).shuffle(messages)
  }
  process.stdout.write(JSON.stringify(replay(messages)) + '\n')
  return 0
}

process.exit(main())
