// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the client-web node tests (docs/WEB.md): the scenecrdt binary and wasm
// build from the environment, the wasm runtime, generated streams with parenting loops, a real
// `scenecrdt serve` on free ports, waiting on a condition, a writer that moves entities at
// 20 Hz, and the bitwise comparison with `replay/pull --world`.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket as WsWebSocket } from "ws";
import { loadModule, SceneClient, WasmRuntime } from "../dist/client.js";

// The WebSocket for SceneClient under node: node's own where it has one (node 22, or 20 with
// --experimental-websocket), else the `ws` package (Debian 12's node 18 has none).
export const WebSocketImpl = globalThis.WebSocket ?? WsWebSocket;

export const BIN = process.env.SCENECRDT_BIN;
export const WASM_DIR = process.env.SCENECRDT_WASM_DIR;
if (!BIN || !WASM_DIR) {
  throw new Error("set SCENECRDT_BIN (the scenecrdt binary) and SCENECRDT_WASM_DIR (build/wasm/wasm); " +
    "tests/web/run.sh does both");
}

export async function newRuntime() {
  const require = createRequire(import.meta.url);
  const factory = require(join(WASM_DIR, "scenecrdt.js"));
  const mod = await loadModule(factory, readFileSync(join(WASM_DIR, "scenecrdt.wasm")));
  return new WasmRuntime(mod);
}

export function cli(args, input) {
  return execFileSync(BIN, args, { input, maxBuffer: 1 << 28, encoding: input ? undefined : "utf8" });
}

export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), "scenecrdt-web-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// A seeded PRNG (mulberry32): the same loops for the same seed.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// `scenecrdt gen` output plus `loops` reparents (timestamp 2) that each close a parenting
// loop: an entity is given one of its own descendants as parent. Written to `out`.
export function genWithLoops(out, { shape, entities, seed, loops }) {
  const base = join(out + ".base");
  cli(["gen", "--shape", shape, "--entities", String(entities), "--seed", String(seed), "-o", base]);
  const lines = cli(["decode", base]).trim().split("\n").map((l) => JSON.parse(l));
  const parent = new Map(lines.map((m) => [m.entity, m.transform.parent]));
  const children = new Map();
  for (const [e, p] of parent) {
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(e);
  }
  const random = rng(seed);
  const ids = [...parent.keys()];
  const extra = [];
  for (let made = 0, tries = 0; made < loops && tries < loops * 50; tries++) {
    const e = ids[Math.floor(random() * ids.length)];
    const desc = [];
    const stack = [...(children.get(e) ?? [])];
    while (stack.length && desc.length < 64) {
      const d = stack.pop();
      desc.push(d);
      stack.push(...(children.get(d) ?? []));
    }
    if (desc.length === 0) continue;
    const target = desc[Math.floor(random() * desc.length)];
    const m = lines.find((l) => l.entity === e);
    extra.push({ ...m, timestamp: 2, dataHex: undefined, transform: { ...m.transform, parent: target } });
    made++;
  }
  const jsonl = [...lines, ...extra].map((m) => {
    const { dataHex, ...rest } = m;
    void dataHex;
    return JSON.stringify(rest);
  }).join("\n") + "\n";
  cli(["encode", "-", "-o", out], Buffer.from(jsonl));
  rmSync(base);
  return extra.length;
}

// Float32 bits of a JSON number printed in float32 text form.
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
export function bits(x) {
  f32[0] = x;
  return u32[0];
}

// Compares a world list [{entity, parent, parked, matrix}] with the "world" array of
// `replay --world` / `pull --world`: same entities, effective parents, parked flags, and
// matrices bit for bit (`matrixBits`, the float32 bit patterns, when present: values that
// crossed the DevTools protocol may have lost the sign of a zero). Returns a list of
// differences (empty: equal).
export function diffWorld(got, expected) {
  const diffs = [];
  if (got.length !== expected.length) diffs.push(`entity count ${got.length} != ${expected.length}`);
  const byEntity = new Map(got.map((w) => [w.entity, w]));
  for (const want of expected) {
    const have = byEntity.get(want.entity);
    if (!have) {
      diffs.push(`entity ${want.entity} missing`);
      continue;
    }
    if (have.parent !== want.parent) diffs.push(`entity ${want.entity}: parent ${have.parent} != ${want.parent}`);
    if (have.parked !== want.parked) diffs.push(`entity ${want.entity}: parked ${have.parked} != ${want.parked}`);
    for (let k = 0; k < 16; k++) {
      const haveBits = have.matrixBits ? have.matrixBits[k] : bits(have.matrix[k]);
      if (haveBits !== bits(want.localToWorld[k])) {
        diffs.push(`entity ${want.entity}: matrix[${k}] ${have.matrix[k]} != ${want.localToWorld[k]}`);
        break;
      }
    }
    if (diffs.length > 20) break;
  }
  return diffs;
}

// The runtime's exact world as the list diffWorld takes.
export function runtimeWorld(rt) {
  const { entities, matrices } = rt.copyWorld();
  return Array.from(entities, (e, i) => {
    const info = rt.nodeInfo(e);
    return { entity: e, parent: info.effectiveParent, parked: info.parked, matrix: Array.from(matrices.subarray(16 * i, 16 * i + 16)) };
  });
}

// Starts `scenecrdt serve` on free ports with its data in `dir`; resolves to
// { http, tcp, stop() } once it listens (httpPort: a fixed HTTP port, for restarts).
export function startServer(dir, extraArgs = [], { httpPort = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ["serve", "--tcp", "127.0.0.1:0", "--http", `127.0.0.1:${httpPort}`, "--data", join(dir, "data"),
      "--no-fsync", ...extraArgs], { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    let tcp = 0;
    let http = 0;
    const timer = setTimeout(() => reject(new Error(`serve did not start in 30 s:\n${log}`)), 30000);
    child.stderr.on("data", (d) => {
      log += d;
      tcp ||= Number(/listening tcp:\/\/[^:]+:(\d+)/.exec(log)?.[1] ?? 0);
      http ||= Number(/listening ws:\/\/[^:]+:(\d+)/.exec(log)?.[1] ?? 0);
      if (tcp && http) {
        clearTimeout(timer);
        resolve({
          tcp, http, log: () => log,
          stop: () => new Promise((done) => {
            if (child.exitCode !== null) return done(child.exitCode);
            child.once("exit", done);
            child.kill("SIGTERM");
          }),
        });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${log}`));
    });
  });
}

// Polls `cond` (sync or async) every 10 ms until it holds; throws naming `what` after the timeout.
export async function waitFor(what, cond, timeoutMs = 20000) {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// A writer on ws:// that bobs the first `movers` entities of `scene` at 20 Hz until stop().
export async function startBobbingWriter(server, scene, movers) {
  const runtime = await newRuntime();
  const client = new SceneClient(runtime, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene });
  client.start();
  await client.joined(60000);
  client.frame();
  const ids = Array.from(runtime.copyWorld().entities).slice(0, movers);
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    for (const e of ids) {
      const t = runtime.getTransform(e);
      if (t) client.writeTransform(e, { ...t, position: [t.position[0], Math.sin(tick / 10 + e) * 0.5, t.position[2]] });
    }
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      client.close();
      runtime.destroy();
    },
  };
}
