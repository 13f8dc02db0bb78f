// SPDX-License-Identifier: Apache-2.0
// Measures the viewer (docs/WEB.md "Figures"): a generated scene of N entities (default 10 000)
// sent to a real `scenecrdt serve`, opened in headless chromium; reports the page's JavaScript
// frame time (client.frame() + node infos + buffers + WebGL calls; the page's median of its
// last 120 frames) and the
// rendered frames per second, idle and while a writer moves M entities at 20 Hz, and saves a
// screenshot. Usage (after scripts/build_web.sh):
//   SCENECRDT_BIN=build/release/tools/scenecrdt SCENECRDT_WASM_DIR=build/wasm/wasm \
//   SCENECRDT_WEB_ROOT=build/web node client-web/bench/measure_viewer.mjs \
//     [--entities N] [--movers M] [--width W --height H] [--screenshot FILE]
import { join } from "node:path";
import { parseArgs } from "node:util";
import { writeFileSync } from "node:fs";
import puppeteer from "puppeteer-core";
import { SceneClient } from "../dist/client.js";
import { cli, genWithLoops, newRuntime, startServer, tempDir, WebSocketImpl } from "../test/helpers.mjs";

const { values } = parseArgs({ options: { entities: { type: "string", default: "10000" },
  movers: { type: "string", default: "200" }, width: { type: "string", default: "1200" },
  height: { type: "string", default: "800" }, screenshot: { type: "string" }, help: { type: "boolean" } } });
if (values.help) {
  console.log("usage: node client-web/bench/measure_viewer.mjs [--entities N] [--movers M] [--width W --height H] [--screenshot FILE]\n" +
    "environment: SCENECRDT_BIN, SCENECRDT_WASM_DIR, SCENECRDT_WEB_ROOT, CHROMIUM (default /usr/bin/chromium)");
  process.exit(0);
}
const n = Number(values.entities);
const movers = Number(values.movers);
const tmp = tempDir();
const server = await startServer(tmp.dir, ["--web-root", process.env.SCENECRDT_WEB_ROOT]);
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"] });
try {
  const file = join(tmp.dir, "scene.dcl");
  genWithLoops(file, { shape: "random", entities: n, seed: 5, loops: 20 });
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "m", file]);
  const page = await browser.newPage();
  await page.setViewport({ width: Number(values.width), height: Number(values.height) });
  await page.goto(`http://127.0.0.1:${server.http}/view/m`);
  await page.waitForFunction((k) => window.scenecrdt?.stats().entities === k, { timeout: 120000 }, n);
  const sample = async (label) => {
    const a = await page.evaluate(() => ({ f: window.scenecrdt.stats().frames, t: performance.now() }));
    await new Promise((r) => setTimeout(r, 5000));
    const b = await page.evaluate(() => ({ f: window.scenecrdt.stats().frames, t: performance.now(),
      ms: window.scenecrdt.stats().frameMs }));
    console.log(`${label}: frame time ${b.ms.toFixed(2)} ms (JS, median of the last 120 frames), ` +
      `${((1000 * (b.f - a.f)) / (b.t - a.t)).toFixed(1)} frames/s`);
  };
  await sample(`${n} entities, idle`);
  const rt = await newRuntime();
  const writer = new SceneClient(rt, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene: "m" });
  writer.start();
  await writer.joined(60000);
  writer.frame();
  const ids = Array.from(rt.copyWorld().entities).slice(0, movers);
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    for (const e of ids) {
      const t = rt.getTransform(e);
      if (!t) continue;
      t.position = [t.position[0], Math.sin(tick / 10 + e) * 0.5, t.position[2]];
      writer.writeTransform(e, t);
    }
  }, 50);
  await sample(`${n} entities, ${movers} moving at 20 Hz`);
  clearInterval(timer);
  if (values.screenshot) writeFileSync(values.screenshot, await page.screenshot({ type: "png" }));
  writer.close();
} finally {
  await browser.close();
  await server.stop();
  tmp.cleanup();
}
