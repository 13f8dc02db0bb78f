#!/usr/bin/env node
'use strict'
// Writes the golden component stream of docs/COMPONENTS.md: a real @dcl/ecs 7.28.0 Engine, the
// way a scene writes, creates and changes renderer components (MeshRenderer, Material,
// GltfContainer, TextShape, a custom component, the grow-only PointerEventsResult) over a few
// frames; every engine.update() sends one chunk through a transport. Writes:
//   OUT/ecs_components.dcl   the chunks, concatenated (frame k = bytes [offset, offset + length))
//   OUT/ecs_components.json  per frame: the chunk's place, and after it what the Engine holds
//                            (every component but the Transform, as the bytes its schema
//                            serializes; grow-only sets as their values' bytes, sorted) and the
//                            (entity, component) pairs changed / added / removed since the
//                            frame before, by diffing those dumps.
// The C++, C, wasm, C# and Python tests replay the frames (an update after each) and require
// exactly these bytes and lists. Deterministic: run it again, the files are the same.
// Usage: node tests/interop/gen_components.js [--out DIR]   (default tests/data/components)

const fs = require('fs')
const path = require('path')

const args = process.argv.slice(2)
if (args[0] === '--help' || args[0] === '-h') {
  process.stdout.write('usage: node tests/interop/gen_components.js [--out DIR]\n')
  process.exit(0)
}
const out = args[0] === '--out' && args[1] ? args[1] : path.join(__dirname, '../data/components')

const L = require('./lib/ecs')
const { ecs, ReadWriteByteBuffer } = L.E
const TRANSFORM_ID = 1

function hex(bytes) {
  return Buffer.from(bytes).toString('hex')
}

function serialize(component, value) {
  const b = new ReadWriteByteBuffer()
  component.schema.serialize(value, b)
  return hex(b.toCopiedBinary())
}

// What the Engine holds, as bytes: {"entity:component": hex} and {"entity:component": [hex]}.
function dump(engine, defs) {
  const values = {}
  const growOnly = {}
  for (const def of defs) {
    for (const [entity, value] of engine.getEntitiesWith(def)) {
      const key = `${entity >>> 0}:${def.componentId}`
      if (def.componentType === ecs.ComponentType.GrowOnlyValueSet) {
        growOnly[key] = [...value].map((v) => serialize(def, v)).sort()
      } else {
        values[key] = serialize(def, value)
      }
    }
  }
  return { values, growOnly }
}

function pairs(keys) {
  return keys
    .map((k) => k.split(':').map(Number))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
}

// The lists of docs/COMPONENTS.md from two dumps (the generator never rewrites equal bytes).
function diff(before, after) {
  const state = (d, k) => (k in d.values ? d.values[k] : k in d.growOnly ? d.growOnly[k].join(',') : null)
  const keys = new Set([...Object.keys(before.values), ...Object.keys(before.growOnly),
    ...Object.keys(after.values), ...Object.keys(after.growOnly)])
  const changed = []
  const added = []
  const removed = []
  for (const k of keys) {
    const a = state(before, k)
    const b = state(after, k)
    if (b !== null && a !== b) changed.push(k)
    if (b !== null && a === null) added.push(k)
    if (b === null && a !== null) removed.push(k)
  }
  return { changed: pairs(changed), added: pairs(added), removed: pairs(removed) }
}

async function main() {
  const engine = ecs.Engine()
  const chunks = []
  engine.addTransport({ type: 'golden', filter: () => true, send: async (m) => { chunks.push(Uint8Array.from(m)) } })
  const C = ecs.components
  const Transform = C.Transform(engine)
  const MeshRenderer = C.MeshRenderer(engine)
  const Material = C.Material(engine)
  const GltfContainer = C.GltfContainer(engine)
  const TextShape = C.TextShape(engine)
  const PointerEventsResult = C.PointerEventsResult(engine)
  const Spin = engine.defineComponent('scenecrdt-golden::Spin', {
    speed: ecs.Schemas.Float,
    axis: ecs.Schemas.Vector3,
    label: ecs.Schemas.String
  })
  const defs = [MeshRenderer, Material, GltfContainer, TextShape, PointerEventsResult, Spin]
  const hit = (button, timestamp) => ({
    button, hit: undefined, state: 1, timestamp, analog: undefined, tickNumber: timestamp
  })

  const frames = [
    // 1: three entities appear with what a renderer draws.
    (e) => {
      e.box = engine.addEntity()
      e.model = engine.addEntity()
      e.label = engine.addEntity()
      Transform.create(e.box, { position: { x: 1, y: 0.5, z: 2 } })
      Transform.create(e.model, { position: { x: -3, y: 0, z: 4 } })
      Transform.create(e.label, { position: { x: 0, y: 2, z: 0 }, parent: e.box })
      MeshRenderer.setBox(e.box)
      Material.setPbrMaterial(e.box, { albedoColor: { r: 1, g: 0.25, b: 0, a: 1 }, metallic: 0.5 })
      GltfContainer.create(e.model, { src: 'models/tree.glb' })
      TextShape.create(e.label, { text: 'hello', fontSize: 3 })
      Spin.create(e.box, { speed: 1.5, axis: { x: 0, y: 1, z: 0 }, label: 'spinner' })
      PointerEventsResult.addValue(e.model, hit(1, 10))
      PointerEventsResult.addValue(e.model, hit(2, 11))
    },
    // 2: values change, one component goes, one is added, the set grows.
    (e) => {
      MeshRenderer.setSphere(e.box)
      Spin.getMutable(e.box).speed = 2.25
      TextShape.deleteFrom(e.label)
      Material.setBasicMaterial(e.label, { diffuseColor: { r: 0, g: 0, b: 1, a: 1 } })
      PointerEventsResult.addValue(e.model, hit(3, 12))
      Transform.getMutable(e.box).position.x = 5
    },
    // 3: an entity is removed; a new one appears with a custom component only.
    (e) => {
      engine.removeEntity(e.model)
      e.extra = engine.addEntity()
      Spin.create(e.extra, { speed: -1, axis: { x: 1, y: 0, z: 0 }, label: '' })
      GltfContainer.create(e.label, { src: 'models/sign.glb', visibleMeshesCollisionMask: 1 })
    },
    // 4: nothing but a Transform move: no component list entry.
    (e) => {
      Transform.getMutable(e.label).position.y = 3
    }
  ]

  const entities = {}
  const result = { generator: 'tests/interop/gen_components.js', ecsVersion: L.E.version, components: {}, frames: [] }
  for (const d of defs) result.components[d.componentName] = d.componentId
  let before = { values: {}, growOnly: {} }
  let offset = 0
  for (const frame of frames) {
    const sent = chunks.length
    frame(entities)
    await engine.update(1)
    const bytes = Buffer.concat(chunks.slice(sent))
    const after = dump(engine, defs)
    result.frames.push({ offset, length: bytes.length, ...after, ...diff(before, after) })
    offset += bytes.length
    before = after
  }
  result.transformId = TRANSFORM_ID
  fs.mkdirSync(out, { recursive: true })
  fs.writeFileSync(path.join(out, 'ecs_components.dcl'), Buffer.concat(chunks))
  fs.writeFileSync(path.join(out, 'ecs_components.json'), JSON.stringify(result, null, 1) + '\n')
  process.stdout.write(`gen_components: ${result.frames.length} frames, ${offset} bytes -> ${out}\n`)
}

main().catch((e) => {
  process.stderr.write(`gen_components: ${e.stack || e}\n`)
  process.exit(1)
})
