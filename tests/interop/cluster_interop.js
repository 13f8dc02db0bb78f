#!/usr/bin/env node
'use strict'
// Owner: server/ (cluster). Unmodified @dcl/ecs 7.28.0 engines on different nodes of a
// `scenecrdt serve --redis` cluster (docs/CLUSTER.md): a real redis-server on a unix socket in a
// temporary directory, three nodes; engine A joins node 1 and engine B node 2 over
// ws://.../dcl/<scene> with the ecs-transport package, the C++ client (`scenecrdt send`) writes
// on node 3. The engines must converge with each other and with `scenecrdt pull` of their node,
// and every node's stateHash must equal `scenecrdt replay` of everything sent.

const fs = require('fs')
const os = require('os')
const path = require('path')
const { spawn } = require('child_process')
const WebSocket = require('ws')
const { parseOptions } = require('./lib/args')
const { ecs, TRANSFORM_ID, dumpLww, encodeMessages, transformBytes } = require('./lib/ecs')
const { Rng } = require('./lib/prng')
const { frame, Failure, waitFor, runOk, entitiesOf, countMessages, id, f, edit, compare, pullRemovedFn } = require('./lib/live_scene')

const USAGE = `usage: node cluster_interop.js --bin SCENECRDT [--rounds N] [--seed S] [--redis-server PATH]
                                [--transport DIR] [--timeout SEC] [--keep DIR]

Starts redis-server (unix socket, AOF with appendfsync always, in a temporary directory) and
three "SCENECRDT serve --redis" nodes on free loopback ports, all on scene "cluster":
  * engines A (node 1) and B (node 2): unmodified @dcl/ecs 7.28.0 Engines with the
    ecs-transport package's transport on ws://127.0.0.1:PORT/dcl/cluster; every round each one
    creates, moves, reparents, deletes entities and removes Transforms inside an engine system,
    then update() sends. Both allocate entity numbers from 512, so their ids collide (LWW
    resolves it). What their sockets send is recorded.
  * the C++ client: "SCENECRDT send" of two streams to node 3 (entities 6000-6007), the first
    before the engines join, the second half-way.
Then the engines keep updating until each equals "SCENECRDT pull" of its own node and the other
engine (live Transforms), and every node's pull stateHash equals "SCENECRDT replay" of every
chunk the engines sent plus the C++ streams.

  --bin SCENECRDT      the scenecrdt binary (serve, send, pull, replay)
  --rounds N           edit rounds per engine (default 60)
  --seed S             seed of the edits (default 1)
  --redis-server PATH  the redis-server binary (default: redis-server on PATH)
  --transport DIR      the built ecs-transport package (default: ecs-transport/ of this repository)
  --timeout SEC        give up after SEC seconds in all (default 90)
  --keep DIR           keep the streams, the recorded chunks and the logs in DIR

Exit status: 0 converged and every hash equal; 1 mismatch (the differences are printed); 2 setup
or usage error.
`

const SCENE = 'cluster'
const NODES = 3
const BACKOFF = { minBackoffMs: 30, maxBackoffMs: 300 }
const log = (msg) => process.stderr.write(`cluster-interop: ${msg}\n`)

function parseArgs(argv) {
  const o = parseOptions(
    argv,
    USAGE,
    { bin: null, rounds: 60, seed: 1, redisServer: 'redis-server', transport: path.join(__dirname, '..', '..', 'ecs-transport'), timeout: 90, keep: null },
    {
      '--bin': ['bin', String],
      '--rounds': ['rounds', Number],
      '--seed': ['seed', Number],
      '--redis-server': ['redisServer', String],
      '--transport': ['transport', String],
      '--timeout': ['timeout', Number],
      '--keep': ['keep', String]
    }
  )
  if (!o.bin) throw new Error('--bin is required')
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error('--rounds must be a positive integer')
  if (!(o.timeout > 0)) throw new Error('--timeout must be positive')
  return o
}

