'use strict'
// Random DCL streams for the interop corpus. Deterministic for a given Rng.
//
// What a stream exercises: a small shared pool of entity numbers (mostly >= 512, sometimes a
// reserved one < 512), versions 0..3 of the same number (sometimes up to 0xffff), Lamport-timestamp ties (small ranges,
// and extreme u32 values), PUT vs PUT ties with different bytes, PUT vs DELETE ties, exact
// duplicates, DELETE_COMPONENT, DELETE_ENTITY (numbers >= 512 only: divergence (b)), parenting
// cycles and self-parenting, two opaque LWW components with payloads of 0..10 bytes (length-first
// tie-break), APPEND_VALUE, and messages for a component nobody registers (entity-state effects).
//
// Every Transform payload is 44 bytes and survives @dcl/ecs's deserialize+serialize unchanged
// (no signalling NaNs, no 48-byte payloads): those are order-dependent in @dcl/ecs, see
// probe_quirks.js and README.md.

const L = require('./ecs')

const RESERVED_POOL = [0, 1, 2, 5, 33, 200, 511]
const FLOAT_PALETTE = [0, -0, 1, 2, 0.1, -1, 1.5, 100, 1e-38, 3.4e38, Infinity, -Infinity, NaN, 0.5, 3]
const HALF_SQRT2 = 0.7071067811865476
const PROFILES = ['mixed', 'mixed', 'ties', 'deletes', 'versions', 'cycles', 'components', 'transform-only']
const EXTREME_TS = [0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]

function genFloat(rng) {
  if (rng.chance(0.75)) return rng.pick(FLOAT_PALETTE)
  return Math.fround((rng.float() - 0.5) * 200)
}

function makeTimestamper(rng) {
  const mode = rng.weighted([
    [3, 'tiny'],
    [3, 'small'],
    [2, 'medium'],
    [1, 'wide']
  ])
  switch (mode) {
    case 'tiny':
      return { mode, next: () => rng.range(0, 2) }
    case 'small':
      return { mode, next: () => rng.range(0, 5) }
    case 'medium':
      return { mode, next: () => rng.range(1, 20) }
    default:
      return { mode, next: () => (rng.chance(0.3) ? rng.pick(EXTREME_TS) : rng.range(0, 6)) }
  }
}

function makePool(rng, profile) {
  const numbers = []
  const k = rng.range(2, 7)
  while (numbers.length < k) {
    const n = 512 + rng.int(32)
    if (!numbers.includes(n)) numbers.push(n)
  }
  const reserved = []
  if (rng.chance(0.35)) {
    const r = rng.range(1, 2)
    while (reserved.length < r) {
      const n = rng.pick(RESERVED_POOL)
      if (!reserved.includes(n)) reserved.push(n)
    }
  }
  const maxVersion = new Map()
  for (const n of numbers) {
    let mv = profile === 'versions' ? rng.range(1, 3) : rng.weighted([[5, 0], [2, 1], [1.5, 2], [1.5, 3]])
    // now and then the top of the u16 version range
    if (profile === 'versions' && rng.chance(0.15)) mv = rng.pick([300, 0xfffe, 0xffff])
    maxVersion.set(n, mv)
  }
  for (const n of reserved) maxVersion.set(n, rng.weighted([[4, 0], [1, 1]]))
  const all = [...numbers, ...reserved]
  return {
    numbers,
    reserved,
    all,
    entityOf(n, rng2) {
      const mv = maxVersion.get(n)
      const v = rng2.chance(0.5) ? rng2.int(mv + 1) : mv === 0 ? 0 : rng2.range(Math.max(0, mv - 1), mv)
      return L.ecs.EntityUtils.toEntityId(n, v)
    },
    any(rng2) {
      const n = reserved.length && rng2.chance(0.15) ? rng2.pick(reserved) : rng2.pick(numbers)
      return this.entityOf(n, rng2)
    },
    nonReserved(rng2) {
      return this.entityOf(rng2.pick(numbers), rng2)
    }
  }
}

function genTransformValue(rng, pool, self, profile) {
  const position = { x: genFloat(rng), y: genFloat(rng), z: genFloat(rng) }
  let rotation
  const r = rng.int(10)
  if (r < 5) rotation = { x: 0, y: 0, z: 0, w: 1 }
  else if (r < 7) rotation = { x: 0, y: HALF_SQRT2, z: 0, w: HALF_SQRT2 }
  else rotation = { x: genFloat(rng), y: genFloat(rng), z: genFloat(rng), w: genFloat(rng) }
  const scale = rng.chance(0.6) ? { x: 1, y: 1, z: 1 } : { x: genFloat(rng), y: genFloat(rng), z: genFloat(rng) }
  const cyc = profile === 'cycles'
  const parent = rng.weighted([
    [cyc ? 1 : 4, () => 0],
    [cyc ? 6 : 3.5, () => pool.any(rng)],
    [cyc ? 3 : 1, () => self],
    [0.5, () => rng.u32()],
    [1, () => rng.pick([1, 2])]
  ])()
  return { position, rotation, scale, parent: parent >>> 0 }
}

function genOpaque(rng) {
  const len = rng.weighted([[1, 0], [3, 1], [3, 2], [2, 3], [1, rng.range(4, 10)]])
  const out = new Uint8Array(len)
  for (let i = 0; i < len; i++) out[i] = rng.pick([0x00, 0x01, 0x61, 0x62, 0x7f, 0x80, 0xff])
  return out
}

