// Harness of the docs/ECS-TRANSPORT.md page snippet (bundled by esbuild; docs/SNIPPETS.md):
// browser globals; the engine updates every 33 ms and after 2 s the transport must be connected.
import { endAfter } from "./_browser.mjs";

// @snippet
setInterval(() => engine.update(1 / 30), 33);
endAfter(2000, () => transport.stats().state !== "joined"
  ? `the transport is ${transport.stats().state}` : undefined);
void Transform;
