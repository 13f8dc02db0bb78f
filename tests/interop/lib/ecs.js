'use strict'
// Thin driver around the real @dcl/ecs 7.28.0 (its CommonJS build, dist-cjs): the message
// writers, a fresh Engine fed through a transport, and a JSON dump of the Engine's state.
//
// Facts this relies on (read in node_modules/@dcl/ecs/dist-cjs, checked by running):
// * `require('@dcl/ecs')` loads dist/ (ES modules without "type":"module") and fails under
//   node; dist-cjs is the loadable build and needs protobufjs, @protobufjs/utf8 and long.
// * Engine() registers only Transform (id 1) plus NetworkEntity/NetworkParent. A message for an
//   unregistered component id is NOT stored (only re-broadcast), but it still marks its entity
//   used (and retires older versions) before the component lookup.
// * LWW timestamps live inside the component definition; `dumpCrdtStateToBuffer` writes them
//   out as PUT (data present, re-serialised by the schema) or DELETE_COMPONENT (remove-set).
// * APPEND_VALUE only lands in a grow-only-value-set component (defineValueSetComponentFromSchema).

const path = require('path')

const EXPECTED_VERSION = '7.28.0'

function loadEcs() {
  let pkg
  try {
    pkg = require('@dcl/ecs/package.json')
  } catch (e) {
    throw new Error(
      `@dcl/ecs is not installed next to ${path.resolve(__dirname, '..')}: run "npm ci" in tests/interop ` +
        '(run.sh does it for you)'
    )
  }
  if (pkg.version !== EXPECTED_VERSION) {
    throw new Error(`@dcl/ecs ${pkg.version} installed, expected ${EXPECTED_VERSION}: run "npm ci" in tests/interop`)
  }
  const ecs = require('@dcl/ecs/dist-cjs')
  const { ReadWriteByteBuffer } = require('@dcl/ecs/dist-cjs/serialization/ByteBuffer')
  const { TransformSchema, TRANSFORM_LENGTH } = require('@dcl/ecs/dist-cjs/components/manual/Transform')
  const { componentNumberFromName } = require('@dcl/ecs/dist-cjs/components/component-number')
  return { ecs, version: pkg.version, ReadWriteByteBuffer, TransformSchema, TRANSFORM_LENGTH, componentNumberFromName }
}

const E = loadEcs()
const { ecs, ReadWriteByteBuffer, TransformSchema } = E
const T = ecs.CrdtMessageType

// Opaque byte payloads: a schema that stores the bytes verbatim, so the Engine's
// re-serialisation (used by its tie-break) is byte-identical to what was received.
const RawBytesSchema = {
  serialize(value, builder) {
    builder.writeBuffer(value, false)
  },
  deserialize(reader) {
    const n = reader.remainingBytes()
    const at = reader.incrementReadOffset(n)
    return reader.buffer().slice(at, at + n)
  },
  create() {
    return new Uint8Array(0)
  },
  extend(value) {
    return value
  },
  jsonSchema: { type: 'string', serializationType: 'bytes' }
}

// Same bytes wrapped in an object: the value-set component Object.freeze()s every value in
// dev mode, which throws for a non-empty Uint8Array.
const WrappedBytesSchema = {
  serialize(value, builder) {
    builder.writeBuffer(value.bytes, false)
  },
  deserialize(reader) {
    return { bytes: RawBytesSchema.deserialize(reader) }
  },
  create() {
    return { bytes: new Uint8Array(0) }
  },
  jsonSchema: { type: 'object', serializationType: 'bytes' }
}

// Components the harness registers in every Engine besides Transform.
const OPAQUE_LWW_NAMES = ['scenecrdt-interop::OpaqueA', 'scenecrdt-interop::OpaqueB']
const APPEND_SET_NAME = 'scenecrdt-interop::AppendSet'
const OPAQUE_LWW_IDS = OPAQUE_LWW_NAMES.map((n) => E.componentNumberFromName(n))
const APPEND_SET_ID = E.componentNumberFromName(APPEND_SET_NAME)
// A component id nobody registers: the Engine keeps no data for it (entity-state effects only).
const UNREGISTERED_ID = 1500
const TRANSFORM_ID = 1

