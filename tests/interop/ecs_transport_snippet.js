#!/usr/bin/env node
'use strict'
// Owner: docs/ECS-TRANSPORT.md. The node snippet of docs/ECS-TRANSPORT.md (the fenced block
// after "<!-- snippet: node") runs as written against a live `scenecrdt serve` (its URL's
// port replaced by the server's): it must exit 0 and its cube must reach the server
// (`scenecrdt pull`: an entity with the Transform position 1 2 3 in scene lobby). Issue 21:
// the snippet threw under node (ERR_UNSUPPORTED_DIR_IMPORT) and wrote through the default
// engine's Transform. Needs tests/interop/node_modules (npm ci) and ecs-transport/dist (built).
// Usage: node ecs_transport_snippet.js --bin SCENECRDT

const fs = require('fs')
const os = require('os')
const path = require('path')
const { spawn, execFileSync } = require('child_process')

const args = process.argv.slice(2)
const bin = args[args.indexOf('--bin') + 1]
if (args.indexOf('--bin') < 0 || !bin) {
  console.error('usage: node ecs_transport_snippet.js --bin SCENECRDT')
  process.exit(2)
}
const root = path.resolve(__dirname, '../..')
const doc = fs.readFileSync(path.join(root, 'docs/ECS-TRANSPORT.md'), 'utf8')
const m = /<!-- snippet: node[^>]*-->\n```js\n([\s\S]*?)```/.exec(doc)
if (!m) {
  console.error('ecs_transport_snippet: no "<!-- snippet: node" block in docs/ECS-TRANSPORT.md')
  process.exit(1)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ecs-snippet-'))
const server = spawn(bin, ['serve', '--tcp', '127.0.0.1:0', '--http', '127.0.0.1:0', '--data', path.join(dir, 'data'),
  '--no-fsync'], { stdio: ['ignore', 'ignore', 'pipe'] })
let log = ''
// Stops the server (its exit is then expected) and leaves with `code`.
let stopping = false
const done = (code) => {
  stopping = true
  server.kill('SIGTERM')
  fs.rmSync(dir, { recursive: true, force: true })
  process.exit(code)
}
function fail(why, more) {
  console.error(`ecs_transport_snippet: FAIL: ${why}${more ? `\n${more}` : ''}`)
  done(1)
}
const timer = setTimeout(() => fail('serve did not start in 30 s', log), 30000)
let started = false
server.stderr.on('data', (d) => {
  log += d
  const http = /listening ws:\/\/[^:]+:(\d+)/.exec(log)
  if (!http || started) return
  started = true
  clearTimeout(timer)
  // The snippet as written, its port replaced; @scenecrdt/ecs-transport resolves to the
  // repository's ecs-transport/ (a link in a folder on NODE_PATH), @dcl/ecs and ws to
  // tests/interop/node_modules.
  const code = m[1].replace('ws://127.0.0.1:7601/', `ws://127.0.0.1:${http[1]}/`)
  const file = path.join(__dirname, '.snippet-ecs-transport.js')
  fs.writeFileSync(file, code)
  fs.mkdirSync(path.join(dir, 'modules/@scenecrdt'), { recursive: true })
  fs.symlinkSync(path.join(root, 'ecs-transport'), path.join(dir, 'modules/@scenecrdt/ecs-transport'))
  const run = spawn(process.execPath, [file], { env: { ...process.env, NODE_PATH: path.join(dir, 'modules') },
    stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  run.stdout.on('data', (d) => { out += d })
  run.stderr.on('data', (d) => { out += d })
  run.on('exit', (status) => {
    fs.rmSync(file, { force: true })
    if (status !== 0) fail(`the snippet exited with ${status}`, out)
    const pulled = JSON.parse(execFileSync(bin, ['pull', '--server', `ws://127.0.0.1:${http[1]}`, '--scene', 'lobby'],
      { encoding: 'utf8' }))
    const cube = (pulled.transforms || []).find((t) => t.position.join(' ') === '1 2 3')
    if (!cube) fail(`the snippet's cube is not on the server: ${JSON.stringify(pulled.transforms)}`)
    console.log(`ecs_transport_snippet: the node snippet of docs/ECS-TRANSPORT.md ran; its cube (entity ${cube.entity}) is on the server`)
    done(0)
  })
})
server.on('exit', (code) => {
  if (!stopping) fail(`serve exited with ${code}`, log)
})
