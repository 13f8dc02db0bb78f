'use strict'
// The reference "ops" format (tests/data/conflicts.ops.json) -> harness messages.
//   {op:"put"|"delete"|"delete_entity"|"append", entity: u32 | {number,version}, component?,
//    timestamp, position?, rotation?, scale?, parent?: u32 | {number,version}, dataHex?}
// Transform fields default to identity; component defaults to 1 (Transform).

const { transformBytes, ecs } = require('./ecs')

function entityId(v) {
  if (v === undefined || v === null) return 0
  if (typeof v === 'number') return v >>> 0
  return ecs.EntityUtils.toEntityId(v.number, v.version || 0)
}

function vec(a, names, dflt) {
  const out = {}
  names.forEach((n, i) => {
    out[n] = a && a[i] !== undefined ? a[i] : dflt[i]
  })
  return out
}

function opToMessage(op) {
  const entity = entityId(op.entity)
  const component = op.component === undefined ? 1 : op.component
  const timestamp = (op.timestamp || 0) >>> 0
  const kind = op.op || op.type
  if (kind === 'put' || kind === 'append') {
    let data
    if (op.dataHex !== undefined) data = Uint8Array.from(Buffer.from(op.dataHex, 'hex'))
    else
      data = transformBytes({
        position: vec(op.position, ['x', 'y', 'z'], [0, 0, 0]),
        rotation: vec(op.rotation, ['x', 'y', 'z', 'w'], [0, 0, 0, 1]),
        scale: vec(op.scale, ['x', 'y', 'z'], [1, 1, 1]),
        parent: entityId(op.parent)
      })
    return { type: kind, entity, component, timestamp, data }
  }
  if (kind === 'delete') return { type: 'delete', entity, component, timestamp }
  if (kind === 'delete_entity') return { type: 'delete_entity', entity }
  throw new Error(`unsupported op ${JSON.stringify(op)}`)
}

function opsToMessages(doc) {
  const ops = Array.isArray(doc) ? doc : doc.ops
  return ops.map(opToMessage)
}

module.exports = { opsToMessages, opToMessage, entityId }
