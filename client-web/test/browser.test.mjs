// SPDX-License-Identifier: Apache-2.0
// The viewer in a real browser: Debian's chromium, headless, driven by puppeteer-core, against
// a real `scenecrdt serve`. A generated 1 000-entity scene with parenting loops (sent with
// `scenecrdt send`) must show in /view/<scene> with the same effective parents, parked flags and
// bit-identical world matrices as `scenecrdt pull --world`; the screenshot must not be blank;
// a writer's moves must reach the page's matrix (median latency within 200 ms); with --auth the
// page joins with ?token= of a read-only token.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import puppeteer from "puppeteer-core";
import { SceneClient } from "../dist/client.js";
import { cli, diffWorld, genWithLoops, newRuntime, startServer, tempDir, WebSocketImpl } from "./helpers.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const WEB_ROOT = process.env.SCENECRDT_WEB_ROOT;
const ARTIFACTS = process.env.SCENECRDT_WEB_ARTIFACTS; // screenshot goes here when set
const N = 1000;

let tmp;
let server;
let browser;

before(async () => {
  assert.ok(WEB_ROOT, "set SCENECRDT_WEB_ROOT (build/web); tests/web/run.sh does");
  tmp = tempDir();
  server = await startServer(tmp.dir, ["--web-root", WEB_ROOT]);
  const file = join(tmp.dir, "big.dcl");
  genWithLoops(file, { shape: "random", entities: N, seed: 11, loops: 20 });
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "big", file]);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
      "--window-size=1200,800"],
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  tmp?.cleanup();
});

async function openViewer(scene, { width = 1200, height = 800 } = {}) {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  await page.goto(`http://127.0.0.1:${server.http}/view/${scene}`, { waitUntil: "load" });
  return { page, errors };
}

// Variance of the screenshot's pixel luminance, decoded by the page itself (no PNG library).
async function pixelVariance(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width;
    c.height = img.height;
    const ctx = c.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let sum = 0;
    let sq = 0;
    const n = d.length / 4;
    for (let i = 0; i < d.length; i += 4) {
      const l = 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
      sum += l;
      sq += l * l;
    }
    const mean = sum / n;
    return sq / n - mean * mean;
  }, Buffer.from(png).toString("base64"));
}

