// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the headless-chromium tests (docs/WEB.md section 4): the browser launch
// (Debian's chromium, WebGL over SwiftShader), pages that fail the test on a page error, the
// pixels of a screenshot (decoded by the page itself, no PNG library), and a scene written
// from Transforms with `scenecrdt encode` + `send`.
import { join } from "node:path";
import puppeteer from "puppeteer-core";
import { cli } from "./helpers.mjs";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const WEB_ROOT = process.env.SCENECRDT_WEB_ROOT;

export function launchBrowser(extraArgs = []) {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
      "--window-size=1200,800", ...extraArgs],
  });
}

// A page at `url`; `errors` collects page errors and console errors.
export async function openPage(browser, url, { width = 1200, height = 800 } = {}) {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  const response = await page.goto(url, { waitUntil: "load" });
  return { page, errors, response };
}

// The RGBA pixels of a PNG screenshot, decoded in the page: { width, height, data: number[] }.
export async function decodePng(page, png) {
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width;
    c.height = img.height;
    const ctx = c.getContext("2d");
    ctx.drawImage(img, 0, 0);
    return { width: c.width, height: c.height, data: Array.from(ctx.getImageData(0, 0, c.width, c.height).data) };
  }, Buffer.from(png).toString("base64"));
}

// Writes `transforms` ({entity, position, rotation?, scale?, parent?}) as scene `scene`.
export function sendScene(server, dir, scene, transforms) {
  const lines = transforms.map((t) => JSON.stringify({ type: "put", entity: t.entity, number: t.entity & 0xffff,
    version: t.entity >>> 16, component: 1, timestamp: t.timestamp ?? 1, transform: { position: t.position,
      rotation: t.rotation ?? [0, 0, 0, 1], scale: t.scale ?? [1, 1, 1], parent: t.parent ?? 0 } }));
  const file = join(dir, `${scene}.dcl`);
  cli(["encode", "-", "-o", file], Buffer.from(lines.join("\n") + "\n"));
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", scene, file]);
}

// Where a left-handed engine (Unity; DirectX's XMMatrixLookAtLH + XMMatrixPerspectiveFovLH)
// shows scene point p on a W x H canvas, looking from `eye` at `target` with up +Y and the
// vertical field of view `fovY`: canvas pixel [x, y] (y down), or null behind the camera.
// Written here from the left-handed formulas, apart from the viewer's code.
export function projectLeftHanded(p, eye, target, fovY, W, H) {
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => a.map((v) => v / Math.hypot(...a));
  const z = norm(sub(target, eye)); // forward
  const x = norm(cross([0, 1, 0], z)); // right, in a left-handed space
  const y = cross(z, x); // up
  const d = sub(p, eye);
  const vz = dot(z, d);
  if (vz <= 0) return null;
  const t = Math.tan(fovY / 2);
  const ndcX = dot(x, d) / (vz * t * (W / H));
  const ndcY = dot(y, d) / (vz * t);
  return [(ndcX * 0.5 + 0.5) * W, (0.5 - ndcY * 0.5) * H];
}

// Bytes a sampling heap profile puts under a function named `name` of a script whose URL ends
// with `script` (its own allocations and those of everything it calls).
export function bytesUnder(node, name, script, inside = false) {
  const here = inside || (node.callFrame.functionName === name && node.callFrame.url.endsWith(script));
  let sum = here ? node.selfSize : 0;
  for (const child of node.children) sum += bytesUnder(child, name, script, here);
  return sum;
}

// SCENECRDT_ALLOC_STACKS=1 in the allocation checks: prints each sampled allocation under
// `name` with its stack (the last six frames).
export function printStacks(node, name, path = [], inside = false) {
  const here = inside || node.callFrame.functionName === name;
  const p = [...path, `${node.callFrame.functionName}:${node.callFrame.lineNumber + 1}`];
  if (here && node.selfSize) console.log(`  ${node.selfSize} B at ${p.slice(-6).join(" < ")}`);
  for (const c of node.children) printStacks(c, name, p, here);
}
