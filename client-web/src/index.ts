// SPDX-License-Identifier: Apache-2.0
// Owns the public surface of @scenecrdt/client-web (docs/WEB.md): loading the wasm module, the
// wasm runtime wrapper and its reused views, component reads, the WebSocket scene client, and
// DclSceneView (an @dcl/ecs engine and the wasm replica on one connection). The three.js
// binding is the separate entry "@scenecrdt/client-web/three" (src/three.ts).
export { defaultWasmUrl, loadScenecrdt } from "./load.js";
export type { LoadOptions } from "./load.js";
export {
  checkFiniteTransform,
  loadModule,
  SC_E_INVALID_ARGUMENT,
  SC_E_REFUSED,
  ScenecrdtError,
  WasmRuntime,
} from "./wasm.js";
export type { ModuleFactory, NodeInfo, ScenecrdtModule, Transform, WorldCopy } from "./wasm.js";
export type { EntityList, MatrixList } from "./views.js";
export { SC_E_GROW_ONLY } from "./components.js";
export type { AppendValue, ComponentChanges, ComponentList, ComponentPairs } from "./components.js";
export { dclUrl, SceneClient } from "./client.js";
export { DclSceneView } from "./dcl_view.js";
export type { DclEngine, DclSceneViewOptions, DclSceneViewStats, DclTransport } from "./dcl_view.js";
export type {
  ClientStats,
  ComponentEvent,
  ComponentListener,
  ClientError,
  ConnectionState,
  Frame,
  SceneClientOptions,
  WebSocketCtor,
} from "./client.js";
