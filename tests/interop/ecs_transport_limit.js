#!/usr/bin/env node
'use strict'
// Owner: ecs-transport/. One update() of a real @dcl/ecs 7.28.0 engine that writes 1 000
// components of 4 KB (a 4 MB chunk, four times the server's WebSocket read limit of 1 MiB)
// through the ecs-transport package against a live `scenecrdt serve` (issue 23 item 14): the
// transport cuts it under maxFlushChunkBytes, so the server never closes the connection (1009),
// the scene holds exactly what was sent, and a second engine joining gets all of it.

const fs = require('fs')
const os = require('os')
const path = require('path')
const { spawn } = require('child_process')
const WebSocket = require('ws')
const { parseOptions } = require('./lib/args')
const { ecs, RawBytesSchema } = require('./lib/ecs')
const { Rng } = require('./lib/prng')
const { frame, Failure, waitFor, runOk } = require('./lib/live_scene')

const USAGE = `usage: node ecs_transport_limit.js --bin SCENECRDT [--components N] [--bytes B]
                                    [--transport DIR] [--timeout SEC]

Starts "SCENECRDT serve" (default limits: WebSocket messages up to 1 MiB) on free loopback
ports. Engine A, with the ecs-transport package's transport on ws://.../dcl/limit, writes N
components of B bytes each (an LWW component of the harness) in one update(). Pass: A's
transport never lost its connection and sent no message above its maxFlushChunkBytes (256 KiB),
"SCENECRDT pull"'s stateHash equals "SCENECRDT replay" of every byte A sent, and engine B,
joining afterwards, holds the N values.

  --bin SCENECRDT   the scenecrdt binary (serve, pull, replay)
  --components N    components written in the one update (default 1000)
  --bytes B         bytes of each (default 4096)
  --transport DIR   the built package (default: ecs-transport/ of this repository)
  --timeout SEC     give up after SEC seconds in all (default 120)

Exit status: 0 pass; 1 fail (what differs printed); 2 setup or usage error.
`

const log = (msg) => process.stderr.write(`ecs-transport-limit: ${msg}\n`)
// An LWW component of the harness whose schema keeps the bytes verbatim (lib/ecs.js).
const opaque = (engine) => engine.defineComponentFromSchema('scenecrdt-interop::OpaqueA', RawBytesSchema)

function parseArgs(argv) {
  const o = parseOptions(
    argv,
    USAGE,
    { bin: null, components: 1000, bytes: 4096, transport: path.join(__dirname, '..', '..', 'ecs-transport'), timeout: 120 },
    {
      '--bin': ['bin', String],
      '--components': ['components', Number],
      '--bytes': ['bytes', Number],
      '--transport': ['transport', String],
      '--timeout': ['timeout', Number]
    }
  )
  if (!o.bin) throw new Error('--bin is required')
  if (!Number.isInteger(o.components) || o.components < 1 || o.components > 4000) throw new Error('--components must be an integer in 1..4000')
  if (!Number.isInteger(o.bytes) || o.bytes < 1 || o.bytes > 8192) throw new Error('--bytes must be an integer in 1..8192')
  if (!(o.timeout > 0)) throw new Error('--timeout must be positive')
  return o
}

// A ws WebSocket that records every message it sends.
function recordingSocket(sent) {
  return class extends WebSocket {
    send(data, ...rest) {
      sent.push(Buffer.from(data))
      return super.send(data, ...rest)
    }
  }
}