test("the viewer's replica equals pull --world for a 1000-entity scene with loops", async () => {
  const { page, errors } = await openViewer("big");
  await page.waitForFunction((n) => window.scenecrdt?.stats().entities === n, { timeout: 60000 }, N);
  // One more rendered frame after the last batch, so world() reflects an update.
  const frames = await page.evaluate(() => window.scenecrdt.stats().frames);
  await page.waitForFunction((f) => window.scenecrdt.stats().frames > f + 1, { timeout: 30000 }, frames);
  const world = await page.evaluate(() => window.scenecrdt.world().map((w) => ({ ...w,
    matrixBits: Array.from(new Uint32Array(new Float32Array(w.matrix).buffer)) })));
  const expected = JSON.parse(cli(["pull", "--server", `ws://127.0.0.1:${server.http}`, "--scene", "big", "--world"]));
  assert.ok(expected.world.some((w) => w.parked), "the scene has parked entities");
  assert.deepEqual(diffWorld(world, expected.world), []);
  const stats = await page.evaluate(() => window.scenecrdt.stats());
  assert.equal(stats.connected, true);

  // Let the camera fit and a few frames draw, then the screenshot.
  await page.waitForFunction((f) => window.scenecrdt.stats().frames > f + 10, { timeout: 30000 }, stats.frames);
  const png = await page.screenshot({ type: "png" });
  if (ARTIFACTS) writeFileSync(join(ARTIFACTS, "viewer-1000.png"), png);
  const variance = await pixelVariance(page, png);
  assert.ok(variance > 20, `the screenshot is not blank (luminance variance ${variance.toFixed(1)})`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a writer's moves reach the page's world matrix", async () => {
  // A small viewport: software WebGL on a loaded CI machine draws it faster.
  const { page } = await openViewer("big", { width: 480, height: 320 });
  await page.waitForFunction((n) => window.scenecrdt?.stats().entities === n, { timeout: 60000 }, N);
  const rt = await newRuntime();
  const writer = new SceneClient(rt, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene: "big" });
  writer.start();
  await writer.joined();
  writer.frame();
  // A root entity that is not parked (its world matrix is its local Transform).
  const entity = (await page.evaluate(() => window.scenecrdt.world()))
    .find((w) => w.parent === 0 && !w.parked && rt_has(w)).entity;
  function rt_has(w) {
    return rt.getTransform(w.entity) !== null;
  }
  const latencies = [];
  const rendered = [];
  for (let i = 1; i <= 10; i++) {
    const t = rt.getTransform(entity);
    t.position = [t.position[0] + 0.5, t.position[1], t.position[2] + 0.25 * i];
    writer.writeTransform(entity, t);
    const sent = performance.now();
    writer.frame();
    const want = Array.from(rt.worldMatrix(entity));
    await page.waitForFunction(
      (e, m) => {
        const got = window.scenecrdt.matrix(e);
        return got && m.every((v, k) => v === got[k]);
      },
      { timeout: 5000, polling: 5 },
      entity,
      want,
    );
    latencies.push(performance.now() - sent);
    // And a rendered frame shows it (the presentation is interpolated: it arrives there after
    // the interpolation delay, docs/INTERPOLATION.md, blended, so compared within 1e-4).
    const shownAt = performance.now();
    await page.waitForFunction(
      (e, m) => {
        const got = window.scenecrdt.runtime.copyInterpolatedWorld();
        const i = got.entities.indexOf(e);
        return i >= 0 && m.every((v, k) => Math.abs(v - got.matrices[16 * i + k]) <= 1e-4 * (1 + Math.abs(v)));
      },
      { timeout: 10000, polling: "raf" },
      entity,
      want,
    );
    rendered.push(performance.now() - shownAt + latencies.at(-1));
  }
  latencies.sort((a, b) => a - b);
  const median = latencies[latencies.length >> 1];
  console.log(`write -> page replica latency (ms): ${latencies.map((l) => l.toFixed(1)).join(" ")}`);
  console.log(`write -> rendered (interpolated) frame (ms): ${rendered.map((l) => l.toFixed(1)).join(" ")}`);
  assert.ok(median <= 200, `median latency ${median.toFixed(1)} ms is within 200 ms`);
  writer.close();
  rt.destroy();
  await page.close();
});

test("with --auth the page joins with a read token from ?token=; / needs a token", async () => {
  const dir = join(tmp.dir, "auth");
  const authFile = join(tmp.dir, "tokens.json");
  writeFileSync(authFile, JSON.stringify({ tokens: [{ token: "w r+", scenes: ["*"], role: "write" },
    { token: "viewer", scenes: ["lobby"], role: "read" }] }));
  const secured = await startServer(dir, ["--web-root", WEB_ROOT, "--auth", authFile]);
  try {
    const file = join(tmp.dir, "small.dcl");
    cli(["gen", "--shape", "balanced", "--entities", "50", "--seed", "2", "-o", file]);
    cli(["send", "--server", `tcp://127.0.0.1:${secured.tcp}`, "--scene", "lobby", "--token", "w r+", file]);
    const base = `http://127.0.0.1:${secured.http}`;
    assert.equal((await fetch(`${base}/`)).status, 401);
    const list = await (await fetch(`${base}/?token=viewer`)).text();
    assert.match(list, /href="\/view\/lobby\?token=viewer"/);
    const page = await browser.newPage();
    await page.goto(`${base}/view/lobby?token=viewer`);
    await page.waitForFunction(() => window.scenecrdt?.stats().entities === 50, { timeout: 60000 });
    await page.close();
  } finally {
    await secured.stop();
  }
});
