'use strict'
// The comparable view of a state (an @dcl/ecs dump or `scenecrdt replay` output) and a diff.
//
// Compared: live Transforms (timestamp, dataHex), the Transform remove-set (timestamp), the
// harness's opaque LWW components and their remove-set, the APPEND_VALUE set of the harness's
// value-set component (as a set of payloads), and the state of every entity id the stream carried.
//
// Not compared (deliberate divergences, see README.md):
//  (a) registers of an entity whose state is Removed on either side: @dcl/ecs keeps old-version
//      data in memory after a newer version retires it (and keeps order-dependent remove-set
//      timestamps after DELETE_ENTITY); our store purges it. Our side is separately required to
//      hold no live data for entities it reports Removed (see purgeViolations).
//  (b) DELETE_ENTITY on reserved numbers (< 512): never generated in the corpus.
//  Components other than the harness's registered ones: @dcl/ecs stores nothing for them.

const { OPAQUE_LWW_IDS, APPEND_SET_ID } = require('./ecs')

const COMPARED_LWW = new Set(OPAQUE_LWW_IDS)

function removedSet(state) {
  const out = new Set()
  for (const e of state.entities || []) if (e.state === 'Removed') out.add(e.entity >>> 0)
  return out
}

function makeView(state, removed) {
  const v = {
    transforms: new Map(),
    deletedTransforms: new Map(),
    components: new Map(),
    deletedComponents: new Map(),
    appendValues: new Map(),
    entities: new Map()
  }
  const live = (e) => !removed.has(e >>> 0)
  for (const t of state.transforms || []) if (live(t.entity)) v.transforms.set(t.entity >>> 0, `ts=${t.timestamp} ${t.dataHex}`)
  for (const t of state.deletedTransforms || []) if (live(t.entity)) v.deletedTransforms.set(t.entity >>> 0, `ts=${t.timestamp}`)
  for (const c of state.components || [])
    if (COMPARED_LWW.has(c.component) && live(c.entity)) v.components.set(`${c.component}/${c.entity}`, `ts=${c.timestamp} ${c.dataHex}`)
  for (const c of state.deletedComponents || [])
    if (COMPARED_LWW.has(c.component) && live(c.entity)) v.deletedComponents.set(`${c.component}/${c.entity}`, `ts=${c.timestamp}`)
  for (const a of state.appendValues || [])
    if (a.component === APPEND_SET_ID && live(a.entity) && a.values.length)
      v.appendValues.set(`${a.component}/${a.entity}`, [...new Set(a.values)].sort().join(','))
  for (const e of state.entities || []) v.entities.set(e.entity >>> 0, e.state)
  return v
}

// Views of two states with the union of both sides' Removed entities filtered out.
function views(a, b) {
  const removed = new Set([...removedSet(a), ...removedSet(b)])
  return [makeView(a, removed), makeView(b, removed)]
}

function fmtEntity(key) {
  const s = String(key)
  const e = Number(s.includes('/') ? s.split('/')[1] : s) >>> 0
  return `${s} (n=${e & 0xffff} v=${e >>> 16})`
}

// Returns a list of human-readable differences (empty when equal).
function diffStates(a, b, nameA = 'ecs', nameB = 'ours') {
  const [va, vb] = views(a, b)
  const out = []
  for (const field of Object.keys(va)) {
    const ma = va[field]
    const mb = vb[field]
    const keys = [...new Set([...ma.keys(), ...mb.keys()])].sort((x, y) => (String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0))
    for (const k of keys) {
      const x = ma.has(k) ? ma.get(k) : '(absent)'
      const y = mb.has(k) ? mb.get(k) : '(absent)'
      if (x !== y) out.push(`${field} ${fmtEntity(k)}: ${nameA} ${x} | ${nameB} ${y}`)
    }
  }
  return out
}

// Live data our store reports for entities it itself reports Removed (it must purge them).
function purgeViolations(ours) {
  const removed = removedSet(ours)
  const out = []
  for (const t of ours.transforms || [])
    if (removed.has(t.entity >>> 0)) out.push(`transforms ${fmtEntity(t.entity)}: live Transform kept for a Removed entity`)
  for (const c of ours.components || [])
    if (removed.has(c.entity >>> 0)) out.push(`components ${c.component}/${fmtEntity(c.entity)}: live data kept for a Removed entity`)
  return out
}

module.exports = { diffStates, purgeViolations, removedSet }
