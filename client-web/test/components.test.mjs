// SPDX-License-Identifier: Apache-2.0
// Component reads of the wasm runtime and SceneClient (docs/COMPONENTS.md): the golden stream
// of a real @dcl/ecs 7.28 Engine (tests/data/components) gives the bytes its schemas
// serialized and the lists of its own diff, through copies and reused views; and live, an
// unmodified @dcl/ecs Engine (tests/interop's) writing MeshRenderer, Material, a custom
// component and PointerEventsResult through a real `scenecrdt serve` reaches a SceneClient:
// getComponent equals what the engine serializes, frame().components and onComponent events
// say what each frame added, changed and removed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { WebSocket as WsWebSocket } from "ws";
import { SceneClient } from "../dist/client.js";
import { newRuntime, startServer, tempDir, waitFor, WebSocketImpl } from "./helpers.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const golden = JSON.parse(readFileSync(join(root, "tests/data/components/ecs_components.json"), "utf8"));
const goldenStream = readFileSync(join(root, "tests/data/components/ecs_components.dcl"));
const hex = (bytes) => Buffer.from(bytes).toString("hex");
const pairs = ({ entities, components }) => Array.from(entities, (e, i) => [e, components[i]]);
const viewPairs = (list) => Array.from({ length: list.count }, (_, i) => [list.entities[i], list.components[i]]);

test("golden @dcl/ecs stream: bytes and lists as the engine says, copies and views", async () => {
  const rt = await newRuntime();
  const out = new Uint8Array(256);
  for (const [f, frame] of golden.frames.entries()) {
    rt.apply(new Uint8Array(goldenStream.subarray(frame.offset, frame.offset + frame.length)));
    rt.update();
    for (const [key, want] of Object.entries(frame.values)) {
      const [e, id] = key.split(":").map(Number);
      assert.equal(hex(rt.getComponent(e, id)), want, `frame ${f} ${key}`);
      const n = rt.getComponentInto(e, id, out);
      assert.equal(hex(out.subarray(0, n)), want, `frame ${f} ${key} (into)`);
    }
    for (const [key, want] of Object.entries(frame.growOnly)) {
      const [e, id] = key.split(":").map(Number);
      const values = rt.getAppendValues(e, id);
      assert.deepEqual(values.map((v) => hex(v.bytes)).sort(), want, `frame ${f} ${key}`);
      assert.ok(values.every((v) => v.timestamp === 0), "@dcl/ecs appends with timestamp 0");
      assert.throws(() => rt.getComponent(e, id), (err) => err.status === -13 && /getAppendValues/.test(err.message));
    }
    assert.deepEqual(pairs(rt.changedComponents()), frame.changed, `frame ${f} changed`);
    assert.deepEqual(pairs(rt.addedComponents()), frame.added, `frame ${f} added`);
    assert.deepEqual(pairs(rt.removedComponents()), frame.removed, `frame ${f} removed`);
    const views = rt.componentChangesView();
    assert.deepEqual(viewPairs(views.changed), frame.changed);
    assert.deepEqual(viewPairs(views.added), frame.added);
    assert.deepEqual(viewPairs(views.removed), frame.removed);
  }
  // Absent: null and -1; a too small buffer gets the size and nothing written.
  assert.equal(rt.getComponent(9999, 1018), null);
  assert.equal(rt.getComponentInto(9999, 1018, out), -1);
  assert.equal(rt.getAppendValues(9999, 1063), null);
  const tiny = new Uint8Array(1).fill(0xee);
  const size = rt.getComponentInto(512, golden.components["core::Material"], tiny);
  assert.ok(size > 1);
  assert.equal(tiny[0], 0xee);
  // The Transform reads as its 44 wire bytes.
  assert.equal(rt.getComponent(512, 1).length, 44);
  rt.destroy();
});

test("views grow with the lists and stay views after wasm memory grows", async () => {
  const rt = await newRuntime();
  const parts = [];
  for (let e = 512; e < 812; e++) {
    const m = Buffer.alloc(24 + 3);
    m.writeUInt32LE(27, 0);
    m.writeUInt32LE(1, 4); // PUT_COMPONENT
    m.writeUInt32LE(e, 8);
    m.writeUInt32LE(2000, 12);
    m.writeUInt32LE(1, 16);
    m.writeUInt32LE(3, 20);
    m.set([e & 255, 1, 2], 24);
    parts.push(m);
  }
  rt.apply(new Uint8Array(Buffer.concat(parts)));
  rt.update();
  const views = rt.componentChangesView();
  assert.equal(views.added.count, 300);
  assert.equal(views.changed.entities[299], 811);
  assert.equal(views.changed.components[0], 2000);
  // Values of 1 MiB (the message limit) until the wasm memory grows: the lists' old views are
  // detached then, and the next fill makes fresh ones.
  const heapBefore = rt.mod.HEAPU8.buffer;
  const size = (1 << 20) - 24;
  for (let e = 900; e < 940 && rt.mod.HEAPU8.buffer === heapBefore; e++) {
    const big = Buffer.alloc(24 + size, e & 255);
    for (const [at, v] of [[0, big.length], [4, 1], [8, e], [12, 2001], [16, 1], [20, size]]) big.writeUInt32LE(v, at);
    rt.apply(new Uint8Array(big));
  }
  assert.notEqual(rt.mod.HEAPU8.buffer, heapBefore, "the wasm memory grew");
  rt.update();
  assert.equal(rt.getComponent(900, 2001).length, size);
  const again = rt.componentChangesView();
  assert.ok(again.changed.count >= 1);
  assert.deepEqual(viewPairs(again.changed)[0], [900, 2001]);
  assert.equal(again, views, "the same object, its lists made again");
  rt.destroy();
});