// The C++ client's streams (written with @dcl/ecs's own writers), parents across writers.
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
    put(id(6000), 1, [1, 0, 0]),
    put(id(6001), 1, [0, 1, 0], id(6000)),
    put(id(6002), 1, [0, 0, 1], id(6001)),
    put(id(6003), 1, [3, 3, 3]),
    put(id(6004), 1, [4, 4, 4]),
    { type: 'delete', entity: id(6003), component: TRANSFORM_ID, timestamp: 2 }
  ]
  const second = [
    put(id(6000), 4, [2, 0, 0]),
    put(id(6001), 3, [0, 1.5, 0], id(512)), // under an engine entity (which may be gone)
    { type: 'delete_entity', entity: id(6004) },
    put(id(6005, 1), 1, [5, 5, 5]),
    put(id(6007), 1, [7, 7, 7], id(6000))
  ]
  return [encodeMessages(first).bytes, encodeMessages(second).bytes]
}

// A child process whose stderr (and stdout) are collected; `ready` matches a line of it.
function startProcess(name, bin, args, ready) {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const p = { name, child, log: '', exit: null }
  for (const s of [child.stdout, child.stderr]) {
    s.setEncoding('utf8')
    s.on('data', (d) => (p.log += d))
  }
  child.on('exit', (code, signal) => (p.exit = { code, signal }))
  child.on('error', (e) => (p.exit = { error: String(e.message || e) }))
  p.ready = async () => {
    await waitFor(() => ready.test(p.log) || p.exit, 60000, `${name} to start`)
    if (p.exit) throw new Failure(`${name} exited at start (${JSON.stringify(p.exit)}): ${p.log.slice(-2000)}`)
  }
  return p
}

// A `ws` WebSocket that records every chunk it sends (copied: the engine reuses its buffer).
function recordingSocket(sent) {
  return class extends WebSocket {
    constructor(url) {
      super(url, { perMessageDeflate: false })
    }
    send(data, ...rest) {
      const copy = Buffer.from(data)
      if (copy.byteLength) sent.push(copy)
      return super.send(copy, ...rest)
    }
  }
}

function liveTransforms(peer, pullRemoved) {
  const out = new Map()
  for (const r of dumpLww(peer.Transform)) {
    if (r.dataHex !== null && !pullRemoved(r.entity >>> 0)) out.set(r.entity >>> 0, `ts=${r.timestamp} ${r.dataHex}`)
  }
  return out
}

