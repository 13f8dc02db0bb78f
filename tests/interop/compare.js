#!/usr/bin/env node
'use strict'
// Runs `<scenecrdt> replay FILE` on every stream of a corpus written by gen_streams.js and
// compares the result with the @dcl/ecs state stored beside it (lib/view.js says what is
// compared and what is deliberately not). Prints one summary line; on mismatch prints, for the
// first few streams, the file, its messages (`<scenecrdt> decode FILE`), the differences and
// both compared states, and exits 1.

const fs = require('fs')
const path = require('path')
const { parseOptions } = require('./lib/args')
const os = require('os')
const { execFile } = require('child_process')

const USAGE = `usage: node compare.js --bin SCENECRDT --dir CORPUS [--jobs N] [--shuffle K] [--show N]

  --bin SCENECRDT  the scenecrdt binary (needs the replay and decode subcommands)
  --dir CORPUS     a directory written by gen_streams.js
  --jobs N         parallel replay processes (default: number of CPUs)
  --shuffle K      also run "replay FILE --shuffle SEED" for K seeds per stream and require the
                   same compared state (our store must converge under any order; default 0)
  --show N         print full details for the first N mismatching streams (default 3)
`

function parseArgs(argv) {
  const o = parseOptions(argv, USAGE, { bin: null, dir: null, jobs: os.cpus().length || 2, shuffle: 0, show: 3 },
    { '--bin': ['bin', String], '--dir': ['dir', String], '--jobs': ['jobs', Number], '--shuffle': ['shuffle', Number], '--show': ['show', Number] })
  if (!o.bin || !o.dir) throw new Error('--bin and --dir are required')
  if (!Number.isInteger(o.jobs) || o.jobs < 1) throw new Error('--jobs must be a positive integer')
  return o
}

function run(bin, args) {
  return new Promise((resolve) => {
    execFile(bin, args, { maxBuffer: 256 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0
      resolve({ code, stdout, stderr, spawnError: err && typeof err.code !== 'number' ? String(err.message) : null })
    })
  })
}

async function replay(bin, file, extra = []) {
  const r = await run(bin, ['replay', file, ...extra])
  if (r.spawnError) return { error: `could not run ${bin}: ${r.spawnError}` }
  if (r.code !== 0) return { error: `replay exited ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}` }
  try {
    return { state: JSON.parse(r.stdout) }
  } catch (e) {
    return { error: `replay printed invalid JSON (${e.message}): ${r.stdout.slice(0, 200)}` }
  }
}

async function pool(items, jobs, fn, onDone) {
  let next = 0
  async function worker() {
    while (next < items.length) {
      const i = next++
      await fn(items[i], i)
      onDone()
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker))
}

function compactState(s) {
  const pick = (arr, f) => (arr || []).map(f)
  return {
    transforms: pick(s.transforms, (t) => `${t.entity} (n=${t.entity & 0xffff} v=${t.entity >>> 16}) ts=${t.timestamp} ${t.dataHex}`),
    deletedTransforms: pick(s.deletedTransforms, (t) => `${t.entity} ts=${t.timestamp}`),
    components: pick(s.components, (c) => `${c.component}/${c.entity} ts=${c.timestamp} ${c.dataHex}`),
    deletedComponents: pick(s.deletedComponents, (c) => `${c.component}/${c.entity} ts=${c.timestamp}`),
    appendValues: pick(s.appendValues, (a) => `${a.component}/${a.entity} [${a.values.join(',')}]`),
    entities: pick(s.entities, (e) => `${e.entity} (n=${e.entity & 0xffff} v=${e.entity >>> 16}) ${e.state}`)
  }
}

