'use strict'
// Unit tests of the outbox (src/outbox.ts, built to dist/): keying, confirmation by server
// chunks, and the byte bound (docs/ECS-TRANSPORT.md "The outbox"). Run: npm run build && npm test.

const test = require('node:test')
const assert = require('node:assert')
const { Outbox } = require('../dist')

function put(entity, timestamp, fill = 0, component = 1) {
  const b = Buffer.alloc(24 + 44, fill)
  b.writeUInt32LE(68, 0)
  b.writeUInt32LE(1, 4)
  b.writeUInt32LE(entity, 8)
  b.writeUInt32LE(component, 12)
  b.writeUInt32LE(timestamp, 16)
  b.writeUInt32LE(44, 20)
  return new Uint8Array(b)
}
function delEntity(entity) {
  const b = Buffer.alloc(12)
  b.writeUInt32LE(12, 0)
  b.writeUInt32LE(3, 4)
  b.writeUInt32LE(entity, 8)
  return new Uint8Array(b)
}
function append(entity, timestamp) {
  const b = Buffer.alloc(26)
  b.writeUInt32LE(26, 0)
  b.writeUInt32LE(4, 4)
  b.writeUInt32LE(entity, 8)
  b.writeUInt32LE(1200, 12)
  b.writeUInt32LE(timestamp, 16)
  b.writeUInt32LE(2, 20)
  return new Uint8Array(b)
}
const cat = (...parts) => new Uint8Array(Buffer.concat(parts.map((p) => Buffer.from(p))))
const flush = (o) => Buffer.concat(o.drain(1 << 20).map((c) => Buffer.from(c)))

test('a newer write to the same register replaces the older one', () => {
  const o = new Outbox(1 << 20)
  o.add(cat(put(512, 1), put(513, 1), put(512, 2)), false)
  assert.strictEqual(o.messages, 2)
  assert.strictEqual(o.byteSize, 136)
  assert.deepStrictEqual(flush(o), Buffer.concat([Buffer.from(put(513, 1)), Buffer.from(put(512, 2))]))
})

test('sent entries stay until a server chunk shows them, then are confirmed', () => {
  const o = new Outbox(1 << 20)
  o.add(cat(put(512, 3, 7), put(513, 3), delEntity(514 | (1 << 16))), true)
  assert.strictEqual(o.pendingMessages, 0)
  assert.strictEqual(o.messages, 3)
  // Same timestamp, different bytes: not confirmed (the tie-break may go either way without ours).
  o.confirm(put(512, 3, 9))
  // Newer timestamp: confirmed; DELETE_ENTITY of a newer version: confirmed.
  o.confirm(cat(put(513, 4), delEntity(514 | (2 << 16))))
  assert.strictEqual(o.messages, 1)
  o.confirm(put(512, 3, 7)) // identical: confirmed
  assert.strictEqual(o.messages, 0)
  assert.strictEqual(o.counters.confirmed, 3)
})

test('appends are sent once and not retained', () => {
  const o = new Outbox(1 << 20)
  o.add(cat(append(512, 1), append(512, 2)), false)
  assert.strictEqual(o.pendingMessages, 2)
  assert.strictEqual(flush(o).byteLength, 52)
  assert.strictEqual(o.messages, 0)
  o.add(append(512, 3), true)
  assert.strictEqual(o.messages, 0)
})

test('the byte bound evicts retained entries first, then loses the oldest pending ones', () => {
  const o = new Outbox(68 * 3)
  o.add(cat(put(600, 1), put(601, 1)), true) // retained
  assert.strictEqual(o.add(cat(put(700, 1), put(701, 1)), false), 0) // evicts both retained
  assert.strictEqual(o.counters.evicted, 1)
  assert.strictEqual(o.add(cat(put(702, 1), put(703, 1)), false), 1)
  assert.strictEqual(o.counters.evicted, 2)
  assert.strictEqual(o.counters.lost, 1)
  assert.ok(o.byteSize <= 68 * 3)
  const kept = flush(o)
  assert.deepStrictEqual(kept, Buffer.concat([put(701, 1), put(702, 1), put(703, 1)].map((p) => Buffer.from(p))))
})

test('drain splits into chunks of at most the given size', () => {
  const o = new Outbox(1 << 20)
  for (let i = 0; i < 10; i++) o.add(put(512 + i, 1), false)
  const chunks = o.drain(68 * 4)
  assert.deepStrictEqual(chunks.map((c) => c.byteLength), [272, 272, 136])
})

test('a chunk that does not parse is kept whole, never merged', () => {
  const o = new Outbox(1 << 20)
  const bad = new Uint8Array([3, 0, 0, 0, 1, 0, 0, 0])
  o.add(bad, false)
  o.add(bad, false)
  assert.strictEqual(o.pendingMessages, 2)
})
