#!/usr/bin/env node
'use strict'
// Owner: server/scene/authority/authority.*. `serve --authority owner` (docs/AUTHORITY.md) against
// unmodified @dcl/ecs 7.28.0 engines through ecs-transport/: each engine has its own --auth
// token (its own principal) and creates some entities; then, for many rounds, every engine
// moves ALL entities inside its system (the others' too, which the server refuses and
// corrects). At the end every engine must equal `scenecrdt pull` and every entity must hold its
// owner's last write. With --redis-server: two `serve --redis` nodes on one redis-server, the
// engines alternating between them (docs/AUTHORITY.md "Cluster": claims, corrections and
// counter-corrections across nodes); every node's pull must then agree too.

const fs = require('fs')
const os = require('os')
const path = require('path')
const { spawn } = require('child_process')
const WebSocket = require('ws')
const { parseOptions } = require('./lib/args')
const { ecs, TRANSFORM_ID, dumpLww, transformBytes } = require('./lib/ecs')
const { Rng } = require('./lib/prng')
const { frame, Failure, waitFor, runOk, compare, f } = require('./lib/live_scene')

const USAGE = `usage: node authority_engines.js --bin SCENECRDT [--engines N] [--entities N] [--rounds N]
                                  [--seed S] [--redis-server PATH] [--transport DIR]
                                  [--timeout SEC] [--keep DIR]

Starts "SCENECRDT serve --authority owner --auth FILE" on free loopback ports; N engines
(ecs-transport's transport, ws://127.0.0.1:PORT/dcl/authority?token=tI) each create --entities
entities, then every round each engine moves every live entity inside an engine system. After
the rounds every engine must equal "SCENECRDT pull" (Transforms, remove-set, deleted ids) and
every entity must hold the value its owner wrote last.

  --engines N      engines (default 3)
  --entities N     entities each engine creates (default 4)
  --rounds N       rounds of moves (default 100)
  --seed S         seed of the moves (default 1)
  --redis-server PATH  cluster mode: a redis-server (unix socket in a temporary directory) and
                   two "serve --redis" nodes; engine I joins node I mod 2
  --transport DIR  the built ecs-transport package (default: ecs-transport/ of this repository)
  --timeout SEC    give up after SEC seconds in all (default 120)
  --keep DIR       keep the server data and log in DIR

Exit status: 0 converged; 1 otherwise (differences printed); 2 setup or usage error.
`

const log = (msg) => process.stderr.write(`authority-engines: ${msg}\n`)
const SCENE = 'authority'

function parseArgs(argv) {
  const o = parseOptions(
    argv,
    USAGE,
    { bin: null, engines: 3, entities: 4, rounds: 100, seed: 1, redisServer: null, transport: path.join(__dirname, '..', '..', 'ecs-transport'), timeout: 120, keep: null },
    {
      '--bin': ['bin', String],
      '--engines': ['engines', Number],
      '--entities': ['entities', Number],
      '--rounds': ['rounds', Number],
      '--seed': ['seed', Number],
      '--redis-server': ['redisServer', String],
      '--transport': ['transport', String],
      '--timeout': ['timeout', Number],
      '--keep': ['keep', String]
    }
  )
  if (!o.bin) throw new Error('--bin is required')
  if (!Number.isInteger(o.engines) || o.engines < 2) throw new Error('--engines must be an integer >= 2')
  if (!Number.isInteger(o.entities) || o.entities < 1) throw new Error('--entities must be a positive integer')
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error('--rounds must be a positive integer')
  return o
}

const hexOf = (t) => Buffer.from(transformBytes(t)).toString('hex')

