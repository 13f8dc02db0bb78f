// SPDX-License-Identifier: Apache-2.0
// Owns loadScenecrdt(): the package's own way to start the wasm module (docs/WEB.md section 2).
// The emscripten glue is bundled into this package's ES module (build.mjs wraps it), and the
// wasm binary is found next to the module that holds this code, with
// `new URL("./scenecrdt.wasm", import.meta.url)`: beside dist/client.js when used unbundled,
// beside the bundle when an application bundles it with esbuild (copy the file there, or pass
// `wasmUrl`). Browsers fetch it; node reads it from disk.
import scenecrdtGlue from "scenecrdt-glue";
import { loadModule, type ModuleFactory, type ScenecrdtModule } from "./wasm.js";

export interface LoadOptions {
  /** Where scenecrdt.wasm is (default: next to this module, import.meta.url). */
  wasmUrl?: string | URL;
  /** The wasm bytes themselves (then nothing is fetched). */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** The default place of the wasm binary: next to the module that holds this code. */
export function defaultWasmUrl(): URL {
  return new URL("./scenecrdt.wasm", import.meta.url);
}

const isNode = () =>
  typeof process === "object" && typeof process.versions === "object" && typeof process.versions.node === "string";

// Specifiers in variables: bundlers for the browser leave them alone (never reached there).
const NODE_FS = "node:fs/promises";
const NODE_MODULE = "node:module";

async function readWasm(url: URL): Promise<ArrayBuffer | Uint8Array> {
  if (url.protocol === "file:") {
    const fs = (await import(NODE_FS)) as { readFile(u: URL): Promise<Uint8Array> };
    return fs.readFile(url);
  }
  const res = await fetch(url);
  if (!res.ok) {
    throw new Error(`scenecrdt.wasm: GET ${url.href} answered ${res.status}: serve the file next to the ` +
      "module that imports @scenecrdt/client-web, or pass loadScenecrdt({ wasmUrl }) (docs/WEB.md)");
  }
  return res.arrayBuffer();
}

/**
 * Starts the wasm module: `await loadScenecrdt()` in a browser page or under node, then
 * `new WasmRuntime(mod)`. Throws when the binary cannot be read or its C ABI differs.
 */
export async function loadScenecrdt(options: LoadOptions = {}): Promise<ScenecrdtModule> {
  const url = options.wasmUrl === undefined ? defaultWasmUrl() : new URL(String(options.wasmUrl), baseUrl());
  const binary = options.wasmBinary ?? (await readWasm(url));
  // Under node the glue's node branch runs: it needs require and __dirname, which an ES
  // module does not have; the browser branch needs neither.
  let nodeRequire: unknown;
  if (isNode()) {
    const { createRequire } = (await import(NODE_MODULE)) as { createRequire(u: string): unknown };
    nodeRequire = createRequire(import.meta.url);
  }
  const factory = scenecrdtGlue(nodeRequire, "/", undefined) as ModuleFactory;
  return loadModule(factory, binary);
}

// Relative wasmUrl values resolve against the page (browser) or this module (node).
function baseUrl(): string {
  const loc = (globalThis as { location?: { href: string } }).location;
  return loc?.href ?? import.meta.url;
}
