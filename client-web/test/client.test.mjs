// SPDX-License-Identifier: Apache-2.0
// SceneClient under node against a real `scenecrdt serve`: joins over /dcl/<scene>, its wasm
// replica reaches the server's stateHash and `pull --world` bit for bit; its Transform writes
// (Lamport-stamped by the runtime) reach a second client and the server; writes made while
// the server is down are sent after the reconnect (backoff) and win; a non-finite write
// throws and is neither merged, sent nor held.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { SceneClient } from "../dist/client.js";
import { cli, diffWorld, genWithLoops, newRuntime, runtimeWorld, startServer, tempDir, waitFor, WebSocketImpl } from "./helpers.mjs";

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

function pull(scene, port = server.http) {
  return JSON.parse(cli(["pull", "--server", `ws://127.0.0.1:${port}`, "--scene", scene, "--world"]));
}

async function join_(scene, options = {}) {
  const rt = await newRuntime();
  const client = new SceneClient(rt, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene, ...options });
  client.start();
  await client.joined(20000);
  return { rt, client };
}

test("a joined replica equals pull --world (stateHash, parents, parked, matrices)", async () => {
  const file = join(tmp.dir, "loops.dcl");
  genWithLoops(file, { shape: "random", entities: 800, seed: 4, loops: 12 });
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "s1", file]);
  const { rt, client } = await join_("s1");
  const frame = client.frame();
  assert.equal(frame.added.count, 800);
  const expected = pull("s1");
  assert.equal(rt.stateHash(), expected.stateHash);
  assert.deepEqual(diffWorld(runtimeWorld(rt), expected.world), []);
  client.close();
  rt.destroy();
});

test("writes reach another client and the server with the Lamport rule", async () => {
  const file = join(tmp.dir, "small.dcl");
  cli(["gen", "--shape", "wide", "--entities", "20", "--seed", "1", "-o", file]);
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "s2", file]);
  const a = await join_("s2");
  const b = await join_("s2");
  a.client.frame();
  const t = a.rt.getTransform(515);
  t.position = [3, 4, 5];
  assert.equal(a.client.writeTransform(515, t), true);
  await waitFor("b to see the write", () => b.rt.getTransform(515)?.position[0] === 3);
  // b answers by reparenting 515 under 516: stamped above a's write, so it wins everywhere.
  const t2 = b.rt.getTransform(515);
  t2.parent = 516;
  b.client.writeTransform(515, t2);
  await waitFor("a to see b's write", () => a.rt.getTransform(515)?.parent === 516);
  a.client.frame();
  b.client.frame();
  const expected = pull("s2");
  assert.equal(a.rt.stateHash(), expected.stateHash);
  assert.equal(b.rt.stateHash(), expected.stateHash);
  assert.deepEqual(diffWorld(runtimeWorld(a.rt), expected.world), []);
  for (const c of [a, b]) {
    c.client.close();
    c.rt.destroy();
  }
});

test("reconnects with backoff after a server restart; writes made meanwhile are sent", async () => {
  const file = join(tmp.dir, "r.dcl");
  cli(["gen", "--shape", "wide", "--entities", "10", "--seed", "3", "-o", file]);
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "s3", file]);
  const states = [];
  const { rt, client } = await join_("s3", { backoffInitialMs: 50, backoffMaxMs: 400, onState: (s) => states.push(s) });
  const http = server.http;
  await server.stop();
  await waitFor("the disconnect", () => client.state !== "joined");
  const t = rt.getTransform(513);
  t.position = [7, 7, 7];
  assert.equal(client.writeTransform(513, t), false, "held while disconnected");
  assert.equal(client.stats().writesPending, 1);
  server = await startServer(tmp.dir, [], { httpPort: http });
  await waitFor("the rejoin", () => client.state === "joined", 30000);
  assert.ok(client.stats().reconnects >= 1);
  assert.equal(client.stats().writesPending, 0);
  await waitFor("the server to have the write", () => pull("s3").transforms.find((x) => x.entity === 513)?.position[0] === 7);
  client.frame();
  assert.equal(rt.stateHash(), pull("s3").stateHash);
  assert.ok(states.includes("disconnected") && states.at(-1) === "joined");
  client.close();
  rt.destroy();
});

