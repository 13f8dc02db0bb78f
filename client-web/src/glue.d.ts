// SPDX-License-Identifier: Apache-2.0
// The emscripten glue as build.mjs wraps it (an ES module generated in gen/, bundled into the
// package): called with node's require and __dirname (or undefined in a browser), it gives
// createScenecrdtModule (typed as ModuleFactory by src/load.ts).
declare module "scenecrdt-glue" {
  export default function scenecrdtGlue(
    require: unknown,
    dirname: string | undefined,
    filename: string | undefined,
  ): (options?: object) => Promise<unknown>;
}
