#!/usr/bin/env node
'use strict'
// Owner: server/. Raw-DCL WebSocket interop: unmodified @dcl/ecs 7.28.0
// Engines join a live `scenecrdt serve` scene over ws://HOST:PORT/dcl/<scene> (the `ws` package
// as their transport), edit Transforms concurrently with a C++ client (`scenecrdt send`), and
// must all converge to exactly the Transforms `scenecrdt pull` reads, whose stateHash must equal
// `scenecrdt replay` of everything that was sent. See README.md "Raw-DCL WebSocket interop".

const fs = require('fs')
const os = require('os')
const path = require('path')
const { parseOptions } = require('./lib/args')
const http = require('http')
const { spawn } = require('child_process')
const WebSocket = require('ws')
const { ecs, TRANSFORM_ID, encodeMessages, transformBytes } = require('./lib/ecs')
const { frame, Failure, waitFor, runOk, entitiesOf, countMessages, id, f, edit, compare } = require('./lib/live_scene')
const { Rng } = require('./lib/prng')

const USAGE = `usage: node ws_interop.js --bin SCENECRDT [--rounds N] [--seed S] [--timeout SEC] [--keep DIR]

Starts "SCENECRDT serve" on free loopback ports (--auth, --data in a temporary directory) and
joins scene "interop" with:
  * engines A and B: unmodified @dcl/ecs 7.28.0 Engines, each with a WebSocket transport on
    ws://127.0.0.1:PORT/dcl/interop?token=<write token>; every round each one creates, moves,
    reparents, deletes entities and removes Transforms, then runs engine.update(); the socket
    delivers what arrives in between. Both allocate entity numbers from 512 on their own, so
    their ids collide: that is DCL's situation, and LWW resolves it (the comparison is exact).
  * engine C: a read-only spectator (read token) that joins a third of the way in: its snapshot
    arrives as one chunk; whatever it sends is dropped by the server.
  * the C++ client: "SCENECRDT send" of two streams (entities 5000-5007: creates, moves,
    reparents under engine entities, a DELETE_COMPONENT, a DELETE_ENTITY, a new version), the
    first before the engines join, the second half-way.
Then every engine keeps updating until its Transforms (live values and timestamps, the remove-set,
and which entity ids are deleted) equal what "SCENECRDT pull" prints, and pull's stateHash must
equal "SCENECRDT replay" of every chunk the writers' transports sent plus the C++ streams.

  --bin SCENECRDT  the scenecrdt binary (serve, send, pull, replay)
  --rounds N       edit rounds per writer engine (default 40)
  --seed S         seed of the edits (default 1)
  --timeout SEC    give up after SEC seconds in all (default 120)
  --keep DIR       keep the streams, the recorded chunks and the server log in DIR

Exit status: 0 converged and hashes equal; 1 mismatch (the differences are printed); 2 setup or
usage error.
`

const SCENE = 'interop'
const WRITE_TOKEN = 'interop write/token'  // percent-encoded in the URL
const READ_TOKEN = 'interop-read'

function parseArgs(argv) {
  const o = parseOptions(argv, USAGE, { bin: null, rounds: 40, seed: 1, timeout: 120, keep: null },
    { '--bin': ['bin', String], '--rounds': ['rounds', Number], '--seed': ['seed', Number], '--timeout': ['timeout', Number], '--keep': ['keep', String] })
  if (!o.bin) throw new Error('--bin is required')
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error('--rounds must be a positive integer')
  if (!(o.timeout > 0)) throw new Error('--timeout must be positive')
  return o
}

const log = (msg) => process.stderr.write(`ws-interop: ${msg}\n`)
function httpGet(port, urlPath) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, timeout: 10000 }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve(body))
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
  })
}

// ---- the C++ client's streams (written with @dcl/ecs's own writers) ----