// Issue 23 item 13: servers drop non-finite Transforms; a writer that merged one would drift.
test("a non-finite write throws ScenecrdtError -1: not merged, sent or held", async () => {
  const file = join(tmp.dir, "nan.dcl");
  cli(["gen", "--shape", "wide", "--entities", "5", "--seed", "2", "-o", file]);
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "s4", file]);
  const { rt, client } = await join_("s4");
  client.frame();
  const before = rt.stateHash();
  const t = rt.getTransform(513);
  const refused = (e) => e.name === "ScenecrdtError" && e.status === -1 && /non_finite_transform/.test(e.message);
  for (const bad of [NaN, Infinity, -1e39]) {
    assert.throws(() => client.writeTransform(513, { ...t, position: [bad, 0, 0] }), refused, `joined, ${bad}`);
  }
  assert.equal(client.stats().writesSent, 0);
  assert.equal(rt.stateHash(), before);
  // Not joined yet: refused at once, not held for after the snapshot.
  const rt2 = await newRuntime();
  const idle = new SceneClient(rt2, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene: "s4" });
  assert.throws(() => idle.writeTransform(513, { ...t, scale: [1, NaN, 1] }), refused, "not joined");
  assert.equal(idle.stats().writesPending, 0);
  // A finite write still goes through, and the server agrees with the writer.
  assert.equal(client.writeTransform(513, { ...t, position: [9, 0, 0] }), true);
  await waitFor("the server to have the write", () => pull("s4").transforms.find((x) => x.entity === 513)?.position[0] === 9);
  client.frame();
  assert.equal(rt.stateHash(), pull("s4").stateHash);
  client.close();
  rt.destroy();
  rt2.destroy();
});

// Issue 21 section 3: frame() hands out views into reused buffers, the changed list carries
// the matrices; deletes of a Transform and of an entity reach the server and other clients.
const closeAll = (t, ...clients) => t.after(() => {
  for (const c of clients) {
    c.client.close();
    c.rt.destroy();
  }
});
// Entities that are nobody's effective parent.
const leaves = (rt) => {
  const ids = Array.from(rt.copyWorld().entities);
  const parents = new Set(ids.map((e) => rt.nodeInfo(e).effectiveParent));
  return ids.filter((e) => !parents.has(e));
};

test("frame() reuses its views; the changed list carries each entity's matrix", async (t) => {
  const file = join(tmp.dir, "views.dcl");
  cli(["gen", "--shape", "balanced", "--entities", "300", "--seed", "6", "-o", file]);
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "s5", file]);
  const a = await join_("s5");
  const b = await join_("s5");
  closeAll(t, a, b);
  const first = b.client.frame();
  assert.equal(first.world.count, 300);
  assert.equal(first.added.count, 300);
  const worldView = first.world.entities;
  a.client.frame();
  const leaf = leaves(a.rt)[0];
  a.client.writeTransform(leaf, { ...a.rt.getTransform(leaf), position: [40, 1, 2] });
  await waitFor("b to see the move", () => b.rt.getTransform(leaf)?.position[0] === 40);
  const f = b.client.frame();
  assert.equal(f, first, "the same frame object");
  assert.equal(f.world.entities, worldView, "the same entity view (no allocation)");
  assert.equal(f.world.count, 300);
  assert.equal(f.changed.count, 1);
  assert.equal(f.changed.entities[0], leaf);
  assert.deepEqual(Array.from(f.changed.matrices.subarray(0, 16)), Array.from(b.rt.worldMatrix(leaf)));
  assert.equal(f.added.count, 0);
  assert.equal(f.removed.count, 0);
});

test("deleteTransform and deleteEntity reach the server and another client", async (t) => {
  const file = join(tmp.dir, "del.dcl");
  cli(["gen", "--shape", "wide", "--entities", "12", "--seed", "8", "-o", file]);
  cli(["send", "--server", `tcp://127.0.0.1:${server.tcp}`, "--scene", "s6", file]);
  const a = await join_("s6");
  const b = await join_("s6");
  closeAll(t, a, b);
  a.client.frame();
  b.client.frame();
  const [e1, e2, e3] = leaves(a.rt);
  assert.ok(e3, "three leaves");
  assert.equal(a.client.deleteTransform(e1), true);
  assert.equal(a.client.deleteEntity(e2), true);
  await waitFor("b to lose both", () => b.rt.getTransform(e1) === null && b.rt.getTransform(e2) === null);
  const f = b.client.frame();
  assert.deepEqual(Array.from(f.removed.entities.subarray(0, f.removed.count)).sort(), [e1, e2].sort());
  a.client.frame();
  const pulled = pull("s6");
  assert.equal(pulled.transforms.some((x) => x.entity === e1 || x.entity === e2), false);
  assert.equal(a.rt.stateHash(), pulled.stateHash);
  assert.equal(b.rt.stateHash(), pulled.stateHash);
  // A deleted entity stays deleted: a later write is refused (SC_E_REFUSED, -5).
  const t0 = { position: [1, 1, 1], rotation: [0, 0, 0, 1], scale: [1, 1, 1], parent: 0 };
  assert.throws(() => a.client.writeTransform(e2, t0), (e) => e.name === "ScenecrdtError" && e.status === -5);
  assert.throws(() => a.client.deleteEntity(5), (e) => e.status === -5, "reserved numbers are refused");
  // While not joined a delete waits for the next snapshot, like a write.
  const rt3 = await newRuntime();
  const idle = new SceneClient(rt3, { WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${server.http}`, scene: "s6" });
  closeAll(t, { client: idle, rt: rt3 });
  assert.equal(idle.deleteTransform(e3), false);
  assert.equal(idle.stats().writesPending, 1);
  idle.start();
  await idle.joined();
  await waitFor("the held delete to reach b", () => b.rt.getTransform(e3) === null);
  assert.equal(idle.stats().writesPending, 0);
});