// ---- live: an @dcl/ecs Engine through a real server ----

// tests/interop's @dcl/ecs 7.28.0 (tests/web/run.sh installs it with npm ci).
const interop = createRequire(join(root, "tests/interop/package.json"));
const ecs = interop("@dcl/ecs/dist-cjs");
const { ReadWriteByteBuffer } = interop("@dcl/ecs/dist-cjs/serialization/ByteBuffer");

let tmp;
let server;
before(async () => {
  tmp = tempDir();
  server = await startServer(tmp.dir);
});
after(async () => {
  await server?.stop();
  tmp?.cleanup();
});

// An unmodified Engine with a WebSocket transport on /dcl/<scene>; resolves once its snapshot arrived.
async function engineOn(scene) {
  const engine = ecs.Engine();
  const sock = new WsWebSocket(`ws://127.0.0.1:${server.http}/dcl/${scene}`, { perMessageDeflate: false });
  let joined = false;
  const transport = {
    type: "components-test",
    filter: () => true,
    send: async (message) => {
      if (sock.readyState === WsWebSocket.OPEN) sock.send(Buffer.from(message));
    },
  };
  engine.addTransport(transport);
  sock.on("message", (data) => {
    joined = true;
    transport.onmessage(new Uint8Array(data));
  });
  await waitFor("the engine's snapshot", () => joined);
  await engine.update(1);
  return { engine, close: () => sock.close() };
}

function serialized(component, value) {
  const b = new ReadWriteByteBuffer();
  component.schema.serialize(value, b);
  return hex(b.toCopiedBinary());
}

test("an @dcl/ecs engine's components reach SceneClient through serve: bytes, lists, events", async () => {
  const scene = "components";
  const { engine, close } = await engineOn(scene);
  const C = ecs.components;
  const MeshRenderer = C.MeshRenderer(engine);
  const Material = C.Material(engine);
  const Transform = C.Transform(engine);
  const PointerEventsResult = C.PointerEventsResult(engine);
  const Spin = engine.defineComponent("scenecrdt-test::Spin", { speed: ecs.Schemas.Float, label: ecs.Schemas.String });

  const rt = await newRuntime();
  const client = new SceneClient(rt, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene });
  const events = [];
  const unsubscribe = client.onComponent(MeshRenderer.componentId, (e, kind, runtime) => {
    events.push([e, "mesh", kind, kind === "removed" ? null : hex(runtime.getComponent(e, MeshRenderer.componentId))]);
  });
  client.onComponent(Spin.componentId, (e, kind) => events.push([e, "spin", kind]));
  client.start();
  await client.joined(20000);
  client.frame();

  // Frame 1: a box with a material, a custom component and pointer results.
  const box = engine.addEntity();
  Transform.create(box, { position: { x: 1, y: 2, z: 3 } });
  MeshRenderer.setBox(box);
  Material.setPbrMaterial(box, { albedoColor: { r: 0.5, g: 1, b: 0, a: 1 } });
  Spin.create(box, { speed: 3, label: "box" });
  PointerEventsResult.addValue(box, { button: 1, hit: undefined, state: 1, timestamp: 5, analog: undefined, tickNumber: 5 });
  await engine.update(1);
  const seen = () => {
    const f = client.frame();
    return f.components.added.count > 0 ? f : null;
  };
  let frame = null;
  await waitFor("the box's components", () => (frame = seen()));
  const mesh = hex(rt.getComponent(box, MeshRenderer.componentId));
  assert.equal(mesh, serialized(MeshRenderer, MeshRenderer.get(box)));
  assert.equal(hex(rt.getComponent(box, Material.componentId)), serialized(Material, Material.get(box)));
  assert.equal(hex(rt.getComponent(box, Spin.componentId)), serialized(Spin, Spin.get(box)));
  const results = rt.getAppendValues(box, PointerEventsResult.componentId);
  assert.deepEqual(results.map((v) => hex(v.bytes)), [...PointerEventsResult.get(box)].map((v) => serialized(PointerEventsResult, v)));
  const expectedAdded = [Material, MeshRenderer, Spin, PointerEventsResult].map((c) => [box, c.componentId])
    .sort((a, b) => a[1] - b[1]);
  assert.deepEqual(viewPairs(frame.components.added), expectedAdded);
  assert.deepEqual(events, [[box, "mesh", "added", mesh], [box, "spin", "added"]]);

  // Frame 2: the mesh changes, the material goes; a second entity appears.
  events.length = 0;
  MeshRenderer.setSphere(box);
  Material.deleteFrom(box);
  const other = engine.addEntity();
  MeshRenderer.setCylinder(other, 0.5, 1);
  await engine.update(1);
  await waitFor("every event", () => { client.frame(); return events.length >= 2; });
  assert.equal(hex(rt.getComponent(box, MeshRenderer.componentId)), serialized(MeshRenderer, MeshRenderer.get(box)));
  assert.equal(rt.getComponent(box, Material.componentId), null);
  assert.deepEqual(events.sort(), [
    [box, "mesh", "changed", serialized(MeshRenderer, MeshRenderer.get(box))],
    [other, "mesh", "added", serialized(MeshRenderer, MeshRenderer.get(other))],
  ].sort());

  // Frame 3: the box is removed; the listener is told, the unsubscribed one is not.
  events.length = 0;
  unsubscribe();
  engine.removeEntity(box);
  await engine.update(1);
  await waitFor("the removal", () => { client.frame(); return events.length > 0; });
  assert.deepEqual(events, [[box, "spin", "removed"]]);
  assert.equal(rt.getComponent(box, MeshRenderer.componentId), null);
  assert.equal(rt.getAppendValues(box, PointerEventsResult.componentId), null);
  client.close();
  close();
  rt.destroy();
});
