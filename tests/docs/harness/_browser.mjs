// Browser globals for the docs' page snippets under node (docs/SNIPPETS.md): WebSocket (the
// ws package; node 20 has none) and requestAnimationFrame (every 16 ms). Copied next to every
// snippet; the web harnesses import it first.
import WebSocket from "ws";

globalThis.WebSocket ??= WebSocket;
globalThis.requestAnimationFrame ??= (f) => setTimeout(() => f(performance.now()), 16);

// Ends a page snippet after `ms`: `check()` returns an error text or nothing.
export function endAfter(ms, check) {
  setTimeout(() => {
    const why = check();
    if (why) {
      console.error(`harness: ${why}`);
      process.exit(1);
    }
    process.exit(0);
  }, ms);
}
