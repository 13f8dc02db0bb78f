// SPDX-License-Identifier: Apache-2.0
// The viewer's picture (issue 21, "a true picture"; docs/WEB.md section 3) in headless
// chromium against a real `scenecrdt serve --demo`: an entity at +X, +Z appears where a
// left-handed engine shows it (the Z mirror of docs/CONVENTIONS.md; a screenshot-pixel check
// against a left-handed projection written in the test); the camera frames the scene's bounds
// and follows them, stops when the user zooms, and "F" frames all again; clicks select, every
// entity of a small scene has a label; the demo shows distinct colours and orbit trails;
// /view/<unknown> answers "no such scene" with the list and creates nothing.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { SceneClient } from "../dist/client.js";
import { decodePng, launchBrowser, openPage, projectLeftHanded, sendScene, WEB_ROOT } from "./browser_helpers.mjs";
import { newRuntime, startServer, tempDir, WebSocketImpl } from "./helpers.mjs";

const ARTIFACTS = process.env.SCENECRDT_WEB_ARTIFACTS;
let tmp;
let server;
let browser;
let base;

before(async () => {
  assert.ok(WEB_ROOT, "set SCENECRDT_WEB_ROOT (build/web); tests/web/run.sh does");
  tmp = tempDir();
  server = await startServer(tmp.dir, ["--web-root", WEB_ROOT, "--demo", "--demo-hz", "20"]);
  base = `http://127.0.0.1:${server.http}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  tmp?.cleanup();
});

const frames = (page) => page.evaluate(() => window.scenecrdt.stats().frames);
async function nextFrames(page, k = 3) {
  const f = await frames(page);
  await page.waitForFunction((n) => window.scenecrdt.stats().frames >= n, { timeout: 30000 }, f + k);
}
const canvasBox = (page) => page.evaluate(() => {
  const r = document.getElementById("view").getBoundingClientRect();
  return { x: r.left, y: r.top, width: r.width, height: r.height };
});

test("an entity at +X, +Z appears where a left-handed engine shows it (Z mirrored)", async () => {
  // A small box (0.4 m), so the centroid of its drawn pixels is near its origin's projection.
  sendScene(server, tmp.dir, "axes", [{ entity: 600, position: [5, 0, 5], scale: [0.4, 0.4, 0.4] }]);
  const { page, errors } = await openPage(browser, `${base}/view/axes`, { width: 900, height: 600 });
  await page.waitForFunction(() => window.scenecrdt?.stats().entities === 1, { timeout: 60000 });
  // Behind the origin on -Z, above it, looking at it: a left-handed engine shows +X on the
  // right and +Z farther away (higher on the screen).
  const eye = [0, 12, -12];
  await page.evaluate((e) => {
    window.scenecrdt.labels(false);
    window.scenecrdt.camera.lookFrom(e, [0, 0, 0]);
  }, eye);
  await nextFrames(page);
  const box = await canvasBox(page);
  const png = await page.screenshot({ type: "png", clip: box });
  if (ARTIFACTS) writeFileSync(join(ARTIFACTS, "viewer-mirror.png"), png);
  const { width, height, data } = await decodePng(page, png);
  // The box is the only saturated thing drawn (grid and background are grey).
  let n = 0, sx = 0, sy = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = 4 * (y * width + x);
      const hi = Math.max(data[o], data[o + 1], data[o + 2]), lo = Math.min(data[o], data[o + 1], data[o + 2]);
      if (hi - lo > 60) {
        n++;
        sx += x;
        sy += y;
      }
    }
  }
  assert.ok(n > 30, `the entity's box is drawn (${n} coloured pixels)`);
  const fovY = await page.evaluate(() => window.scenecrdt.camera.fovY);
  const [ex, ey] = projectLeftHanded([5, 0, 5], eye, [0, 0, 0], fovY, width, height);
  const got = [sx / n, sy / n];
  console.log(`+X+Z entity: drawn at (${got.map((v) => v.toFixed(1))}), a left-handed engine: (${ex.toFixed(1)}, ${ey.toFixed(1)})`);
  assert.ok(got[0] > width / 2 && got[1] < height / 2, "upper right of the centre, as in a left-handed engine");
  assert.ok(Math.hypot(got[0] - ex, got[1] - ey) < 8, `within 8 px of (${ex.toFixed(1)}, ${ey.toFixed(1)})`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the camera frames the scene's bounds, follows them, and F frames all after a zoom", async () => {
  const spread = [{ entity: 600, position: [0, 0, 0] }, { entity: 601, position: [30, 0, 0] },
    { entity: 602, position: [0, 5, -30] }];
  sendScene(server, tmp.dir, "spread", spread);
  const { page, errors } = await openPage(browser, `${base}/view/spread`, { width: 900, height: 600 });
  await page.waitForFunction(() => window.scenecrdt?.stats().entities === 3, { timeout: 60000 });
  const box = await canvasBox(page);
  const positions = new Map(spread.map((s) => [s.entity, s.position]));
  // Every entity's origin inside the canvas, seen from the camera the page reports.
  const allInside = async () => {
    const { eye, target } = await page.evaluate(() => window.scenecrdt.camera.state());
    const fovY = await page.evaluate(() => window.scenecrdt.camera.fovY);
    return [...positions.values()].every((p) => {
      const s = projectLeftHanded(p, eye, target, fovY, box.width, box.height);
      return s && s[0] >= 0 && s[0] <= box.width && s[1] >= 0 && s[1] <= box.height;
    });
  };
  const settle = async () => {
    await nextFrames(page, 40); // the camera eases towards the bounds
  };
  await settle();
  assert.equal(await allInside(), true, "framed on load");

  const rt = await newRuntime();
  const writer = new SceneClient(rt, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene: "spread" });
  writer.start();
  await writer.joined();
  writer.frame();
  const move = async (entity, position) => {
    writer.writeTransform(entity, { ...rt.getTransform(entity), position });
    positions.set(entity, position);
    await page.waitForFunction((e, x) => window.scenecrdt.matrix(e)?.[12] === x, { timeout: 10000 }, entity, position[0]);
  };
  await move(601, [120, 10, 40]);
  await settle();
  assert.equal(await allInside(), true, "followed the moved entity");

  // A wheel zoom is the user's: auto-framing stops, a far move is not followed.
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel({ deltaY: -600 });
  assert.equal(await page.evaluate(() => window.scenecrdt.stats().autoFrame), false);
  await move(602, [-400, 0, 0]);
  await settle();
  assert.equal(await allInside(), false, "not followed while the user holds the camera");
  await page.keyboard.press("f");
  await nextFrames(page, 3);
  assert.equal(await page.evaluate(() => window.scenecrdt.stats().autoFrame), true);
  assert.equal(await allInside(), true, "F framed everything again");
  writer.close();
  rt.destroy();
  assert.deepEqual(errors, []);
  await page.close();
});