function cppStreams() {
  const put = (entity, timestamp, position, parent = 0) => ({
    type: 'put',
    entity,
    component: TRANSFORM_ID,
    timestamp,
    data: transformBytes({
      position: { x: f(position[0]), y: f(position[1]), z: f(position[2]) },
      rotation: { x: 0, y: f(0.6), z: 0, w: f(0.8) },
      scale: { x: 1, y: f(2), z: 1 },
      parent
    })
  })
  const first = [
    put(id(5000), 1, [1, 0, 0]),
    put(id(5001), 1, [0, 1, 0], id(5000)),
    put(id(5002), 1, [0, 0, 1], id(5001)),
    put(id(5003), 1, [3, 3, 3]),
    put(id(5004), 1, [4, 4, 4]),
    put(id(5005), 1, [5, 5, 5]),
    { type: 'delete', entity: id(5005), component: TRANSFORM_ID, timestamp: 2 },
    put(id(5006), 1, [6, 6, 6], id(5003))
  ]
  const second = [
    put(id(5000), 5, [2, 0, 0]),
    put(id(5001), 3, [0, 1.5, 0], id(512)), // under an engine entity (which may be gone)
    put(id(5003), 4, [3, 3.5, 3], id(5002)),
    { type: 'delete_entity', entity: id(5004) },
    put(id(5006, 1), 1, [6, 6.5, 6]), // a new version retires 5006 v0
    put(id(5007), 1, [7, 7, 7], id(5000))
  ]
  return [encodeMessages(first).bytes, encodeMessages(second).bytes]
}

// ---- an @dcl/ecs Engine joined over the raw-DCL path ----

async function connectEngine(name, url, timeoutMs) {
  const engine = ecs.Engine()
  const Transform = engine.getComponent(TRANSFORM_ID)
  const sock = new WebSocket(url, { perMessageDeflate: false })
  const peer = { name, engine, Transform, sock, sent: [], sentEmpty: 0, received: 0, receivedBytes: 0, snapshot: null, closed: null, error: null, removedLocally: new Set() }
  // The transport @dcl/ecs calls: send() gets a view of the engine's buffer (copied here before
  // it goes out); onmessage is installed by addTransport.
  const transport = {
    type: 'scenecrdt-ws',
    filter: () => true,
    send: async (message) => {
      const copy = Buffer.from(message)
      if (sock.readyState !== WebSocket.OPEN) return
      sock.send(copy)
      if (copy.byteLength) peer.sent.push(copy)
      else peer.sentEmpty++
    }
  }
  engine.addTransport(transport)
  sock.on('message', (data, isBinary) => {
    if (!isBinary) {
      peer.error = 'the server sent a text message'
      return
    }
    const chunk = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    if (peer.snapshot === null) peer.snapshot = chunk
    peer.received++
    peer.receivedBytes += chunk.byteLength
    transport.onmessage(chunk)
  })
  sock.on('close', (code, reason) => (peer.closed = { code, reason: reason.toString() }))
  sock.on('error', (e) => (peer.error = String(e.message || e)))
  sock.on('unexpected-response', (req, res) => (peer.error = `upgrade refused: HTTP ${res.statusCode}`))
  await waitFor(() => peer.snapshot !== null || peer.error || peer.closed, timeoutMs, `${name}'s snapshot`)
  if (peer.snapshot === null) throw new Failure(`${name} could not join: ${peer.error || JSON.stringify(peer.closed)}`)
  await engine.update(1) // applies the snapshot
  return peer
}

// ---- main ----

