'use strict'
// Unit tests of the transport's sends (src/transport.ts, built to dist/) over a scripted
// WebSocket: every WebSocket message stays under maxFlushChunkBytes, the server's read limit
// (docs/ECS-TRANSPORT.md "Message size"): an engine chunk larger is cut at message boundaries,
// live and in the flush after a join; a single message larger is not sent and is reported.
// Run: npm run build && npm test.

const test = require('node:test')
const assert = require('node:assert')
const { ScenecrdtEcsTransport } = require('../dist')

// A PUT_COMPONENT of component 1500 with `payload` bytes.
function put(entity, payload, timestamp = 1) {
  const b = Buffer.alloc(24 + payload, entity & 0xff)
  b.writeUInt32LE(24 + payload, 0)
  b.writeUInt32LE(1, 4)
  b.writeUInt32LE(entity, 8)
  b.writeUInt32LE(1500, 12)
  b.writeUInt32LE(timestamp, 16)
  b.writeUInt32LE(payload, 20)
  return b
}
const cat = (parts) => new Uint8Array(Buffer.concat(parts))

// The socket the transport opens: records what it sends; the test opens it and delivers.
class FakeSocket {
  static last = null
  constructor(url) {
    this.url = url
    this.binaryType = 'blob'
    this.readyState = 0
    this.sent = []
    this.onopen = this.onmessage = this.onclose = this.onerror = null
    FakeSocket.last = this
  }
  send(data) {
    this.sent.push(Buffer.from(data))
  }
  close() {
    this.readyState = 3
  }
  open() {
    this.readyState = 1
    this.onopen?.({})
  }
  deliver(bytes) {
    this.onmessage?.({ data: new Uint8Array(bytes).buffer })
  }
}

function start(options = {}) {
  const oversize = []
  const t = new ScenecrdtEcsTransport({
    url: 'ws://127.0.0.1:1/dcl/unit',
    WebSocket: FakeSocket,
    onOversize: (bytes, total) => oversize.push([bytes, total]),
    ...options
  })
  t.onmessage = () => {} // what engine.addTransport does: connects
  return { t, ws: FakeSocket.last, oversize }
}

test('an engine chunk above maxFlushChunkBytes is cut at message boundaries', async () => {
  const { t, ws } = start({ maxFlushChunkBytes: 64 << 10 })
  ws.open()
  ws.deliver(put(9000, 4)) // the snapshot: joined
  assert.equal(t.state, 'joined')
  const messages = []
  for (let e = 0; e < 100; e++) messages.push(put(600 + e, 4000)) // ~402 KB in one update()
  await t.send(cat(messages))
  assert.ok(ws.sent.length >= 7, `${ws.sent.length} messages`)
  for (const m of ws.sent) assert.ok(m.length <= 64 << 10, `${m.length} bytes`)
  assert.deepEqual(Buffer.concat(ws.sent), Buffer.concat(messages))
  assert.equal(t.stats().sentChunks, ws.sent.length)
  assert.equal(t.stats().oversizedMessages, 0)
})

test('what waited for a join is flushed under the limit too', async () => {
  const { t, ws } = start({ maxFlushChunkBytes: 16 << 10 })
  const messages = []
  for (let e = 0; e < 40; e++) messages.push(put(700 + e, 2000))
  await t.send(cat(messages)) // not joined: the outbox keeps it
  assert.equal(ws.sent.length, 0)
  ws.open()
  ws.deliver(put(9000, 4))
  assert.ok(ws.sent.length >= 5, `${ws.sent.length} messages`)
  for (const m of ws.sent) assert.ok(m.length <= 16 << 10, `${m.length} bytes`)
  assert.equal(Buffer.concat(ws.sent).length, Buffer.concat(messages).length)
})

test('a message larger than maxFlushChunkBytes alone is not sent, and said', async () => {
  const { t, ws, oversize } = start({ maxFlushChunkBytes: 16 << 10 })
  ws.open()
  ws.deliver(put(9000, 4))
  const small = put(800, 10)
  const huge = put(801, 20000)
  const after = put(802, 10)
  await t.send(cat([small, huge, after]))
  assert.deepEqual(Buffer.concat(ws.sent), Buffer.concat([small, after]))
  assert.deepEqual(oversize, [[huge.length, 1]])
  assert.equal(t.stats().oversizedMessages, 1)
  assert.match(t.stats().lastError, /20024-byte message is larger than maxFlushChunkBytes/)
  // Not in the outbox either: a later flush does not send it.
  assert.equal(t.stats().outboxMessages, 2)
})

test('maxFlushChunkBytes is checked', () => {
  assert.throws(() => new ScenecrdtEcsTransport({ url: 'ws://h:1/dcl/x', WebSocket: FakeSocket, maxFlushChunkBytes: 10 }), /maxFlushChunkBytes/)
})
