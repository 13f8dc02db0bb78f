// SPDX-License-Identifier: Apache-2.0
// Owns the viewer page at /view/<scene> (docs/WEB.md): loads the wasm runtime served by
// `scenecrdt serve`, joins the scene over /dcl/<scene> (?token= from the page's query string),
// draws every frame from the interpolated presentation, and exposes the test hook
// window.scenecrdt.{world(), stats()} over the exact replica.
import { SceneClient } from "../client.js";
import { loadModule, type ModuleFactory, type NodeInfo, WasmRuntime } from "../wasm.js";
import { multiply, OrbitCamera } from "./camera.js";
import { Panel } from "./panel.js";
import { COLORS, Renderer } from "./renderer.js";

declare const createScenecrdtModule: ModuleFactory;

interface WorldEntry {
  entity: number;
  parent: number;
  parked: boolean;
  matrix: number[];
}

async function main(): Promise<void> {
  const scene = decodeURIComponent(location.pathname.replace(/^\/view\//, ""));
  const token = new URLSearchParams(location.search).get("token") ?? undefined;
  document.title = `${scene} - scenecrdt`;
  const status = document.getElementById("status")!;

  const mod = await loadModule(createScenecrdtModule, undefined, (p) => `/web/${p}`);
  const rt = new WasmRuntime(mod);
  // No extrapolation: the raw-DCL path has no heartbeats, so a moved entity that then stops
  // would stay shown past its last position until its next change (docs/WEB.md).
  rt.enableInterpolation({ maxExtrapolationUs: 0 });
  const server = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}`;
  const client = new SceneClient(rt, { server, scene, token });
  client.start();

  const canvas = document.getElementById("view") as HTMLCanvasElement;
  const renderer = new Renderer(canvas);
  const camera = new OrbitCamera();
  camera.attach(canvas);
  let selected = 0;
  const infos = new Map<number, NodeInfo>();
  const panel = new Panel(document.getElementById("panel")!, (e) => (selected = e));

  let frames = 0;
  // JavaScript time of the last 120 frames (wasm update, copies, buffers, WebGL calls); the
  // panel and stats() show their median.
  const recentMs = new Float64Array(120).fill(NaN);
  const frameMs = () => {
    const v = Array.from(recentMs).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    return v.length ? v[v.length >> 1] : 0;
  };
  let sessions: number | null = null;
  let rateBatches = 0;
  let lastSeenBatches = 0;
  let ratePerSecond = 0;
  let lastRateAt = performance.now();
  let lastTreeAt = 0;
  let treeDirty = true;
  // Batches received when the replica was last updated: the test hooks bring it up to date
  // before reading (the same update a frame runs, without drawing), so they show everything
  // received whatever the frame rate. The next frame then refreshes every node info, since
  // that update's changed lists went unseen.
  let updatedAtBatches = 0;
  let refreshInfos = false;
  const sync = () => {
    const batches = client.stats().batches;
    if (batches !== updatedAtBatches) {
      client.frame();
      updatedAtBatches = batches;
      refreshInfos = true;
    }
  };
  let colors = new Float32Array(0);
  let lines = new Float32Array(0);

  const pollSessions = async () => {
    try {
      const q = token ? `?token=${encodeURIComponent(token)}` : "";
      const res = await fetch(`/api/scenes${q}`);
      const body = (await res.json()) as { scenes: { name: string; sessions: number }[] };
      sessions = body.scenes.find((s) => s.name === scene)?.sessions ?? 0;
    } catch {
      sessions = null;
    }
  };
  void pollSessions();
  setInterval(pollSessions, 2000);

  // Picking: the entity whose origin projects nearest to the click (within 12 px).
  canvas.addEventListener("click", (e) => {
    const world = rt.copyInterpolatedWorld();
    const vp = camera.viewProjection(canvas.clientWidth / Math.max(1, canvas.clientHeight));
    const rect = canvas.getBoundingClientRect();
    let best = 0;
    let bestD = 144;
    for (let i = 0; i < world.entities.length; i++) {
      const m = world.matrices;
      const x = m[16 * i + 12], y = m[16 * i + 13], z = m[16 * i + 14];
      const w = vp[3] * x + vp[7] * y + vp[11] * z + vp[15];
      if (w <= 0) continue;
      const sx = ((vp[0] * x + vp[4] * y + vp[8] * z + vp[12]) / w * 0.5 + 0.5) * rect.width;
      const sy = (0.5 - (vp[1] * x + vp[5] * y + vp[9] * z + vp[13]) / w * 0.5) * rect.height;
      const d = (sx - (e.clientX - rect.left)) ** 2 + (sy - (e.clientY - rect.top)) ** 2;
      if (d < bestD) {
        bestD = d;
        best = world.entities[i];
      }
    }
    if (best !== 0) selected = best;
  });

  const tick = () => {
    const t0 = performance.now();
    const batchesBefore = client.stats().batches;
    const frame = client.frame();
    updatedAtBatches = batchesBefore;
    const { entities, matrices } = frame.world;
    const n = entities.length;
    if (frame.added.length || frame.removed.length || refreshInfos || frames % 60 === 0) {
      refreshInfos = false;
      infos.clear();
      for (const e of entities) {
        const info = rt.nodeInfo(e);
        if (info) infos.set(e, info);
      }
      treeDirty = true;
    } else {
      for (const e of frame.changed) {
        const info = rt.nodeInfo(e);
        if (info) infos.set(e, info);
      }
      if (frame.changed.length) treeDirty = true;
    }
    camera.fitOnce(matrices, n);

    if (colors.length < n * 3) colors = new Float32Array(n * 3 * 2);
    // Line vertices: a parent link and a parked beacon per entity (2 + 2), grid and gizmo.
    const lineFloats = (4 * n + 128) * 6;
    if (lines.length < lineFloats) lines = new Float32Array(lineFloats * 2);
    const index = new Map<number, number>();
    for (let i = 0; i < n; i++) index.set(entities[i], i);
    let lineCount = 0;
    const vertex = (x: number, y: number, z: number, c: number[]) => {
      const o = lineCount++ * 6;
      lines[o] = x;
      lines[o + 1] = y;
      lines[o + 2] = z;
      lines[o + 3] = c[0];
      lines[o + 4] = c[1];
      lines[o + 5] = c[2];
    };
    // Ground grid around the camera target, 1 m cells scaled to the view.
    const step = Math.pow(10, Math.floor(Math.log10(Math.max(camera.distance / 10, 0.1))));
    const cx = Math.round(camera.target[0] / step) * step, cz = Math.round(camera.target[2] / step) * step;
    for (let k = -10; k <= 10; k++) {
      vertex(cx + k * step, 0, cz - 10 * step, COLORS.grid);
      vertex(cx + k * step, 0, cz + 10 * step, COLORS.grid);
      vertex(cx - 10 * step, 0, cz + k * step, COLORS.grid);
      vertex(cx + 10 * step, 0, cz + k * step, COLORS.grid);
    }
    let parked = 0;
    const beacon = Math.max(1, camera.distance / 15);
    for (let i = 0; i < n; i++) {
      const e = entities[i];
      const info = infos.get(e);
      const c = e === selected ? COLORS.selected : info?.parked ? COLORS.parked
        : info?.placeholder ? COLORS.placeholder : COLORS.entity;
      if (info?.parked) {
        parked++;
        // A red beacon above each parked (loop) entity: they sit at the root, often inside
        // the crowd around the origin, where the box colour alone would hide them.
        const x = matrices[16 * i + 12], y = matrices[16 * i + 13], z = matrices[16 * i + 14];
        vertex(x, y, z, COLORS.parked);
        vertex(x, y + beacon, z, COLORS.parked);
      }
      colors[3 * i] = c[0];
      colors[3 * i + 1] = c[1];
      colors[3 * i + 2] = c[2];
      const p = info ? index.get(info.effectiveParent) : undefined;
      if (p !== undefined) {
        vertex(matrices[16 * i + 12], matrices[16 * i + 13], matrices[16 * i + 14], COLORS.link);
        vertex(matrices[16 * p + 12], matrices[16 * p + 13], matrices[16 * p + 14], COLORS.link);
      }
    }
    const sel = selected ? index.get(selected) : undefined;
    if (sel !== undefined) {
      // Axis gizmo of the selected entity: its world X (red), Y (green), Z (blue).
      const m = matrices.subarray(16 * sel, 16 * sel + 16);
      const axes = [[1, 0.2, 0.2], [0.2, 1, 0.2], [0.3, 0.5, 1]];
      for (let a = 0; a < 3; a++) {
        vertex(m[12], m[13], m[14], axes[a]);
        vertex(m[12] + m[4 * a] * 0.6, m[13] + m[4 * a + 1] * 0.6, m[14] + m[4 * a + 2] * 0.6, axes[a]);
      }
    }
    const aspect = canvas.clientWidth / Math.max(1, canvas.clientHeight);
    renderer.draw(camera.viewProjection(aspect), matrices, colors, n, lines, lineCount);

    frames++;
    recentMs[frames % recentMs.length] = performance.now() - t0;
    const batchesNow = client.stats().batches;
    rateBatches += batchesNow - lastSeenBatches;
    lastSeenBatches = batchesNow;
    const now = performance.now();
    if (now - lastRateAt >= 1000) {
      ratePerSecond = (rateBatches * 1000) / (now - lastRateAt);
      rateBatches = 0;
      lastRateAt = now;
    }
    if (now - lastTreeAt > 1000) {
      lastTreeAt = now;
      panel.showFigures({ scene, state: client.state, entities: rt.entityCount(), sessions,
        updatesPerSecond: ratePerSecond, frameMs: frameMs(), parked });
      if (treeDirty) {
        panel.showTree(entities, infos, selected);
        treeDirty = false;
      }
    }
    panel.showSelection(selected
      ? { entity: selected, info: rt.nodeInfo(selected), local: rt.getTransform(selected), world: rt.worldMatrix(selected) }
      : null);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  status.textContent = "";

  (window as unknown as { scenecrdt: unknown }).scenecrdt = {
    /** The exact replica with everything received (not the interpolated view). */
    world(): WorldEntry[] {
      sync();
      const { entities, matrices } = rt.copyWorld();
      const out: WorldEntry[] = [];
      for (let i = 0; i < entities.length; i++) {
        const info = rt.nodeInfo(entities[i]);
        out.push({ entity: entities[i], parent: info?.effectiveParent ?? 0, parked: info?.parked ?? false,
          matrix: Array.from(matrices.subarray(16 * i, 16 * i + 16)) });
      }
      return out;
    },
    /** One entity's world matrix in the exact replica (null: not in the scene). */
    matrix(entity: number): number[] | null {
      sync();
      const m = rt.worldMatrix(entity);
      return m ? Array.from(m) : null;
    },
    stats() {
      return { connected: client.state === "joined", entities: rt.entityCount(), frames,
        frameMs: frameMs(), ...client.stats() };
    },
    client,
    runtime: rt,
    multiply,
  };
}

main().catch((err) => {
  const status = document.getElementById("status");
  if (status) status.textContent = `viewer failed: ${String(err)}`;
  console.error(err);
});
