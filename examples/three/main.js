// SPDX-License-Identifier: Apache-2.0
// The three.js example (docs/WEB.md section 5): a scene of `scenecrdt serve` shown with
// three.js through bindThree, one Mesh per entity (a unit box, coloured by entity), moved
// from the interpolated world matrices. Bundled with esbuild by client-web/build.mjs exactly
// as an application would bundle the package: imports "@scenecrdt/client-web" and "three",
// and finds scenecrdt.wasm next to the bundle (new URL(..., import.meta.url)).
// Query: ?scene=S (default demo), &token=T, &interpolation=0 (show the exact replica),
// &mesh=none (empty Object3Ds: measures the binding without drawing).
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { loadScenecrdt, SceneClient, WasmRuntime } from "@scenecrdt/client-web";
import { bindThree } from "@scenecrdt/client-web/three";

const params = new URLSearchParams(location.search);
const scene = params.get("scene") ?? "demo";
const token = params.get("token") ?? undefined;
const interpolate = params.get("interpolation") !== "0";
const meshes = params.get("mesh") !== "none";
const info = document.getElementById("info");

const rt = new WasmRuntime(await loadScenecrdt());
if (interpolate) rt.enableInterpolation({ maxExtrapolationUs: 0 });
const server = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}`;
const client = new SceneClient(rt, { server, scene, token });
client.start();

const canvas = document.getElementById("view");
const renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
renderer.setPixelRatio(window.devicePixelRatio);
const root = new THREE.Scene();
root.background = new THREE.Color(0x15181d);
root.add(new THREE.HemisphereLight(0xffffff, 0x334455, 2.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(4, 9, 3);
root.add(sun);
root.add(new THREE.GridHelper(100, 50, 0x445066, 0x2a2f38));
const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 5000);
camera.position.set(-20, 18, 24);
const controls = new OrbitControls(camera, canvas);

// The mesh factory: one shared unit box, twelve shared materials (hue by entity id).
const box = new THREE.BoxGeometry(1, 1, 1);
const materials = Array.from({ length: 12 }, (_, i) =>
  new THREE.MeshStandardMaterial({ color: new THREE.Color().setHSL(0.2 + (0.7 * i) / 12, 0.6, 0.6) }));
const binding = bindThree(client, THREE, root, {
  createObject: (entity) => (meshes ? new THREE.Mesh(box, materials[entity % materials.length]) : new THREE.Object3D()),
});

// Frame the scene once it has arrived (bounds of the objects' world positions).
let framed = false;
const frameAll = () => {
  const bounds = new THREE.Box3();
  for (const object of binding.objects.values()) bounds.expandByPoint(new THREE.Vector3().setFromMatrixPosition(object.matrix));
  if (bounds.isEmpty()) return false;
  const center = bounds.getCenter(new THREE.Vector3());
  const radius = Math.max(bounds.getSize(new THREE.Vector3()).length() / 2, 1);
  controls.target.copy(center);
  camera.position.copy(center).add(new THREE.Vector3(-0.6, 0.55, 0.6).normalize().multiplyScalar(radius * 2.4));
  camera.far = radius * 20;
  camera.updateProjectionMatrix();
  controls.update();
  return true;
};
window.addEventListener("keydown", (e) => {
  if (e.key === "f" || e.key === "F") frameAll();
});

// Median of the last 120 frames: the binding's update and the whole frame (update + render).
const recent = { update: new Float64Array(120).fill(NaN), frame: new Float64Array(120).fill(NaN) };
const median = (a) => {
  const v = Array.from(a).filter((x) => !Number.isNaN(x)).sort((x, y) => x - y);
  return v.length ? v[v.length >> 1] : 0;
};
let frames = 0;
function tick() {
  const t0 = performance.now();
  binding.update();
  const t1 = performance.now();
  if (!framed && client.state === "joined" && binding.objects.size > 0) framed = frameAll();
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.floor(w * devicePixelRatio) || canvas.height !== Math.floor(h * devicePixelRatio)) {
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(1, h);
    camera.updateProjectionMatrix();
  }
  renderer.render(root, camera);
  frames++;
  recent.update[frames % 120] = t1 - t0;
  recent.frame[frames % 120] = performance.now() - t0;
  if (frames % 30 === 1) {
    info.textContent = `${scene} ${client.state} · ${binding.objects.size} objects · update ` +
      `${median(recent.update).toFixed(2)} ms · frame ${median(recent.frame).toFixed(1)} ms · F: frame all`;
  }
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);

// Test hooks (client-web/test/three.test.mjs). check(): one update with everything received,
// then the exact replica (world) and every object's matrixWorld, read together.
window.scenecrdt = {
  world() {
    const { entities, matrices } = rt.copyWorld();
    return Array.from(entities, (entity, i) => {
      const n = rt.nodeInfo(entity);
      return { entity, parent: n?.effectiveParent ?? 0, parked: n?.parked ?? false,
        matrix: Array.from(matrices.subarray(16 * i, 16 * i + 16)) };
    });
  },
  check() {
    binding.update();
    root.updateMatrixWorld();
    const objects = Array.from(binding.objects, ([entity, o]) => ({ entity, matrixWorld: Array.from(o.matrixWorld.elements),
      autoUpdate: o.matrixAutoUpdate, parentIsRoot: o.parent === root }));
    return { world: this.world(), objects, children: root.children.length };
  },
  stats: () => ({ joined: client.state === "joined", entities: rt.entityCount(), objects: binding.objects.size,
    frames, updateMs: median(recent.update), frameMs: median(recent.frame), ...client.stats() }),
  client,
  runtime: rt,
  binding,
};