test("a click selects an entity; every entity of a small scene has a label", async () => {
  const { page, errors } = await openPage(browser, `${base}/view/spread`, { width: 900, height: 600 });
  await page.waitForFunction(() => window.scenecrdt?.stats().entities === 3, { timeout: 60000 });
  await page.evaluate(() => window.scenecrdt.camera.lookFrom([20, 40, -60], [20, 0, 0]));
  await nextFrames(page);
  const labels = await page.$$eval("#labels .label", (els) => els.filter((e) => e.style.display !== "none").map((e) => e.textContent));
  assert.deepEqual(labels.sort(), ["600", "601", "602"]);
  // Click where entity 600 is drawn (its world position from the page's replica).
  const box = await canvasBox(page);
  const { eye, target } = await page.evaluate(() => window.scenecrdt.camera.state());
  const fovY = await page.evaluate(() => window.scenecrdt.camera.fovY);
  const m = await page.evaluate(() => window.scenecrdt.matrix(600));
  const [x, y] = projectLeftHanded([m[12], m[13], m[14]], eye, target, fovY, box.width, box.height);
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForFunction(() => window.scenecrdt.stats().selected === 600, { timeout: 5000 });
  await nextFrames(page);
  assert.equal(await page.$eval("#labels .label.sel", (e) => e.textContent), "600");
  await page.waitForFunction(() => document.getElementById("details").textContent.startsWith("entity 600"), { timeout: 5000 });
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => window.scenecrdt.stats().selected === 0, { timeout: 5000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the demo shows distinct colours and orbit trails", async () => {
  const { page, errors } = await openPage(browser, `${base}/view/demo`, { width: 900, height: 600 });
  await page.waitForFunction(() => window.scenecrdt?.stats().entities === 9, { timeout: 60000 });
  await page.waitForFunction(() => window.scenecrdt.stats().trails >= 8, { timeout: 20000 });
  const png = await page.screenshot({ type: "png", clip: await canvasBox(page) });
  if (ARTIFACTS) writeFileSync(join(ARTIFACTS, "viewer-demo.png"), png);
  const { data } = await decodePng(page, png);
  // Hues of the saturated pixels, in 12 buckets: the bodies and their trails.
  const buckets = new Set();
  for (let o = 0; o < data.length; o += 4) {
    const [r, g, b] = [data[o], data[o + 1], data[o + 2]];
    const hi = Math.max(r, g, b), lo = Math.min(r, g, b);
    if (hi - lo < 70) continue;
    let h = hi === r ? (g - b) / (hi - lo) : hi === g ? 2 + (b - r) / (hi - lo) : 4 + (r - g) / (hi - lo);
    h = ((h / 6) % 1 + 1) % 1;
    buckets.add(Math.floor(h * 12));
  }
  assert.ok(buckets.size >= 5, `distinct colours (${buckets.size} hue buckets of 12)`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("/view/<unknown> says no such scene with the list, and creates nothing", async () => {
  const res = await fetch(`${base}/view/axes-typo`);
  const body = await res.text();
  assert.equal(res.status, 404, body);
  assert.match(body, /no such scene: <b>axes-typo<\/b>/);
  assert.match(body, /href="\/view\/axes"/);
  assert.equal((await fetch(`${base}/view/axes`)).status, 200);
  const list = await (await fetch(`${base}/api/scenes`)).json();
  assert.equal(list.scenes.some((s) => s.name === "axes-typo"), false);
});
