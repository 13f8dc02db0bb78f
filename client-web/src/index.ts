// SPDX-License-Identifier: Apache-2.0
// Owns the public surface of @scenecrdt/client-web (docs/WEB.md): the wasm runtime wrapper and
// the WebSocket scene client.
export { checkFiniteTransform, loadModule, SC_E_INVALID_ARGUMENT, ScenecrdtError, WasmRuntime } from "./wasm.js";
export type { ModuleFactory, NodeInfo, ScenecrdtModule, Transform, WorldCopy } from "./wasm.js";
export { dclUrl, SceneClient } from "./client.js";
export type { ClientStats, ConnectionState, Frame, SceneClientOptions, WebSocketCtor } from "./client.js";
