// SPDX-License-Identifier: Apache-2.0
// Builds @scenecrdt/client-web with esbuild (docs/WEB.md): dist/client.js (the library, ESM)
// and, with OUT_DIR and WASM_DIR set, the viewer's assets in OUT_DIR: view.html, viewer.js and
// the wasm module (scenecrdt.js + scenecrdt.wasm, copied from WASM_DIR = build/wasm/wasm).
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

await build({
  entryPoints: ["src/index.ts"], bundle: true, format: "esm", platform: "neutral",
  target: "es2022", outfile: "dist/client.js", logLevel: "warning",
});
const out = process.env.OUT_DIR;
if (out) {
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: ["src/viewer/main.ts"], bundle: true, format: "iife", platform: "browser",
    target: "es2022", minify: true, sourcemap: true, outfile: join(out, "viewer.js"), logLevel: "warning",
  });
  copyFileSync("static/view.html", join(out, "view.html"));
  const wasm = process.env.WASM_DIR;
  if (!wasm) throw new Error("OUT_DIR needs WASM_DIR (the wasm build's output, build/wasm/wasm)");
  for (const f of ["scenecrdt.js", "scenecrdt.wasm"]) copyFileSync(join(wasm, f), join(out, f));
}
