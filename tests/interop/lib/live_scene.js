'use strict'
// Helpers shared by the live-server interop tests (ws_interop.js, ecs_transport.js): waiting,
// running the scenecrdt binary, reading entity ids out of DCL chunks, the scene-script edits an
// @dcl/ecs engine makes inside a system, and the comparison of an engine with `scenecrdt pull`
// (README.md "Raw-DCL WebSocket interop" lists what is compared and why).

const path = require('path')
const { execFile } = require('child_process')
const { TRANSFORM_ID, dumpLww } = require('./ecs')
const { diffStates } = require('./view')

const REMOVED = 2  // EntityState.Removed
const frame = (ms) => new Promise((resolve) => setTimeout(resolve, ms))  // a render-loop tick

class Failure extends Error {}

async function waitFor(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Failure(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await frame(5)
  }
}

function run(bin, args) {
  return new Promise((resolve) => {
    execFile(bin, args, { maxBuffer: 64 << 20, encoding: 'utf8', timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr })
    })
  })
}

async function runOk(bin, args) {
  const r = await run(bin, args)
  if (r.code !== 0) throw new Failure(`${path.basename(bin)} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`)
  return r.stdout
}

// Entity ids of the messages in a DCL stream (every message type carries it at offset 8).
function entitiesOf(bytes) {
  const out = []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let pos = 0; pos + 12 <= bytes.byteLength; ) {
    const length = view.getUint32(pos, true)
    if (length < 8) break
    out.push(view.getUint32(pos + 8, true))
    pos += length
  }
  return out
}

function countMessages(bytes) {
  return entitiesOf(bytes).length
}

const id = (number, version = 0) => ((number & 0xffff) | ((version & 0xffff) << 16)) >>> 0
const f = (x) => Math.fround(x)

// One round of scene-script edits on a writer engine.
function edit(peer, rng, cppIds) {
  const { engine, Transform } = peer
  const live = [...engine.getEntitiesWith(Transform)].map(([e]) => e).filter((e) => (e & 0xffff) >= 512)
  const vec = () => ({ x: f(rng.range(-40, 40) / 4), y: f(rng.range(0, 40) / 4), z: f(rng.range(-40, 40) / 4) })
  const parentFor = () => (rng.chance(0.3) || live.length === 0 ? 0 : rng.chance(0.2) && cppIds.length > 0 ? rng.pick(cppIds) : rng.pick(live))
  const ops = rng.range(1, 4)
  for (let i = 0; i < ops; i++) {
    const kind = rng.weighted([
      [3, 'create'],
      [5, 'move'],
      [2, 'reparent'],
      [1, 'remove'],
      [1, 'deleteTransform']
    ])
    if (kind === 'create' || live.length === 0) {
      const e = engine.addEntity()
      Transform.create(e, { position: vec(), scale: { x: 1, y: 1, z: f(rng.range(1, 8) / 4) }, parent: parentFor() })
      live.push(e)
      continue
    }
    const e = rng.pick(live)
    if (kind === 'move' || kind === 'reparent') {
      const t = Transform.getMutableOrNull(e)
      if (!t) continue
      if (kind === 'move') t.position = vec()
      else t.parent = parentFor()
    } else if (kind === 'remove') {
      engine.removeEntity(e)
      peer.removedLocally.add(e)
      live.splice(live.indexOf(e), 1)
    } else {
      Transform.deleteFrom(e)
      live.splice(live.indexOf(e), 1)
    }
  }
}

// ---- comparison ----

// Which entity ids are deleted, as the server's state says: its tombstones are the Removed ids
// pull lists (one per number, at the maximum deleted version).
function pullRemovedFn(pulled) {
  const tomb = new Map()
  for (const e of pulled.entities) if (e.state === 'Removed') tomb.set(e.number, Math.max(tomb.get(e.number) ?? 0, e.version))
  return (entity) => (entity & 0xffff) >= 512 && tomb.has(entity & 0xffff) && tomb.get(entity & 0xffff) >= entity >>> 16
}

// The differences between an engine and the pulled state: live Transforms (timestamp, bytes),
// the Transform remove-set, and deleted-ness of every entity id either side knows. Registers of
// deleted entities are not compared (@dcl/ecs keeps remove-set entries and old-version data for
// them; docs/CRDT.md, tests/interop/README.md divergence a).
function compare(peer, pulled, knownIds) {
  const ecsTransforms = []
  const ecsDeleted = []
  for (const r of dumpLww(peer.Transform)) {
    if (r.dataHex === null) ecsDeleted.push({ entity: r.entity, timestamp: r.timestamp })
    else ecsTransforms.push({ entity: r.entity, timestamp: r.timestamp, dataHex: r.dataHex })
  }
  const ids = new Set(knownIds)
  for (const t of [...ecsTransforms, ...ecsDeleted, ...pulled.transforms, ...pulled.deletedTransforms]) ids.add(t.entity >>> 0)
  const pullRemoved = pullRemovedFn(pulled)
  const state = (removed) => (removed ? 'Removed' : 'not removed')
  const sorted = [...ids].sort((a, b) => a - b)
  const ecsView = {
    transforms: ecsTransforms,
    deletedTransforms: ecsDeleted,
    // Divergence (c) (README): a remote PUT that reaches an engine between its own
    // removeEntity(e) and its next update() revives e in that engine only, while the
    // DELETE_ENTITY it sends tombstones e everywhere else. Such ids count as Removed here.
    entities: sorted.map((e) => ({
      entity: e,
      state: state(peer.engine.getEntityState(e) === REMOVED || (peer.removedLocally.has(e) && pullRemoved(e)))
    }))
  }
  const pullView = {
    transforms: pulled.transforms,
    deletedTransforms: pulled.deletedTransforms,
    entities: sorted.map((e) => ({ entity: e, state: state(pullRemoved(e)) }))
  }
  return diffStates(ecsView, pullView, peer.name, 'pull')
}

module.exports = { REMOVED, frame, Failure, waitFor, run, runOk, entitiesOf, countMessages, id, f, edit, pullRemovedFn, compare }
