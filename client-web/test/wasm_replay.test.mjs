// SPDX-License-Identifier: Apache-2.0
// The wasm runtime against the native one: generated scenes with parenting loops, applied in
// wasm, give the same stateHash, effective parents, parked flags and bit-identical world
// matrices as `scenecrdt replay --world` of the same bytes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cli, diffWorld, genWithLoops, newRuntime, runtimeWorld, tempDir } from "./helpers.mjs";

const cases = [
  { shape: "random", entities: 2000, seed: 1, loops: 25 },
  { shape: "balanced", entities: 1500, seed: 7, loops: 10 },
  { shape: "humanoids", entities: 670, seed: 3, loops: 5 },
  { shape: "deep", entities: 300, seed: 5, loops: 3 },
];

for (const c of cases) {
  test(`wasm = replay --world: ${c.shape} ${c.entities} seed ${c.seed} with loops`, async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, "scene.dcl");
      const loops = genWithLoops(file, c);
      assert.ok(loops > 0, "the stream has parenting loops");
      const expected = JSON.parse(cli(["replay", file, "--world"]));
      assert.ok(expected.world.some((w) => w.parked), "some entities are parked");
      const rt = await newRuntime();
      rt.apply(new Uint8Array(readFileSync(file)));
      rt.update();
      assert.equal(rt.stateHash(), expected.stateHash);
      assert.deepEqual(diffWorld(runtimeWorld(rt), expected.world), []);
      rt.destroy();
    } finally {
      cleanup();
    }
  });
}

test("a malformed stream is refused whole and changes nothing", async () => {
  const rt = await newRuntime();
  const before = rt.stateHash();
  assert.throws(() => rt.apply(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9])), /sc_runtime_apply/);
  assert.equal(rt.stateHash(), before);
  rt.destroy();
});

// Issue 23 item 13: servers drop non-finite Transforms, so the writer must not merge one.
test("a non-finite Transform write is refused (status -1) and merges nothing", async () => {
  const rt = await newRuntime();
  const good = { position: [1, 2, 3], rotation: [0, 0, 0, 1], scale: [1, 1, 1], parent: 0 };
  assert.equal(rt.writeTransform(600, good).length, 68);
  const before = rt.stateHash();
  for (const bad of [NaN, Infinity, -Infinity, 1e39]) {
    for (const field of ["position", "rotation", "scale"]) {
      const t = structuredClone(good);
      t[field][1] = bad;
      for (const entity of [600, 601]) {
        assert.throws(
          () => rt.writeTransform(entity, t),
          (e) => e.name === "ScenecrdtError" && e.status === -1 && /^sc_runtime_write_transform: non_finite_transform/.test(e.message),
          `${field}[1] = ${bad}, entity ${entity}`,
        );
      }
    }
  }
  assert.equal(rt.stateHash(), before);
  assert.equal(rt.getTransform(601), null);
  assert.deepEqual(rt.getTransform(600).position, [1, 2, 3]);
  rt.destroy();
});
