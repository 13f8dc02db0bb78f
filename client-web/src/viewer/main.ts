// SPDX-License-Identifier: Apache-2.0
// Owns the viewer page at /view/<scene> (docs/WEB.md section 3): loads the wasm runtime served
// by `scenecrdt serve` (the package's own loader: the wasm next to viewer.js), joins the scene
// over /dcl/<scene> (?token= from the page's query string), draws every frame from the
// interpolated presentation with the Z mirror of a right-handed renderer (camera.ts), frames
// the scene's bounds as they move, shows labels, trails and the selection, and exposes the
// test hook window.scenecrdt over the exact replica.
import { SceneClient } from "../client.js";
import { loadScenecrdt } from "../load.js";
import { type NodeInfo, WasmRuntime } from "../wasm.js";
import { FOV_Y, multiply, OrbitCamera } from "./camera.js";
import { COLORS, entityColor, indexOf, Labels, LineBuffer, MAX_LABELS, Trails } from "./overlay.js";
import { Panel } from "./panel.js";
import { Renderer } from "./renderer.js";

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

  const rt = new WasmRuntime(await loadScenecrdt());
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
  const labels = new Labels(document.getElementById("labels")!);
  const trails = new Trails();
  const lines = new LineBuffer();
  let showLabels = true;
  // 1: each entity a unit cube (a left-handed engine's default cube) under its world matrix,
  // its true size; 0.3: small markers for a crowded scene ("B").
  let boxScale = 1;
  let selected = 0;
  // Node infos by entity, objects reused (made once per entity).
  const infos = new Map<number, NodeInfo>();
  const infoOf = (e: number): NodeInfo | undefined => {
    let info = infos.get(e);
    if (!info) infos.set(e, (info = { effectiveParent: 0, declaredParent: 0, parked: false, placeholder: false }));
    return rt.nodeInfoInto(e, info) ? info : undefined;
  };
  const panel = new Panel(document.getElementById("panel")!, (e) => (selected = e));

  let frames = 0;
  // JavaScript time of the last 120 frames (wasm update, copies, buffers, WebGL calls); the
  // panel and stats() show their median.
  const recentMs = new Float64Array(120).fill(NaN);
  const sortedMs = new Float64Array(120);
  const frameMs = () => {
    let n = 0;
    for (const v of recentMs) if (!Number.isNaN(v)) sortedMs[n++] = v;
    const part = sortedMs.subarray(0, n).sort();
    return n ? part[n >> 1] : 0;
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
  let colors = new Float32Array(3 * 1024);
  let parentAt = new Int32Array(1024); // position of the effective parent, -1: at the root
  let flags = new Uint8Array(1024); // PARKED
  const PARKED = 1;
  let lastCount = -1;
  let placedSelection = 0;
  // Colour and parent position of the entity at position i.
  const place = (i: number, entities: Uint32Array, n: number) => {
    const e = entities[i];
    const info = infos.get(e);
    const c = e === selected ? COLORS.selected : info?.parked ? COLORS.parked
      : info?.placeholder ? COLORS.placeholder : null;
    if (c) {
      colors[3 * i] = c[0];
      colors[3 * i + 1] = c[1];
      colors[3 * i + 2] = c[2];
    } else {
      entityColor(e, colors, 3 * i);
    }
    flags[i] = info?.parked ? PARKED : 0;
    parentAt[i] = info && info.effectiveParent !== 0 ? indexOf(entities, n, info.effectiveParent) : -1;
  };
  const vp = new Float32Array(16);
  const min = new Float64Array(3);
  const max = new Float64Array(3);
  let frameAllNow = false;
  let shownSelection = -1;
  let lastSelectionAt = 0;

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
  const project = (x: number, y: number, z: number, out: Float64Array): boolean => {
    const w = vp[3] * x + vp[7] * y + vp[11] * z + vp[15];
    if (w <= 0) return false;
    out[0] = ((vp[0] * x + vp[4] * y + vp[8] * z + vp[12]) / w * 0.5 + 0.5) * canvas.clientWidth;
    out[1] = (0.5 - (vp[1] * x + vp[5] * y + vp[9] * z + vp[13]) / w * 0.5) * canvas.clientHeight;
    return true;
  };
  const screen = new Float64Array(2);
  canvas.addEventListener("click", (e) => {
    const { count, entities, matrices } = rt.worldView(true);
    const rect = canvas.getBoundingClientRect();
    let best = 0;
    let bestD = 144;
    for (let i = 0; i < count; i++) {
      if (!project(matrices[16 * i + 12], matrices[16 * i + 13], matrices[16 * i + 14], screen)) continue;
      const d = (screen[0] - (e.clientX - rect.left)) ** 2 + (screen[1] - (e.clientY - rect.top)) ** 2;
      if (d < bestD) {
        bestD = d;
        best = entities[i];
      }
    }
    if (best !== 0) selected = best;
  });
  window.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement) return;
    if (e.key === "f" || e.key === "F" || e.key === "Home") {
      camera.autoFrame = true;
      frameAllNow = true;
    } else if (e.key === "Escape") {
      selected = 0;
    } else if (e.key === "l" || e.key === "L") {
      showLabels = !showLabels;
    } else if (e.key === "b" || e.key === "B") {
      boxScale = boxScale === 1 ? 0.3 : 1;
    }
  });

  const tick = () => {
    const t0 = performance.now();
    const batchesBefore = client.stats().batches;
    const frame = client.frame();
    updatedAtBatches = batchesBefore;
    const { count: n, entities, matrices } = frame.world;
    // Per entity position: its colour and its parent's position, made again for every entity
    // when entities come or go (positions shift) and for the changed ones otherwise.
    if (parentAt.length < n) {
      parentAt = new Int32Array(2 * n);
      flags = new Uint8Array(2 * n);
    }
    if (colors.length < n * 3) colors = new Float32Array(n * 3 * 2);
    if (frame.added.count || frame.removed.count || refreshInfos || frames % 60 === 0 || n !== lastCount) {
      refreshInfos = false;
      lastCount = n;
      if (infos.size > n) infos.clear();
      for (let i = 0; i < n; i++) {
        infoOf(entities[i]);
        place(i, entities, n);
      }
      treeDirty = true;
    } else if (frame.changed.count) {
      for (let k = 0; k < frame.changed.count; k++) {
        const e = frame.changed.entities[k];
        infoOf(e);
        const i = indexOf(entities, n, e);
        if (i >= 0) place(i, entities, n);
      }
      treeDirty = true;
    }
    if (selected !== placedSelection) {
      for (const e of [placedSelection, selected]) {
        const i = e ? indexOf(entities, n, e) : -1;
        if (i >= 0) place(i, entities, n);
      }
      placedSelection = selected;
    }

    // Bounds of every entity's box (the exact box around its transformed cube: half of
    // |m[k]| + |m[4 + k]| + |m[8 + k]| on axis k around its origin): the camera follows them
    // while auto-framing.
    min.fill(Infinity);
    max.fill(-Infinity);
    for (let i = 0; i < n; i++) {
      const o = 16 * i;
      for (let k = 0; k < 3; k++) {
        const v = matrices[o + 12 + k];
        const r = 0.5 * boxScale * (Math.abs(matrices[o + k]) + Math.abs(matrices[o + 4 + k]) + Math.abs(matrices[o + 8 + k]));
        if (v - r < min[k]) min[k] = v - r;
        if (v + r > max[k]) max[k] = v + r;
      }
    }
    const aspect = canvas.clientWidth / Math.max(1, canvas.clientHeight);
    if (n > 0 && Number.isFinite(min[0] + min[1] + min[2] + max[0] + max[1] + max[2])) {
      camera.follow(min, max, aspect, frameAllNow);
      frameAllNow = false;
    }
    camera.viewProjection(aspect, vp);

    lines.reset();
    lines.reserve(4 * n + 128);
    // Ground grid around the camera target, 20 x 20 cells of 1, 2 or 5 x 10^k metres scaled to
    // the view.
    const want = Math.max(camera.distance / 14, 0.1);
    const decade = Math.pow(10, Math.floor(Math.log10(want)));
    const step = want <= decade ? decade : want <= 2 * decade ? 2 * decade : want <= 5 * decade ? 5 * decade : 10 * decade;
    const cx = Math.round(camera.target[0] / step) * step, cz = Math.round(camera.target[2] / step) * step;
    const g = COLORS.grid;
    for (let k = -10; k <= 10; k++) {
      lines.vertex(cx + k * step, 0, cz - 10 * step, g[0], g[1], g[2]);
      lines.vertex(cx + k * step, 0, cz + 10 * step, g[0], g[1], g[2]);
      lines.vertex(cx - 10 * step, 0, cz + k * step, g[0], g[1], g[2]);
      lines.vertex(cx + 10 * step, 0, cz + k * step, g[0], g[1], g[2]);
    }
    let parked = 0;
    const beacon = Math.max(1, camera.distance / 15);
    const link = COLORS.link;
    for (let i = 0; i < n; i++) {
      const x = matrices[16 * i + 12], y = matrices[16 * i + 13], z = matrices[16 * i + 14];
      if (flags[i] & PARKED) {
        parked++;
        // A red beacon above each parked (loop) entity: they sit at the root, often inside
        // the crowd around the origin, where the box colour alone would hide them.
        const r = COLORS.parked;
        lines.vertex(x, y, z, r[0], r[1], r[2]);
        lines.vertex(x, y + beacon, z, r[0], r[1], r[2]);
      }
      const p = parentAt[i];
      if (p >= 0) {
        lines.vertex(x, y, z, link[0], link[1], link[2]);
        lines.vertex(matrices[16 * p + 12], matrices[16 * p + 13], matrices[16 * p + 14], link[0], link[1], link[2]);
      }
    }
    trails.sample(t0, entities, matrices, n, selected);
    trails.draw(lines);
    const sel = selected ? indexOf(entities, n, selected) : -1;
    if (sel >= 0) {
      // Axis gizmo of the selected entity: its world X (red), Y (green), Z (blue).
      const o = 16 * sel;
      lines.reserve(6);
      for (let a = 0; a < 3; a++) {
        const r = a === 0 ? 1 : 0.25, gr = a === 1 ? 1 : 0.25, b = a === 2 ? 1 : 0.35;
        lines.vertex(matrices[o + 12], matrices[o + 13], matrices[o + 14], r, gr, b);
        lines.vertex(matrices[o + 12] + matrices[o + 4 * a] * 0.8, matrices[o + 13] + matrices[o + 4 * a + 1] * 0.8,
          matrices[o + 14] + matrices[o + 4 * a + 2] * 0.8, r, gr, b);
      }
    }
    renderer.draw(vp, matrices, colors, n, lines.data, lines.count, boxScale);

    // Labels: every entity of a small scene, else the selected one.
    labels.begin();
    if (showLabels) {
      const all = n <= MAX_LABELS;
      for (let i = all ? 0 : Math.max(sel, 0); i < (all ? n : sel + 1); i++) {
        if (i < 0 || !project(matrices[16 * i + 12], matrices[16 * i + 13], matrices[16 * i + 14], screen)) continue;
        const e = entities[i];
        const info = infos.get(e);
        labels.show(info?.parked ? `${e} parked` : String(e), screen[0], screen[1], e === selected);
      }
    }
    labels.end();

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
        updatesPerSecond: ratePerSecond, frameMs: frameMs(), parked, autoFrame: camera.autoFrame });
      if (treeDirty) {
        panel.showTree(entities.subarray(0, n), infos, selected);
        treeDirty = false;
      }
    }
    if (selected !== shownSelection || now - lastSelectionAt > 500) {
      shownSelection = selected;
      lastSelectionAt = now;
      panel.showSelection(selected
        ? { entity: selected, info: rt.nodeInfo(selected), local: rt.getTransform(selected), world: rt.worldMatrix(selected) }
        : null);
    }
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
        frameMs: frameMs(), autoFrame: camera.autoFrame, selected, trails: trails.drawn(), ...client.stats() };
    },
    /** The camera: lookFrom(eye, target) in scene coordinates, fovY (radians), frameAll(). */
    camera: {
      lookFrom: (eye: number[], target: number[]) => camera.lookFrom(eye, target),
      frameAll: () => {
        camera.autoFrame = true;
        frameAllNow = true;
      },
      fovY: FOV_Y,
      state: () => ({ target: [...camera.target], distance: camera.distance, eye: camera.eye(), autoFrame: camera.autoFrame }),
    },
    select: (entity: number) => (selected = entity >>> 0),
    labels: (on: boolean) => (showLabels = on),
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
