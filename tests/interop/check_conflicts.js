#!/usr/bin/env node
'use strict'
// Sanity check of the Engine driver against the reference vectors: tests/data/conflicts.ops.json
// applied through @dcl/ecs (one message per engine.update(), "in order") must give exactly the
// transforms, deletedTransforms and entities of tests/data/conflicts.expected.json.
// With --bin, the same stream (written by @dcl/ecs's writers) is also replayed by scenecrdt and
// its transforms and entities must match the expected file too (deletedTransforms of Removed
// entities are order-dependent in @dcl/ecs and are not compared for ours).

const fs = require('fs')
const os = require('os')
const path = require('path')
const { execFileSync } = require('child_process')

const USAGE = `usage: node check_conflicts.js [--data DIR] [--bin SCENECRDT]

  --data DIR       folder with conflicts.ops.json and conflicts.expected.json (default tests/data)
  --bin SCENECRDT  also check "scenecrdt replay" on the encoded ops
`

async function main() {
  const argv = process.argv.slice(2)
  let dataDir = path.resolve(__dirname, '..', 'data')
  let bin = null
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--help' || argv[i] === '-h') {
      process.stdout.write(USAGE)
      return 0
    } else if (argv[i] === '--data' && i + 1 < argv.length) dataDir = argv[++i]
    else if (argv[i] === '--bin' && i + 1 < argv.length) bin = argv[++i]
    else {
      process.stderr.write(`check_conflicts: bad argument ${argv[i]}\n${USAGE}`)
      return 2
    }
  }
  const L = require('./lib/ecs')
  const { opsToMessages } = require('./lib/ops')
  const opsDoc = JSON.parse(fs.readFileSync(path.join(dataDir, 'conflicts.ops.json'), 'utf8'))
  const expected = JSON.parse(fs.readFileSync(path.join(dataDir, 'conflicts.expected.json'), 'utf8'))
  const messages = opsToMessages(opsDoc)
  const { bytes, offsets } = L.encodeMessages(messages)
  const perMessage = L.splitAt(bytes, offsets, offsets.map((_, i) => i))
  const got = L.dumpEngine(await L.runEngine(perMessage), L.carriedEntities(messages))

  const key = {
    transforms: (t) => `${t.entity} ts=${t.timestamp} ${t.dataHex}`,
    deletedTransforms: (t) => `${t.entity} ts=${t.timestamp}`,
    entities: (e) => `${e.entity} ${e.state}`
  }
  const problems = []
  function compare(who, state, fields, skipRemovedDeletes) {
    const removed = new Set(state.entities.filter((e) => e.state === 'Removed').map((e) => e.entity))
    for (const field of fields) {
      let a = (expected[field] || []).map(key[field])
      let b = (state[field] || []).map(key[field])
      if (field === 'deletedTransforms' && skipRemovedDeletes) {
        a = expected[field].filter((t) => !removed.has(t.entity)).map(key[field])
        b = state[field].filter((t) => !removed.has(t.entity)).map(key[field])
      }
      a.sort()
      b.sort()
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        problems.push(`${who} ${field}:\n    expected ${JSON.stringify(a)}\n    got      ${JSON.stringify(b)}`)
      }
    }
  }
  compare('@dcl/ecs', got, ['transforms', 'deletedTransforms', 'entities'], false)
  if (got.ecsVersion !== expected.ecsVersion) problems.push(`@dcl/ecs version ${got.ecsVersion}, expected file is from ${expected.ecsVersion}`)

  if (bin) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scenecrdt-conflicts-'))
    const file = path.join(tmp, 'conflicts.dcl')
    fs.writeFileSync(file, bytes)
    let out
    try {
      out = execFileSync(bin, ['replay', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (e) {
      problems.push(`${bin} replay ${file} failed (exit ${e.status}): ${String(e.stderr || e.message).trim()}`)
    }
    if (out !== undefined) compare('scenecrdt', JSON.parse(out), ['transforms', 'deletedTransforms', 'entities'], true)
    if (!problems.length) fs.rmSync(tmp, { recursive: true, force: true })
  }

  if (problems.length) {
    process.stdout.write(`conflicts: MISMATCH against ${path.join(dataDir, 'conflicts.expected.json')}\n  ${problems.join('\n  ')}\n`)
    return 1
  }
  process.stdout.write(
    `conflicts: @dcl/ecs ${got.ecsVersion} reproduces conflicts.expected.json (${messages.length} ops, ` +
      `${got.transforms.length} transforms, ${got.entities.length} entities)${bin ? `; ${path.basename(bin)} replay agrees` : ''}\n`
  )
  return 0
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`check_conflicts: ${e.stack || e}\n`)
    process.exit(2)
  }
)