// A 44-byte Transform payload: from a value, or a one-byte mutation of an earlier payload when
// that mutation still round-trips through TransformSchema (no signalling NaN).
function genTransformBytes(rng, pool, entity, profile, earlier) {
  if (earlier && rng.chance(0.5)) {
    for (let attempt = 0; attempt < 4; attempt++) {
      const b = Uint8Array.from(earlier)
      const i = rng.int(44)
      b[i] = rng.chance(0.5) ? (b[i] + 1) & 0xff : rng.int(256)
      if (Buffer.compare(Buffer.from(L.canonicalTransformBytes(b)), Buffer.from(b)) === 0) return b
    }
  }
  return L.transformBytes(genTransformValue(rng, pool, entity, profile))
}

function lengthForStream(rng) {
  return rng.weighted([
    [3, () => rng.range(3, 20)],
    [4, () => rng.range(20, 100)],
    [3, () => rng.range(100, 300)]
  ])()
}

// Returns {profile, tsMode, pool, messages}
function genStream(rng, opts = {}) {
  const profile = opts.profile || rng.pick(PROFILES)
  const pool = makePool(rng, profile)
  const ts = makeTimestamper(rng)
  const n = opts.length || lengthForStream(rng)
  const history = [] // LWW messages already emitted (put/delete), for ties and duplicates
  const messages = []
  const tOnly = profile === 'transform-only'

  const w = {
    put: profile === 'components' ? 20 : 40,
    del: profile === 'deletes' ? 20 : 8,
    delEntity: profile === 'deletes' || profile === 'versions' ? 10 : 4,
    tie: profile === 'ties' ? 30 : 10,
    dup: 5,
    opaquePut: tOnly ? 0 : profile === 'components' ? 30 : 8,
    opaqueDel: tOnly ? 0 : profile === 'components' ? 8 : 3,
    unregistered: tOnly ? 0 : 3,
    append: tOnly ? 0 : profile === 'components' ? 8 : 3,
    cycle: profile === 'cycles' ? 12 : 2
  }

  const lastTransform = new Map() // entity -> bytes

  function putTransform(entity, timestamp, data) {
    const m = { type: 'put', entity, component: L.TRANSFORM_ID, timestamp, data }
    lastTransform.set(entity, data)
    messages.push(m)
    history.push(m)
  }

  while (messages.length < n) {
    const kind = rng.weighted(Object.entries(w).map(([k, v]) => [v, k]))
    switch (kind) {
      case 'put': {
        const e = pool.any(rng)
        putTransform(e, ts.next(), genTransformBytes(rng, pool, e, profile, lastTransform.get(e)))
        break
      }
      case 'del': {
        const m = { type: 'delete', entity: pool.any(rng), component: L.TRANSFORM_ID, timestamp: ts.next() }
        messages.push(m)
        history.push(m)
        break
      }
      case 'delEntity':
        // numbers >= 512 only (divergence (b): our store refuses DELETE_ENTITY on reserved numbers)
        messages.push({ type: 'delete_entity', entity: pool.nonReserved(rng) })
        break
      case 'tie': {
        if (!history.length) break
        const base = rng.pick(history)
        const choice = rng.weighted([[5, 'put'], [3, 'delete'], [1, 'same']])
        if (choice === 'same') {
          messages.push({ ...base })
        } else if (choice === 'delete') {
          messages.push({ type: 'delete', entity: base.entity, component: base.component, timestamp: base.timestamp })
        } else if (base.component === L.TRANSFORM_ID) {
          const data = genTransformBytes(rng, pool, base.entity, profile, base.data || lastTransform.get(base.entity))
          messages.push({ type: 'put', entity: base.entity, component: base.component, timestamp: base.timestamp, data })
        } else {
          messages.push({ type: 'put', entity: base.entity, component: base.component, timestamp: base.timestamp, data: genOpaque(rng) })
        }
        history.push(messages[messages.length - 1])
        break
      }
      case 'dup': {
        if (!messages.length) break
        messages.push({ ...rng.pick(messages) })
        break
      }
      case 'opaquePut': {
        const m = { type: 'put', entity: pool.any(rng), component: rng.pick(L.OPAQUE_LWW_IDS), timestamp: ts.next(), data: genOpaque(rng) }
        messages.push(m)
        history.push(m)
        break
      }
      case 'opaqueDel': {
        const m = { type: 'delete', entity: pool.any(rng), component: rng.pick(L.OPAQUE_LWW_IDS), timestamp: ts.next() }
        messages.push(m)
        history.push(m)
        break
      }
      case 'unregistered': {
        const e = pool.any(rng)
        if (rng.chance(0.6)) messages.push({ type: 'put', entity: e, component: L.UNREGISTERED_ID, timestamp: ts.next(), data: genOpaque(rng) })
        else if (rng.chance(0.5)) messages.push({ type: 'delete', entity: e, component: L.UNREGISTERED_ID, timestamp: ts.next() })
        else messages.push({ type: 'append', entity: e, component: L.UNREGISTERED_ID, timestamp: ts.next(), data: genOpaque(rng) })
        break
      }
      case 'append':
        messages.push({ type: 'append', entity: pool.any(rng), component: L.APPEND_SET_ID, timestamp: ts.next(), data: genOpaque(rng) })
        break
      case 'cycle': {
        // a -> b -> a (or a -> a) at the same or close timestamps
        const a = pool.any(rng)
        const b = rng.chance(0.25) ? a : pool.any(rng)
        const t = ts.next()
        const va = genTransformValue(rng, pool, a, profile)
        va.parent = b
        putTransform(a, t, L.transformBytes(va))
        if (b !== a && messages.length < n) {
          const vb = genTransformValue(rng, pool, b, profile)
          vb.parent = a
          putTransform(b, rng.chance(0.5) ? t : ts.next(), L.transformBytes(vb))
        }
        break
      }
    }
  }
  return { profile, tsMode: ts.mode, pool: { numbers: pool.numbers, reserved: pool.reserved }, messages: messages.slice(0, n) }
}

module.exports = { genStream }