async function main() {
  let opts
  let pkg
  try {
    opts = parseArgs(process.argv.slice(2))
    const dist = path.join(path.resolve(opts.transport), 'dist', 'index.js')
    if (!fs.existsSync(dist)) throw new Error(`${dist} does not exist: build the package first (tests/interop/run.sh does it)`)
    pkg = require(dist)
  } catch (e) {
    process.stderr.write(`ecs-transport-limit: error: ${e.message}\n`)
    return 2
  }
  const bin = path.resolve(opts.bin)
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'scenecrdt-ecs-limit-'))
  const serve = spawn(bin, ['serve', '--tcp', '127.0.0.1:0', '--http', '127.0.0.1:0', '--data', path.join(work, 'data'), '--no-fsync'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let serveLog = ''
  let serveExit = null
  serve.stderr.setEncoding('utf8')
  serve.stderr.on('data', (d) => (serveLog += d))
  serve.on('exit', (code, signal) => (serveExit = { code, signal }))
  const overall = setTimeout(() => {
    process.stderr.write(`ecs-transport-limit: FAIL: no result within --timeout ${opts.timeout} s\n${serveLog.slice(-4000)}\n`)
    serve.kill('SIGKILL')
    process.exit(1)
  }, opts.timeout * 1000)
  const transports = []
  try {
    await waitFor(() => /listening ws:\/\/127\.0\.0\.1:\d+/.test(serveLog) || serveExit, 60000, 'scenecrdt serve to listen')
    if (serveExit) throw new Failure(`scenecrdt serve exited at start (${JSON.stringify(serveExit)}): ${serveLog}`)
    const httpPort = Number(/listening ws:\/\/127\.0\.0\.1:(\d+)/.exec(serveLog)[1])
    const url = `ws://127.0.0.1:${httpPort}/dcl/limit`

    const sent = []
    const a = ecs.Engine()
    const aOpaque = opaque(a)
    const ta = new pkg.ScenecrdtEcsTransport({ url, WebSocket: recordingSocket(sent) })
    transports.push(ta)
    a.addTransport(ta)
    await waitFor(() => ta.state === 'joined', 20000, 'engine A to join')
    const rng = new Rng('ecs-transport-limit')
    const values = new Map()
    for (let i = 0; i < opts.components; i++) {
      const entity = a.addEntity()
      const bytes = new Uint8Array(opts.bytes)
      for (let k = 0; k < bytes.length; k++) bytes[k] = rng.int(256)
      aOpaque.create(entity, bytes)
      values.set(entity >>> 0, Buffer.from(bytes).toString('hex'))
    }
    const before = sent.length
    await a.update(1) // one chunk of every component
    const chunkBytes = sent.slice(before).reduce((n, b) => n + b.length, 0)
    log(`engine A's update sent ${chunkBytes} bytes in ${sent.length - before} WebSocket messages`)

    // The scene holds exactly what A sent.
    fs.writeFileSync(path.join(work, 'sent.dcl'), Buffer.concat(sent))
    const want = JSON.parse(await runOk(bin, ['replay', path.join(work, 'sent.dcl')])).stateHash
    const deadline = Date.now() + 30000
    let got = null
    for (;;) {
      got = JSON.parse(await runOk(bin, ['pull', '--server', `ws://127.0.0.1:${httpPort}`, '--scene', 'limit'])).stateHash
      if (got === want || ta.stats().disconnects > 0 || Date.now() > deadline) break
      await frame(100)
    }
    const stats = ta.stats()
    const largest = Math.max(...sent.map((b) => b.length))
    if (stats.disconnects > 0) throw new Failure(`engine A's connection was lost (${stats.lastError ?? 'no close reason'}): the server refused a message above its limit`)
    if (largest > 256 << 10) throw new Failure(`a ${largest}-byte WebSocket message went out, above maxFlushChunkBytes (256 KiB)`)
    if (stats.oversizedMessages > 0) throw new Failure(`${stats.oversizedMessages} messages reported oversized`)
    if (got !== want) throw new Failure(`pull's stateHash ${got} != replay of what A sent ${want}`)

    // Engine B joins and gets every value.
    const b = ecs.Engine()
    const bOpaque = opaque(b)
    const tb = new pkg.ScenecrdtEcsTransport({ url, WebSocket })
    transports.push(tb)
    b.addTransport(tb)
    await waitFor(() => tb.state === 'joined', 20000, 'engine B to join')
    await b.update(1)
    let same = 0
    for (const [entity, value] of b.getEntitiesWith(bOpaque)) {
      // The engine hands out a read-only copy: an object with the byte indices as keys.
      if (values.get(entity >>> 0) === Buffer.from(Object.values(value)).toString('hex')) same++
    }
    if (same !== opts.components) throw new Failure(`engine B holds ${same} of the ${opts.components} values`)
    console.log(
      `ecs-transport-limit: OK: one update of ${opts.components} x ${opts.bytes} bytes (${chunkBytes} bytes) went out in ` +
        `${sent.length - before} messages of at most ${largest} bytes, no disconnect; pull = replay; engine B holds all ${same}`
    )
    return 0
  } catch (e) {
    if (!(e instanceof Failure)) throw e
    process.stderr.write(`ecs-transport-limit: FAIL: ${e.message}\n  server log tail:\n${serveLog.split('\n').slice(-15).join('\n')}\n`)
    return 1
  } finally {
    clearTimeout(overall)
    for (const t of transports) t.close()
    serve.kill('SIGTERM')
    await waitFor(() => serveExit, 30000, 'scenecrdt serve to stop').catch(() => serve.kill('SIGKILL'))
    fs.rmSync(work, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`ecs-transport-limit: error: ${e && e.stack ? e.stack : e}\n`)
    process.exit(2)
  }
)