async function main() {
  let opts
  let pkg
  try {
    opts = parseArgs(process.argv.slice(2))
    const dist = path.join(path.resolve(opts.transport), 'dist', 'index.js')
    if (!fs.existsSync(dist)) throw new Error(`${dist} does not exist: build the package first (cd ${opts.transport} && npm ci && npm run build; tests/interop/run.sh does it)`)
    pkg = require(dist)
  } catch (e) {
    process.stderr.write(`cluster-interop: error: ${e.message}\n`)
    return 2
  }
  const bin = path.resolve(opts.bin)
  if (!fs.existsSync(bin)) {
    process.stderr.write(`cluster-interop: error: ${bin} does not exist: build it first\n`)
    return 2
  }
  const started = Date.now()
  const work = opts.keep ? path.resolve(opts.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'scenecrdt-cluster-interop-'))
  fs.mkdirSync(work, { recursive: true })
  const socket = path.join(work, 'redis.sock')
  const procs = []
  const peers = []
  let keepWork = Boolean(opts.keep)
  const overall = setTimeout(() => {
    process.stderr.write(`cluster-interop: FAIL: no result within --timeout ${opts.timeout} s\n`)
    for (const p of procs) process.stderr.write(`  ${p.name} log tail:\n${p.log.slice(-2000)}\n`)
    for (const p of procs) p.child.kill('SIGKILL')
    process.exit(1)
  }, opts.timeout * 1000)
  try {
    const redis = startProcess(
      'redis-server',
      opts.redisServer,
      ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--dir', work, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      /ready to accept connections/i
    )
    procs.push(redis)
    await redis.ready()
    const nodes = []
    for (let i = 0; i < NODES; i++) {
      const node = startProcess(
        `node ${i + 1}`,
        bin,
        ['serve', '--tcp', '127.0.0.1:0', '--http', '127.0.0.1:0', '--data', path.join(work, `data-${i + 1}`), '--redis', `unix://${socket}`],
        /listening ws:\/\/127\.0\.0\.1:\d+/
      )
      procs.push(node)
      nodes.push(node)
    }
    for (const node of nodes) {
      await node.ready()
      node.tcpUrl = `tcp://127.0.0.1:${/listening tcp:\/\/127\.0\.0\.1:(\d+)/.exec(node.log)[1]}`
      node.httpPort = Number(/listening ws:\/\/127\.0\.0\.1:(\d+)/.exec(node.log)[1])
    }
    log(`redis-server on ${socket}; nodes on http ${nodes.map((n) => n.httpPort).join(', ')}`)
    const pull = async (node) => JSON.parse(await runOk(bin, ['pull', '--server', node.tcpUrl, '--scene', SCENE]))

    const [cpp1, cpp2] = cppStreams()
    fs.writeFileSync(path.join(work, 'cpp-1.dcl'), cpp1)
    fs.writeFileSync(path.join(work, 'cpp-2.dcl'), cpp2)
    const send = (file) => runOk(bin, ['send', '--server', nodes[2].tcpUrl, '--scene', SCENE, path.join(work, file)])
    await send('cpp-1.dcl')

    for (let i = 0; i < 2; i++) {
      const name = 'AB'[i]
      const engine = ecs.Engine()
      const sent = []
      const jitter = new Rng(`cluster-interop/${opts.seed}/jitter/${i}`)
      const transport = new pkg.ScenecrdtEcsTransport({
        url: `ws://127.0.0.1:${nodes[i].httpPort}/dcl/${SCENE}`,
        WebSocket: recordingSocket(sent),
        random: () => jitter.float(),
        ...BACKOFF,
        onOverflow: (n) => log(`${name}: outbox overflow, ${n} lost`)
      })
      engine.addTransport(transport)
      const peer = { name, node: nodes[i], engine, Transform: engine.getComponent(TRANSFORM_ID), transport, sent, removedLocally: new Set(), editNext: false, edits: new Rng(`cluster-interop/${opts.seed}/edits/${i}`) }
      engine.addSystem(() => {
        if (!peer.editNext) return
        peer.editNext = false
        edit(peer, peer.edits, [6000, 6001, 6002, 6007].map((n) => id(n)))
      })
      peers.push(peer)
    }
    await waitFor(() => peers.every((p) => p.transport.state === 'joined'), 20000, 'both engines to join')
    log(`A joined node 1, B joined node 2; the C++ client writes on node 3`)

    let secondSend = null
    for (let round = 0; round < opts.rounds; round++) {
      for (const p of peers) {
        p.editNext = true
        await p.engine.update(1)
      }
      await frame(5)
      if (round === Math.floor(opts.rounds / 2)) secondSend = send('cpp-2.dcl')
      for (const p of peers) {
        if (p.transport.state !== 'joined') throw new Failure(`${p.name} lost its connection: ${JSON.stringify(p.transport.stats())}`)
      }
    }
    await secondSend
    for (const p of procs) if (p.exit) throw new Failure(`${p.name} exited: ${JSON.stringify(p.exit)}`)

    // Everything sent so far (the engines send nothing more unless a received change makes
    // them, so it is recomputed on every settle round).
    const replayAll = async () => {
      const files = [path.join(work, 'cpp-1.dcl'), path.join(work, 'cpp-2.dcl')]
      for (const p of peers) {
        files.push(path.join(work, `sent-${p.name}.dcl`))
        fs.writeFileSync(files[files.length - 1], Buffer.concat(p.sent))
      }
      return JSON.parse(await runOk(bin, ['replay', ...files]))
    }

    // Settle: no more edits; the render loops keep running until everything agrees.
    const deadline = Date.now() + 30000
    let diffs = []
    let pulls = []
    let replayed = null
    for (let attempt = 1; ; attempt++) {
      for (const p of peers) await p.engine.update(1)
      await frame(20)
      pulls = await Promise.all(nodes.map(pull))
      replayed = await replayAll()
      const knownIds = new Set()
      for (const chunk of [cpp1, cpp2, ...peers[0].sent, ...peers[1].sent]) for (const e of entitiesOf(chunk)) knownIds.add(e >>> 0)
      diffs = []
      pulls.forEach((pulled, i) => {
        if (pulled.stateHash !== replayed.stateHash) diffs.push(`node ${i + 1}: pull stateHash ${pulled.stateHash} != replay ${replayed.stateHash}`)
      })
      for (const [i, p] of peers.entries()) for (const d of compare(p, pulls[i], knownIds)) diffs.push(`${p.name}: ${d}`)
      const pullRemoved = pullRemovedFn(pulls[0])
      const a = liveTransforms(peers[0], pullRemoved)
      const b = liveTransforms(peers[1], pullRemoved)
      for (const e of new Set([...a.keys(), ...b.keys()])) {
        if (a.get(e) !== b.get(e)) diffs.push(`live Transform of ${e}: A ${a.get(e) ?? '(absent)'} | B ${b.get(e) ?? '(absent)'}`)
      }
      if (diffs.length === 0) {
        log(`engines and nodes agree after ${attempt} settle round(s)`)
        break
      }
      if (Date.now() > deadline) {
        throw new Failure(`no agreement within 30 s; ${diffs.length} differences:\n  ${diffs.slice(0, 40).join('\n  ')}`)
      }
    }
    const sentMessages = (p) => p.sent.reduce((n, chunk) => n + countMessages(chunk), 0)
    const received = peers.map((p) => p.transport.stats().receivedChunks)
    console.log(
      `cluster-interop: OK: engines A (node 1) and B (node 2) over /dcl/ and the C++ client (node 3) converged on ` +
        `${pulls[0].transforms.length} live Transforms; A sent ${peers[0].sent.length} chunks / ${sentMessages(peers[0])} messages, ` +
        `B ${peers[1].sent.length} / ${sentMessages(peers[1])}, C++ ${countMessages(cpp1) + countMessages(cpp2)} messages; ` +
        `A received ${received[0]} chunks, B ${received[1]}; all ${NODES} nodes' stateHash ${replayed.stateHash} == replay of all sent; ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`
    )
    for (const p of peers) p.transport.close()
    for (const node of nodes) node.child.kill('SIGTERM')
    await waitFor(() => nodes.every((n) => n.exit), 30000, 'the nodes to stop')
    for (const node of nodes) {
      if (node.exit.code !== 0) throw new Failure(`${node.name} exited ${JSON.stringify(node.exit)} after SIGTERM:\n${node.log.slice(-2000)}`)
    }
    if (opts.keep) for (const p of procs) fs.writeFileSync(path.join(work, `${p.name.replace(' ', '-')}.log`), p.log)
    return 0
  } catch (e) {
    if (!(e instanceof Failure)) throw e
    process.stderr.write(`cluster-interop: FAIL: ${e.message}\n`)
    keepWork = true
    for (const p of peers) process.stderr.write(`  ${p.name}: ${JSON.stringify(p.transport.stats())}\n`)
    for (const p of procs) {
      fs.writeFileSync(path.join(work, `${p.name.replace(' ', '-')}.log`), p.log)
      process.stderr.write(`  ${p.name} log tail:\n${p.log.split('\n').slice(-10).join('\n')}\n`)
    }
    for (const p of peers) fs.writeFileSync(path.join(work, `sent-${p.name}.dcl`), Buffer.concat(p.sent))
    process.stderr.write(`  kept in ${work}\n`)
    return 1
  } finally {
    clearTimeout(overall)
    for (const p of peers) p.transport.close()
    for (const p of procs) if (!p.exit) p.child.kill('SIGKILL')
    if (!keepWork) {
      await waitFor(() => procs.every((p) => p.exit), 10000, 'the processes to end').catch(() => {})
      fs.rmSync(work, { recursive: true, force: true })
    }
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`cluster-interop: error: ${e && e.stack ? e.stack : e}\n`)
    process.exit(2)
  }
)