async function main() {
  let o
  try {
    o = parseArgs(process.argv.slice(2))
  } catch (e) {
    process.stderr.write(`compare: ${e.message}\n${USAGE}`)
    process.exit(2)
  }
  const { diffStates, purgeViolations } = require('./lib/view')
  const files = fs
    .readdirSync(o.dir)
    .filter((f) => /^stream-\d+\.bin$/.test(f))
    .sort()
  if (!files.length) {
    process.stderr.write(`compare: no stream-*.bin in ${o.dir}; run gen_streams.js first\n`)
    process.exit(2)
  }
  const failures = []
  let done = 0
  let messages = 0
  const t0 = Date.now()
  await pool(
    files,
    o.jobs,
    async (f) => {
      const file = path.join(o.dir, f)
      const ecs = JSON.parse(fs.readFileSync(file.replace(/\.bin$/, '.ecs.json'), 'utf8'))
      messages += ecs.stream ? ecs.stream.messages : 0
      const r = await replay(o.bin, file)
      if (r.error) {
        failures.push({ file, ecs, problems: [r.error] })
        return
      }
      const problems = [...diffStates(ecs, r.state), ...purgeViolations(r.state)]
      for (let k = 0; k < o.shuffle && !problems.length; k++) {
        const seed = String(1 + k)
        const s = await replay(o.bin, file, ['--shuffle', seed])
        if (s.error) problems.push(`replay --shuffle ${seed}: ${s.error}`)
        else for (const d of diffStates(r.state, s.state, 'file-order', `shuffle-${seed}`)) problems.push(`replay --shuffle ${seed}: ${d}`)
      }
      if (problems.length) failures.push({ file, ecs, ours: r.state, problems })
    },
    () => {
      done++
      if (done % 100 === 0 || done === files.length) {
        process.stderr.write(`compare: ${done}/${files.length} streams replayed (${((Date.now() - t0) / 1000).toFixed(1)}s)\n`)
      }
    }
  )
  failures.sort((a, b) => (a.file < b.file ? -1 : 1))
  for (const f of failures.slice(0, o.show)) {
    const out = []
    out.push('='.repeat(100))
    out.push(`MISMATCH ${f.file}`)
    if (f.ecs.stream) out.push(`  generated with seed ${f.ecs.stream.seed}, profile ${f.ecs.stream.profile}, ${f.ecs.stream.messages} messages`)
    out.push('-- differences (@dcl/ecs | ours):')
    for (const p of f.problems.slice(0, 40)) out.push(`  ${p}`)
    if (f.problems.length > 40) out.push(`  ... ${f.problems.length - 40} more`)
    const dec = await run(o.bin, ['decode', f.file])
    const lines = (dec.stdout || '').trimEnd().split('\n')
    out.push(`-- messages (${o.bin} decode ${f.file}${dec.code ? `, exit ${dec.code}` : ''}):`)
    for (const [i, l] of lines.slice(0, 300).entries()) out.push(`  #${i} ${l}`)
    if (lines.length > 300) out.push(`  ... ${lines.length - 300} more`)
    if (dec.code && dec.stderr) out.push(`  ${dec.stderr.trim()}`)
    out.push('-- @dcl/ecs state:')
    out.push(JSON.stringify(compactState(f.ecs), null, 1))
    out.push('-- our state (replay):')
    out.push(f.ours ? JSON.stringify(compactState(f.ours), null, 1) : '  (none)')
    process.stdout.write(out.join('\n') + '\n')
  }
  if (failures.length > o.show) {
    process.stdout.write(`... and ${failures.length - o.show} more mismatching streams:\n`)
    for (const f of failures.slice(o.show)) process.stdout.write(`  ${f.file}: ${f.problems[0]}\n`)
  }
  const extra = o.shuffle ? `, +${o.shuffle} shuffled replays each` : ''
  process.stdout.write(`interop: ${files.length} streams, ${failures.length} mismatches (${messages} messages${extra})\n`)
  process.exit(failures.length ? 1 : 0)
}

main().catch((e) => {
  process.stderr.write(`compare: ${e.stack || e}\n`)
  process.exit(2)
})