function registerInteropComponents(engine) {
  const lww = OPAQUE_LWW_NAMES.map((name) => engine.defineComponentFromSchema(name, RawBytesSchema))
  const set = engine.defineValueSetComponentFromSchema(APPEND_SET_NAME, WrappedBytesSchema, {
    maxElements: 1 << 30,
    timestampFunction: () => 0 // stable sort keeps arrival order; compared as a set anyway
  })
  return { lww, set }
}

// ---- writers (all through @dcl/ecs's own serialisers) ----

function newBuffer() {
  return new ReadWriteByteBuffer()
}

function transformBytes(value) {
  const b = new ReadWriteByteBuffer()
  TransformSchema.serialize(value, b)
  return b.toCopiedBinary()
}

// Re-serialise raw Transform bytes the way the Engine stores them (deserialize + serialize).
function canonicalTransformBytes(bytes) {
  const v = TransformSchema.deserialize(new ReadWriteByteBuffer(bytes))
  return transformBytes(v)
}

function decodeTransform(bytes) {
  return TransformSchema.deserialize(new ReadWriteByteBuffer(bytes))
}

// msg: {type:'put'|'delete'|'delete_entity'|'append'|'put_network'|'delete_network'|'delete_entity_network',
//       entity, component, timestamp, data(Uint8Array), networkId}
function writeMessage(msg, buf) {
  switch (msg.type) {
    case 'put':
      ecs.PutComponentOperation.write(msg.entity, msg.timestamp, msg.component, msg.data, buf)
      break
    case 'delete':
      ecs.DeleteComponent.write(msg.entity, msg.component, msg.timestamp, buf)
      break
    case 'delete_entity':
      ecs.DeleteEntity.write(msg.entity, buf)
      break
    case 'append':
      ecs.AppendValueOperation.write(msg.entity, msg.timestamp, msg.component, msg.data, buf)
      break
    case 'put_network':
      ecs.PutNetworkComponentOperation.write(msg.entity, msg.timestamp, msg.component, msg.networkId, msg.data, buf)
      break
    case 'delete_network':
      ecs.DeleteComponentNetwork.write(msg.entity, msg.component, msg.timestamp, msg.networkId, buf)
      break
    case 'delete_entity_network':
      ecs.DeleteEntityNetwork.write(msg.entity, msg.networkId, buf)
      break
    default:
      throw new Error(`unknown message type ${msg.type}`)
  }
}

// Encode messages; returns {bytes, offsets} where offsets[i] is where message i starts.
function encodeMessages(messages) {
  const buf = newBuffer()
  const offsets = []
  for (const m of messages) {
    offsets.push(buf.currentWriteOffset())
    writeMessage(m, buf)
  }
  return { bytes: buf.toCopiedBinary(), offsets }
}

// Split a stream at message boundaries. cuts: sorted message indexes where a new chunk starts.
function splitAt(bytes, offsets, cuts) {
  const chunks = []
  let start = 0
  for (const c of cuts) {
    if (c <= 0 || c >= offsets.length) continue
    const at = offsets[c]
    if (at > start) {
      chunks.push(bytes.slice(start, at))
      start = at
    }
  }
  chunks.push(bytes.slice(start))
  return chunks
}

// ---- the Engine ----

// Feeds chunks to a fresh Engine: each chunk is handed to transport.onmessage and followed by
// one engine.update(). Returns the engine. With opts.errors (an array), an exception thrown by
// engine.update() is recorded there and feeding continues; otherwise it propagates.
async function runEngine(chunks, opts = {}) {
  const engine = ecs.Engine()
  registerInteropComponents(engine)
  const transport = {
    type: 'scenecrdt-interop',
    filter: () => true,
    send: async () => {}
  }
  engine.addTransport(transport)
  for (const chunk of chunks) {
    transport.onmessage(chunk)
    if (!opts.errors) {
      await engine.update(1)
      continue
    }
    try {
      await engine.update(1)
    } catch (e) {
      opts.errors.push(String(e && e.message ? e.message : e))
    }
  }
  return engine
}

