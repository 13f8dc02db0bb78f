// SPDX-License-Identifier: Apache-2.0
// @scenecrdt/client-web as a published package (issue 21 section 3; docs/WEB.md section 2):
// `npm pack` makes a public tarball of the project's version with the ES modules, the wasm
// binary, the .d.ts types and the changelog; installed into an application (the tarball
// unpacked into its node_modules), it loads its wasm by itself unbundled under node and once
// bundled with esbuild (the wasm copied next to the bundle), and gives `scenecrdt replay`'s
// stateHash; its types check in a strict TypeScript application (both entries).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { cli, genWithLoops, tempDir } from "./helpers.mjs";

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const projectVersion = /project\(scenecrdt VERSION ([0-9.]+) /.exec(readFileSync(join(pkgDir, "../CMakeLists.txt"), "utf8"))[1];

const APP = `
import { loadScenecrdt, WasmRuntime } from "@scenecrdt/client-web";
import { bindThree } from "@scenecrdt/client-web/three";
import { readFileSync } from "node:fs";
if (typeof bindThree !== "function") throw new Error("no bindThree");
const rt = new WasmRuntime(await loadScenecrdt());
rt.apply(new Uint8Array(readFileSync(process.argv[2])));
rt.update();
const w = rt.worldView();
console.log(JSON.stringify({ stateHash: rt.stateHash(), count: w.count }));
`;

const TYPES = `
import { loadScenecrdt, SceneClient, WasmRuntime, type Frame, type MatrixList } from "@scenecrdt/client-web";
import { bindThree, type ThreeBinding } from "@scenecrdt/client-web/three";
const rt: WasmRuntime = new WasmRuntime(await loadScenecrdt({ wasmUrl: "/assets/scenecrdt.wasm" }));
const client = new SceneClient(rt, { server: "ws://127.0.0.1:7601", scene: "demo" });
const frame: Frame = client.frame();
const changed: MatrixList = frame.changed;
const first: number = changed.count > 0 ? changed.matrices[12] : 0;
client.deleteEntity(600);
declare const THREE: { Object3D: new () => { matrix: { elements: number[] }; matrixAutoUpdate: boolean;
  matrixWorldNeedsUpdate: boolean; userData: Record<string, unknown>; add(...o: never[]): unknown; remove(...o: never[]): unknown } };
declare const root: InstanceType<typeof THREE.Object3D>;
const binding: ThreeBinding = bindThree(client, THREE, root, { createObject: () => new THREE.Object3D() });
binding.update();
export { first };
`;

test("npm pack: a public package of the project's version with ESM, wasm, types, changelog", async () => {
  assert.notEqual(pkg.private, true, "not private");
  assert.equal(pkg.name, "@scenecrdt/client-web");
  assert.equal(pkg.version, projectVersion, "the project's single version (tests/package/version_check.sh)");
  assert.equal(pkg.type, "module");
  assert.equal(pkg.dependencies, undefined, "no run-time dependencies");
  assert.ok(pkg.peerDependencies.three && pkg.peerDependenciesMeta.three.optional, "three: an optional peer");
  const { dir, cleanup } = tempDir();
  try {
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", dir],
      { cwd: pkgDir, encoding: "utf8" }));
    const files = packed.files.map((f) => f.path).sort();
    for (const f of ["package.json", "CHANGELOG.md", "dist/client.js", "dist/three.js", "dist/scenecrdt.wasm",
      "dist/types/index.d.ts", "dist/types/three.d.ts", "dist/types/client.d.ts", "dist/types/wasm.d.ts"]) {
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    assert.deepEqual(files.filter((f) => /^(src|test|bench|gen)\/|viewer/.test(f)), [], "no sources, tests or viewer");
    const three = readFileSync(join(pkgDir, "dist/three.js"), "utf8");
    assert.doesNotMatch(three, /from\s*["']three["']/, "three is not imported (a peer, passed in)");

    // An application with the tarball installed.
    const app = join(dir, "app");
    const installed = join(app, "node_modules/@scenecrdt/client-web");
    mkdirSync(installed, { recursive: true });
    execFileSync("tar", ["-xzf", join(dir, packed.filename), "-C", installed, "--strip-components=1"]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", type: "module", private: true }));
    writeFileSync(join(app, "app.mjs"), APP);
    const scene = join(dir, "scene.dcl");
    genWithLoops(scene, { shape: "random", entities: 400, seed: 9, loops: 5 });
    const expected = JSON.parse(cli(["replay", scene])).stateHash;

    // Unbundled: node resolves the package's exports, the wasm is found next to dist/client.js.
    const unbundled = JSON.parse(execFileSync("node", ["app.mjs", scene], { cwd: app, encoding: "utf8" }));
    assert.equal(unbundled.stateHash, expected);
    assert.equal(unbundled.count, 400);

    // Bundled with esbuild: one file, the wasm copied next to it (docs/WEB.md).
    const out = join(app, "out");
    await build({ entryPoints: [join(app, "app.mjs")], bundle: true, format: "esm", platform: "node",
      outfile: join(out, "app.js"), logLevel: "error", absWorkingDir: app });
    copyFileSync(join(installed, "dist/scenecrdt.wasm"), join(out, "scenecrdt.wasm"));
    const bundled = JSON.parse(execFileSync("node", [join(out, "app.js"), scene], { encoding: "utf8" }));
    assert.equal(bundled.stateHash, expected);

    // Types: a strict TypeScript application compiles against the .d.ts of both entries.
    writeFileSync(join(app, "check.ts"), TYPES);
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true,
      target: "es2022", module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"], types: [] },
    files: ["check.ts"] }));
    execFileSync("node", [join(pkgDir, "node_modules/typescript/bin/tsc"), "-p", app], { encoding: "utf8" });
  } finally {
    cleanup();
  }
});
