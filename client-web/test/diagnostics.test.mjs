// SPDX-License-Identifier: Apache-2.0
// SceneClient diagnostics under node against a real `scenecrdt serve` (docs/WEB.md,
// "Diagnostics"): a dead server retried forever but reported (state and lastError), the
// give-up policy (maxAttempts, giveUpAfterMs), and close() saying goodbye so the server logs
// `client_closed`, not `peer_gone`.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { SceneClient } from "../dist/client.js";
import { newRuntime, startServer, tempDir, waitFor, WebSocketImpl } from "./helpers.mjs";

let tmp;
let server;
let deadPort = 0;

before(async () => {
  tmp = tempDir();
  server = await startServer(tmp.dir);
  const dead = tempDir();
  const stopped = await startServer(dead.dir);
  deadPort = stopped.http;
  await stopped.stop();
  dead.cleanup();
});

after(async () => {
  await server?.stop();
  tmp?.cleanup();
});

async function clientOf(port, options = {}) {
  const rt = await newRuntime();
  const states = [];
  const client = new SceneClient(rt, {
    WebSocket: WebSocketImpl, server: `ws://127.0.0.1:${port}`, scene: "diag",
    backoffInitialMs: 5, backoffMaxMs: 20, onState: (s) => states.push(s), ...options,
  });
  return { rt, client, states };
}

test("a dead server is retried forever but reported", async () => {
  const { rt, client } = await clientOf(deadPort);
  assert.equal(client.lastError, null);
  client.start();
  await waitFor("three failed attempts", () => (client.lastError?.failedAttempts ?? 0) >= 3);
  assert.ok(client.state === "connecting" || client.state === "disconnected", client.state);
  assert.equal(client.lastError.code, 1006);
  assert.match(client.lastError.reason, /no connection to ws:\/\/127\.0\.0\.1/);
  client.close();
  rt.destroy();
});

test("gives up after maxAttempts", async () => {
  const { rt, client, states } = await clientOf(deadPort, { maxAttempts: 2 });
  client.start();
  await waitFor("giving up", () => client.state === "closed");
  assert.equal(client.lastError.failedAttempts, 2);
  assert.match(client.lastError.reason, /gave up: too many failed attempts/);
  assert.equal(states.at(-1), "closed");
  rt.destroy();
});

test("gives up after giveUpAfterMs", async () => {
  const { rt, client } = await clientOf(deadPort, { giveUpAfterMs: 200 });
  client.start();
  await waitFor("giving up", () => client.state === "closed");
  assert.match(client.lastError.reason, /gave up: no join within giveUpAfterMs/);
  rt.destroy();
});

test("joining then joined; close() is logged by the server as client_closed", async () => {
  const { rt, client, states } = await clientOf(server.http);
  client.start();
  await client.joined(20000);
  assert.deepEqual(states, ["connecting", "joining", "joined"]);
  client.close();
  await waitFor("the server's close line", () => / close scene=diag [^\n]*kind=dcl [^\n]*reason=/.test(server.log()));
  assert.match(server.log(), / close scene=diag [^\n]*kind=dcl [^\n]*reason=client_closed/);
  assert.doesNotMatch(server.log(), / close scene=diag [^\n]*reason=peer_gone/);
  rt.destroy();
});