async function main() {
  let opts
  try {
    opts = parseArgs(process.argv.slice(2))
  } catch (e) {
    process.stderr.write(`ws-interop: error: ${e.message}\n`)
    return 2
  }
  const bin = path.resolve(opts.bin)
  if (!fs.existsSync(bin)) {
    process.stderr.write(`ws-interop: error: ${bin} does not exist\n`)
    return 2
  }
  const started = Date.now()
  const work = opts.keep ? path.resolve(opts.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'scenecrdt-ws-interop-'))
  fs.mkdirSync(work, { recursive: true })
  const authFile = path.join(work, 'auth.json')
  fs.writeFileSync(
    authFile,
    JSON.stringify({
      tokens: [
        { token: WRITE_TOKEN, scenes: [SCENE], role: 'write' },
        { token: READ_TOKEN, scenes: [SCENE], role: 'read' }
      ]
    })
  )
  const serveArgs = ['serve', '--tcp', '127.0.0.1:0', '--http', '127.0.0.1:0', '--data', path.join(work, 'data'), '--no-fsync', '--auth', authFile]
  const serve = spawn(bin, serveArgs, { stdio: ['ignore', 'ignore', 'pipe'] })
  let serveLog = ''
  let serveExit = null
  serve.stderr.setEncoding('utf8')
  serve.stderr.on('data', (d) => (serveLog += d))
  serve.on('exit', (code, signal) => (serveExit = { code, signal }))
  const peers = []
  const overall = setTimeout(() => {
    process.stderr.write(`ws-interop: FAIL: no result within --timeout ${opts.timeout} s\n${serveLog.slice(-4000)}\n`)
    serve.kill('SIGKILL')
    process.exit(1)
  }, opts.timeout * 1000)
  try {
    await waitFor(() => /listening ws:\/\/127\.0\.0\.1:\d+/.test(serveLog) || serveExit, 60000, 'scenecrdt serve to listen')
    if (serveExit) throw new Failure(`scenecrdt serve exited at start (${JSON.stringify(serveExit)}): ${serveLog}`)
    const tcpPort = Number(/listening tcp:\/\/127\.0\.0\.1:(\d+)/.exec(serveLog)[1])
    const httpPort = Number(/listening ws:\/\/127\.0\.0\.1:(\d+)/.exec(serveLog)[1])
    const tcpUrl = `tcp://127.0.0.1:${tcpPort}`
    const dclUrl = (token) => `ws://127.0.0.1:${httpPort}/dcl/${SCENE}?token=${encodeURIComponent(token)}`
    log(`serve on tcp ${tcpPort}, http ${httpPort}; data in ${work}`)

    // The C++ client's first stream, before anyone joins (the engines get it as a snapshot).
    const [cpp1, cpp2] = cppStreams()
    fs.writeFileSync(path.join(work, 'cpp-1.dcl'), cpp1)
    fs.writeFileSync(path.join(work, 'cpp-2.dcl'), cpp2)
    const send = (file) => runOk(bin, ['send', '--server', tcpUrl, '--scene', SCENE, '--token', WRITE_TOKEN, path.join(work, file)])
    await send('cpp-1.dcl')

    // A wrong token is refused before the upgrade.
    const refused = await new Promise((resolve) => {
      const s = new WebSocket(dclUrl('wrong'))
      s.on('unexpected-response', (req, res) => resolve(res.statusCode))
      s.on('open', () => resolve('open'))
      s.on('error', () => resolve('error'))
    })
    if (refused !== 401) throw new Failure(`a wrong token got ${refused}, expected HTTP 401`)

    const a = await connectEngine('A', dclUrl(WRITE_TOKEN), 20000)
    const b = await connectEngine('B', dclUrl(WRITE_TOKEN), 20000)
    peers.push(a, b)
    const snapshotMessages = countMessages(a.snapshot)
    if (snapshotMessages !== countMessages(b.snapshot) || snapshotMessages === 0) {
      throw new Failure(`snapshots differ or are empty: A ${snapshotMessages} messages, B ${countMessages(b.snapshot)}`)
    }
    log(`A and B joined; each got the scene as one ${a.snapshot.byteLength}-byte chunk (${snapshotMessages} messages)`)

    const cppIds = [5000, 5001, 5002, 5003, 5007].map((n) => id(n))
    const rngs = [new Rng(`ws-interop/${opts.seed}/A`), new Rng(`ws-interop/${opts.seed}/B`)]
    // Edits run as an engine system, like a scene script's: inside update(), after the
    // received messages are applied and before the changes are sent. (Editing between two
    // update() calls instead races with messages already queued by the transport.)
    const editNextUpdate = [false, false]
    for (let i = 0; i < 2; i++) {
      peers[i].engine.addSystem(() => {
        if (!editNextUpdate[i]) return
        editNextUpdate[i] = false
        edit(peers[i], rngs[i], cppIds)
      })
    }
    let secondSend = null
    let c = null
    for (let round = 0; round < opts.rounds; round++) {
      for (let i = 0; i < 2; i++) {
        editNextUpdate[i] = true
        await peers[i].engine.update(1)
      }
      if (c) await c.engine.update(1)
      await frame(5)
      if (round === Math.floor(opts.rounds / 3)) {
        c = await connectEngine('C (read-only)', dclUrl(READ_TOKEN), 20000)
        peers.push(c)
      }
      if (round === Math.floor(opts.rounds / 2)) secondSend = send('cpp-2.dcl')
      for (const p of peers) if (p.closed || p.error) throw new Failure(`${p.name} lost its connection: ${p.error || JSON.stringify(p.closed)}`)
    }
    await secondSend

    // Every id any writer or the C++ client sent.
    const knownIds = new Set()
    for (const chunk of [cpp1, cpp2, ...a.sent, ...b.sent]) for (const e of entitiesOf(chunk)) knownIds.add(e >>> 0)

    // Convergence: keep the render loops going (no more edits) until every engine equals pull.
    const deadline = Date.now() + 30000
    let pulled = null
    let diffs = []
    for (let attempt = 1; ; attempt++) {
      for (const p of peers) await p.engine.update(1)
      await frame(20)
      pulled = JSON.parse(await runOk(bin, ['pull', '--server', `ws://127.0.0.1:${httpPort}`, '--scene', SCENE, '--token', READ_TOKEN]))
      diffs = []
      for (const p of peers) for (const d of compare(p, pulled, knownIds)) diffs.push(`${p.name}: ${d}`)
      if (diffs.length === 0) {
        log(`all engines equal pull after ${attempt} settle round(s)`)
        break
      }
      if (Date.now() > deadline) {
        throw new Failure(`engines did not converge to pull within 30 s; ${diffs.length} differences:\n  ${diffs.slice(0, 40).join('\n  ')}`)
      }
    }

    // The server's state is exactly the merge of everything sent (the writers' transports and
    // the C++ streams; the read-only engine's chunks were dropped). Nothing is sent any more,
    // so once the server has merged what is in flight the hashes must be equal.
    const recorded = [['cpp-1.dcl', cpp1], ['cpp-2.dcl', cpp2]]
    for (const p of [a, b]) {
      const file = `sent-${p.name}.dcl`
      fs.writeFileSync(path.join(work, file), Buffer.concat(p.sent))
      recorded.push([file, Buffer.concat(p.sent)])
    }
    const replayed = JSON.parse(await runOk(bin, ['replay', ...recorded.map(([file]) => path.join(work, file))]))
    const hashDeadline = Date.now() + 10000
    while (pulled.stateHash !== replayed.stateHash) {
      if (Date.now() > hashDeadline) {
        throw new Failure(`pull stateHash ${pulled.stateHash} != replay stateHash ${replayed.stateHash} of ${recorded.map(([file]) => file).join(' ')}`)
      }
      await frame(50)
      pulled = JSON.parse(await runOk(bin, ['pull', '--server', `ws://127.0.0.1:${httpPort}`, '--scene', SCENE, '--token', READ_TOKEN]))
    }

    // Metrics of the raw path while the three engines are joined (C's last chunk may still be
    // on its way: polled, bounded).
    const cSent = c ? c.sent.reduce((n, chunk) => n + countMessages(chunk), 0) : 0
    let seen = ''
    const metricsDeadline = Date.now() + 10000
    for (;;) {
      const metrics = await httpGet(httpPort, '/metrics')
      const metric = (series) => {
        const m = new RegExp(`^${series.replace(/[{}"=,]/g, (ch) => '\\' + ch)} (\\S+)$`, 'm').exec(metrics)
        return m ? Number(m[1]) : NaN
      }
      const dclOpen = metric('scenecrdt_sessions_by_kind{kind="dcl"}')
      const dclJoins = metric('scenecrdt_joins_total{kind="dcl",state="snapshot"}')
      const readOnlyDrops = metric('scenecrdt_dcl_dropped_messages_total{reason="read_only"}')
      seen = `dcl sessions ${dclOpen} (want 3), dcl joins ${dclJoins} (want 3), read-only drops ${readOnlyDrops} (want ${cSent}, what C sent)`
      if (dclOpen === 3 && dclJoins === 3 && readOnlyDrops === cSent) break
      if (Date.now() > metricsDeadline) throw new Failure(`/metrics: ${seen}`)
      await frame(50)
    }

    for (const p of peers) p.sock.close(1000, 'done')
    await waitFor(() => peers.every((p) => p.closed), 10000, 'the engines to close')
    serve.kill('SIGTERM')
    await waitFor(() => serveExit, 30000, 'scenecrdt serve to stop')
    if (serveExit.code !== 0) throw new Failure(`scenecrdt serve exited ${JSON.stringify(serveExit)} after SIGTERM`)
    const opens = (serveLog.match(/ open scene=interop session=\d+ kind=dcl /g) || []).length
    const closes = (serveLog.match(/ close scene=interop session=\d+ kind=dcl [^\n]*reason=client_closed/g) || []).length
    if (opens !== 3 || closes !== 3) throw new Failure(`server log: ${opens} dcl open lines and ${closes} dcl close lines, want 3 and 3`)
    if (opts.keep) fs.writeFileSync(path.join(work, 'serve.log'), serveLog)

    const sentMessages = (p) => p.sent.reduce((n, chunk) => n + countMessages(chunk), 0)
    const live = pulled.transforms.length
    const removed = pulled.entities.filter((e) => e.state === 'Removed').length
    console.log(
      `ws-interop: OK: engines A, B (write) and C (read-only) over /dcl/, and the C++ client, converged on ${live} live Transforms ` +
        `(${pulled.deletedTransforms.length} removed Transforms, ${removed} deleted entity ids); ` +
        `A sent ${a.sent.length} chunks / ${sentMessages(a)} messages, B ${b.sent.length} / ${sentMessages(b)}, ` +
        `C ${c.sent.length} / ${cSent} (dropped: read-only), C++ ${countMessages(cpp1) + countMessages(cpp2)} messages; ` +
        `A received ${a.received} chunks, B ${b.received}, C ${c.received}; ` +
        `pull stateHash ${pulled.stateHash} == replay of all sent; ${((Date.now() - started) / 1000).toFixed(1)} s`
    )
    if (!opts.keep) fs.rmSync(work, { recursive: true, force: true })
    return 0
  } catch (e) {
    if (!(e instanceof Failure)) throw e
    process.stderr.write(`ws-interop: FAIL: ${e.message}\n`)
    for (const p of peers) {
      process.stderr.write(`  ${p.name}: sent ${p.sent.length} chunks (+${p.sentEmpty} empty), received ${p.received} (${p.receivedBytes} bytes)${p.closed ? `, closed ${JSON.stringify(p.closed)}` : ''}${p.error ? `, error ${p.error}` : ''}\n`)
    }
    fs.mkdirSync(work, { recursive: true })
    fs.writeFileSync(path.join(work, 'serve.log'), serveLog)
    for (const p of peers) fs.writeFileSync(path.join(work, `sent-${p.name[0]}.dcl`), Buffer.concat(p.sent))
    process.stderr.write(`  server log tail:\n${serveLog.split('\n').slice(-25).join('\n')}\n  kept in ${work}\n`)
    return 1
  } finally {
    clearTimeout(overall)
    for (const p of peers) p.sock.terminate()
    if (!serveExit) serve.kill('SIGKILL')
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`ws-interop: error: ${e && e.stack ? e.stack : e}\n`)
    process.exit(2)
  }
)
