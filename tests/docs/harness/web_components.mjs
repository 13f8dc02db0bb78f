// Harness of the docs/COMPONENTS.md TypeScript snippet (docs/SNIPPETS.md): the page's imports,
// `server` and `scene`, a MeshRenderer decoder and the renderer's `setMesh`/`dropMesh`; frames
// run every 16 ms and the client must join (within 10 s).
import { loadScenecrdt, WasmRuntime, SceneClient } from "@scenecrdt/client-web";
import { endWhen } from "./_browser.mjs";

const server = "ws://127.0.0.1:7601", scene = "snippets-components";
const PBMeshRenderer = { decode: (bytes) => bytes };
const meshes = new Map();
const setMesh = (entity, mesh) => meshes.set(entity, mesh);
const dropMesh = (entity) => meshes.delete(entity);
// @snippet
setInterval(onFrame, 16);
endWhen(() => client.state !== "joined" ? `the client is ${client.state}, not joined` : undefined);
