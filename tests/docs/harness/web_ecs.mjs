// Harness of the docs/ECS-TRANSPORT.md page snippet (bundled by esbuild; docs/SNIPPETS.md):
// browser globals; the engine updates every 33 ms and the transport must join (within 10 s).
import { endWhen } from "./_browser.mjs";

// @snippet
setInterval(() => engine.update(1 / 30), 33);
endWhen(() => transport.stats().state !== "joined"
  ? `the transport is ${transport.stats().state}` : undefined);
void Transform;