const STATE_NAMES = ['Unknown', 'UsedEntity', 'Removed', 'Reserved']

function hex(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

function entitySplit(entity) {
  return { number: entity & 0xffff, version: (entity >>> 16) & 0xffff }
}

// Reads an LWW definition's registers through its own dump: [{entity,timestamp,dataHex|null}]
function dumpLww(definition) {
  const buf = newBuffer()
  definition.dumpCrdtStateToBuffer(buf)
  const out = []
  const rd = new ReadWriteByteBuffer(buf.toCopiedBinary())
  let header
  while ((header = ecs.CrdtMessageProtocol.getHeader(rd))) {
    if (header.type === T.PUT_COMPONENT) {
      const m = ecs.PutComponentOperation.read(rd)
      out.push({ entity: m.entityId >>> 0, timestamp: m.timestamp >>> 0, dataHex: hex(m.data) })
    } else if (header.type === T.DELETE_COMPONENT) {
      const m = ecs.DeleteComponent.read(rd)
      out.push({ entity: m.entityId >>> 0, timestamp: m.timestamp >>> 0, dataHex: null })
    } else {
      throw new Error(`unexpected message type ${header.type} in an LWW dump`)
    }
  }
  return out
}

const byEntity = (a, b) => a.entity - b.entity
const byComponentEntity = (a, b) => a.component - b.component || a.entity - b.entity

// Dumps the Engine state in the same shape as `scenecrdt replay` (minus decoded floats and the
// hash). `carried` is the list of entity ids the stream's messages carried.
function dumpEngine(engine, carried) {
  const state = {
    ecsVersion: E.version,
    transforms: [],
    deletedTransforms: [],
    components: [],
    deletedComponents: [],
    appendValues: [],
    entities: []
  }
  for (const r of dumpLww(engine.getComponent(TRANSFORM_ID))) {
    if (r.dataHex === null) state.deletedTransforms.push({ entity: r.entity, timestamp: r.timestamp })
    else state.transforms.push({ entity: r.entity, ...entitySplit(r.entity), timestamp: r.timestamp, dataHex: r.dataHex })
  }
  for (const id of OPAQUE_LWW_IDS) {
    for (const r of dumpLww(engine.getComponent(id))) {
      if (r.dataHex === null) state.deletedComponents.push({ component: id, entity: r.entity, timestamp: r.timestamp })
      else state.components.push({ component: id, entity: r.entity, timestamp: r.timestamp, dataHex: r.dataHex })
    }
  }
  const set = engine.getComponent(APPEND_SET_ID)
  for (const [entity, values] of set.iterator()) {
    state.appendValues.push({ component: APPEND_SET_ID, entity: entity >>> 0, values: [...values].map((v) => hex(v.bytes)) })
  }
  for (const entity of [...new Set(carried)].sort((a, b) => a - b)) {
    const s = engine.getEntityState(entity)
    state.entities.push({ entity, ...entitySplit(entity), state: STATE_NAMES[s] ?? `state#${s}` })
  }
  state.transforms.sort(byEntity)
  state.deletedTransforms.sort(byEntity)
  state.components.sort(byComponentEntity)
  state.deletedComponents.sort(byComponentEntity)
  state.appendValues.sort(byComponentEntity)
  return state
}

function carriedEntities(messages) {
  return messages.map((m) => m.entity >>> 0)
}

module.exports = {
  E,
  ecs,
  T,
  RawBytesSchema,
  OPAQUE_LWW_IDS,
  APPEND_SET_ID,
  UNREGISTERED_ID,
  TRANSFORM_ID,
  newBuffer,
  transformBytes,
  canonicalTransformBytes,
  decodeTransform,
  writeMessage,
  encodeMessages,
  splitAt,
  runEngine,
  dumpEngine,
  dumpLww,
  carriedEntities,
  hex,
  entitySplit
}