async function main() {
  let opts
  let pkg
  try {
    opts = parseArgs(process.argv.slice(2))
    const dist = path.join(path.resolve(opts.transport), 'dist', 'index.js')
    if (!fs.existsSync(dist)) throw new Error(`${dist} does not exist: build ecs-transport first (tests/interop/run.sh does it)`)
    pkg = require(dist)
  } catch (e) {
    process.stderr.write(`authority-engines: error: ${e.message}\n`)
    return 2
  }
  const bin = path.resolve(opts.bin)
  if (!fs.existsSync(bin)) {
    process.stderr.write(`authority-engines: error: ${bin} does not exist: build it first\n`)
    return 2
  }
  const started = Date.now()
  const work = opts.keep ? path.resolve(opts.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'scenecrdt-authority-'))
  fs.mkdirSync(work, { recursive: true })
  const tokens = []
  for (let i = 0; i < opts.engines; i++) tokens.push({ token: `engine-token-${i}`, scenes: [SCENE], role: 'write', name: `engine-${i}` })
  tokens.push({ token: 'reader-token', scenes: [SCENE], role: 'read', name: 'reader' })
  fs.writeFileSync(path.join(work, 'auth.json'), JSON.stringify({ tokens }))
  // One process per server (cluster: redis-server first), stderr collected.
  const procs = []
  const start = (name, file, args) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const p = { name, child, log: '', exit: null }
    for (const st of [child.stdout, child.stderr]) {
      st.setEncoding('utf8')
      st.on('data', (d) => (p.log += d))
    }
    child.on('exit', (code, signal) => (p.exit = { code, signal }))
    child.on('error', (e) => (p.exit = { error: String(e.message || e) }))
    procs.push(p)
    return p
  }
  const logs = () => procs.map((p) => `${p.name}:\n${p.log.slice(-3000)}`).join('\n')
  const serveArgs = (i) => ['serve', '--tcp', '127.0.0.1:0', '--http', '127.0.0.1:0', '--data', path.join(work, `data-${i}`), '--no-fsync', '--auth', path.join(work, 'auth.json'), '--authority', 'owner']
  const nodes = []
  if (opts.redisServer) {
    const socket = path.join(work, 'redis.sock')
    const redis = start('redis-server', opts.redisServer, ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '700', '--dir', work, '--appendonly', 'no', '--save', ''])
    try {
      await waitFor(() => /ready to accept connections/i.test(redis.log) || redis.exit, 30000, 'redis-server to start')
    } finally {
      if (!/ready to accept connections/i.test(redis.log) && !redis.exit) redis.child.kill('SIGKILL')
    }
    if (redis.exit) throw new Error(`redis-server exited at start: ${redis.log}`)
    for (let i = 0; i < 2; i++) nodes.push(start(`node ${i + 1}`, bin, [...serveArgs(i), '--redis', `unix://${socket}`]))
  } else {
    nodes.push(start('serve', bin, serveArgs(0)))
  }
  const overall = setTimeout(() => {
    process.stderr.write(`authority-engines: FAIL: no result within --timeout ${opts.timeout} s\n${logs()}\n`)
    for (const p of procs) p.child.kill('SIGKILL')
    process.exit(1)
  }, opts.timeout * 1000)
  const peers = []
  try {
    for (const node of nodes) {
      await waitFor(() => /listening ws:\/\/127\.0\.0\.1:\d+/.test(node.log) || node.exit, 60000, `${node.name} to listen`)
      if (node.exit) throw new Failure(`${node.name} exited at start (${JSON.stringify(node.exit)}): ${node.log}`)
      node.httpPort = Number(/listening ws:\/\/127\.0\.0\.1:(\d+)/.exec(node.log)[1])
    }
    log(`${nodes.length} node(s) on http ${nodes.map((n) => n.httpPort).join(', ')}; ${opts.engines} engines x ${opts.entities} entities, ${opts.rounds} rounds`)

    for (let i = 0; i < opts.engines; i++) {
      const engine = ecs.Engine()
      const url = `ws://127.0.0.1:${nodes[i % nodes.length].httpPort}/dcl/${SCENE}?token=${encodeURIComponent(tokens[i].token)}`
      const transport = new pkg.ScenecrdtEcsTransport({ url, WebSocket })
      engine.addTransport(transport)
      const peer = { name: `E${i}`, engine, Transform: engine.getComponent(TRANSFORM_ID), transport, removedLocally: new Set(), action: null, moves: new Rng(`authority/${opts.seed}/${i}`) }
      // Scene-script work runs as an engine system, inside update().
      engine.addSystem(() => {
        const act = peer.action
        peer.action = null
        if (act) act(peer)
      })
      peers.push(peer)
    }
    await waitFor(() => peers.every((p) => p.transport.state === 'joined'), 20000, 'every engine to join')

    // Each engine creates its entities in turn (so that @dcl/ecs allocates distinct numbers:
    // it skips the numbers it has seen), and they reach every engine before the next one.
    const ownerOf = new Map()  // entity -> engine index
    for (let i = 0; i < opts.engines; i++) {
      const p = peers[i]
      const mine = []
      p.action = () => {
        for (let k = 0; k < opts.entities; k++) {
          const e = p.engine.addEntity()
          p.Transform.create(e, { position: { x: f(i), y: f(k), z: 0 } })
          mine.push(e >>> 0)
        }
      }
      await p.engine.update(1)
      for (const e of mine) ownerOf.set(e, i)
      await waitFor(
        () => {
          for (const q of peers) void q.engine.update(1)
          return peers.every((q) => mine.every((e) => q.Transform.getOrNull(e) !== null))
        },
        10000,
        `E${i}'s entities to reach every engine`
      )
    }

    // Rounds: every engine moves every live entity (its own and the others').
    const lastOwnWrite = new Map()  // entity -> Transform bytes (hex) its owner wrote last
    for (let round = 0; round < opts.rounds; round++) {
      for (const p of peers) {
        const index = peers.indexOf(p)
        p.action = () => {
          for (const [e] of p.engine.getEntitiesWith(p.Transform)) {
            const id = e >>> 0
            if (!ownerOf.has(id)) continue
            const t = p.Transform.getMutable(e)
            t.position = { x: f(p.moves.range(-400, 400) / 4), y: f(round), z: f(index) }
            if (ownerOf.get(id) === index) lastOwnWrite.set(id, hexOf(t))
          }
        }
        await p.engine.update(1)
      }
      await frame(5)
    }

    // Settle: no more edits; every engine and pull agree, and each entity holds its owner's
    // last write.
    let diffs = []
    const deadline = Date.now() + 30000
    for (let attempt = 1; ; attempt++) {
      for (const p of peers) await p.engine.update(1)
      await frame(20)
      const pulls = []
      for (const node of nodes) pulls.push(JSON.parse(await runOk(bin, ['pull', '--server', `ws://127.0.0.1:${node.httpPort}`, '--scene', SCENE, '--token', 'reader-token'])))
      const pulled = pulls[0]
      diffs = []
      for (let n = 1; n < pulls.length; n++) {
        if (pulls[n].stateHash !== pulled.stateHash) diffs.push(`node ${n + 1} stateHash ${pulls[n].stateHash} | node 1 ${pulled.stateHash}`)
      }
      for (const p of peers) for (const d of compare(p, pulled, ownerOf.keys())) diffs.push(`${p.name}: ${d}`)
      const pulledHex = new Map(pulled.transforms.map((t) => [t.entity >>> 0, t.dataHex]))
      for (const [e, hex] of lastOwnWrite) {
        if (pulledHex.get(e) !== hex) diffs.push(`entity ${e} (owner E${ownerOf.get(e)}): pull ${pulledHex.get(e)} | owner's last write ${hex}`)
      }
      if (diffs.length === 0) {
        let corrected = 0
        let countered = 0
        for (const node of nodes) {
          const metrics = await (await fetch(`http://127.0.0.1:${node.httpPort}/metrics`)).text()
          const c = /scenecrdt_authority_corrections_total (\d+)/.exec(metrics)
          const k = /scenecrdt_authority_counter_corrections_total (\d+)/.exec(metrics)
          corrected += c ? Number(c[1]) : 0
          countered += k ? Number(k[1]) : 0
        }
        log(`converged after ${attempt} settle round(s); ${ownerOf.size} entities; server corrections ${corrected}, counter-corrections ${countered}`)
        if (corrected === 0) throw new Failure('the server corrected nothing: the schedule never exercised a refusal')
        break
      }
      if (Date.now() > deadline) {
        throw new Failure(`the engines did not converge within 30 s; ${diffs.length} differences:\n  ${diffs.slice(0, 40).join('\n  ')}`)
      }
    }
    for (const p of peers) p.transport.close()
    for (const p of procs) p.child.kill('SIGTERM')
    await waitFor(() => procs.every((p) => p.exit), 30000, 'the servers to stop')
    if (opts.keep) fs.writeFileSync(path.join(work, 'serve.log'), logs())
    else fs.rmSync(work, { recursive: true, force: true })
    console.log(
      `authority-engines: OK: ${opts.engines} engines on ${nodes.length} node(s) x ${opts.rounds} rounds moving all ${ownerOf.size} entities: every engine equals pull ` +
        `and every entity holds its owner's last write; ${((Date.now() - started) / 1000).toFixed(1)} s`
    )
    return 0
  } catch (e) {
    if (!(e instanceof Failure)) throw e
    process.stderr.write(`authority-engines: FAIL: ${e.message}\n`)
    fs.writeFileSync(path.join(work, 'serve.log'), logs())
    process.stderr.write(`  server log tails:\n${procs.map((p) => `${p.name}:\n${p.log.split('\n').slice(-15).join('\n')}`).join('\n')}\n  kept in ${work}\n`)
    return 1
  } finally {
    clearTimeout(overall)
    for (const p of peers) p.transport.close()
    for (const p of procs) if (!p.exit) p.child.kill('SIGKILL')
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`authority-engines: error: ${e && e.stack ? e.stack : e}\n`)
    process.exit(2)
  }
)
