// Browser globals for the docs' page snippets under node (docs/SNIPPETS.md): WebSocket (the
// ws package; node 20 has none) and requestAnimationFrame (every 16 ms). Copied next to every
// snippet; the web harnesses import it first.
import WebSocket from "ws";

globalThis.WebSocket ??= WebSocket;
globalThis.requestAnimationFrame ??= (f) => setTimeout(() => f(performance.now()), 16);

// Ends a page snippet: exit 0 as soon as `check()` returns nothing, exit 1 with its last text
// after 10 s (the bound; a loaded CI machine may take seconds to join).
export function endWhen(check, ms = 10000) {
  const deadline = Date.now() + ms;
  const poll = setInterval(() => {
    const why = check();
    if (!why) {
      clearInterval(poll);
      process.exit(0);
    } else if (Date.now() > deadline) {
      console.error(`harness: after ${ms} ms: ${why}`);
      process.exit(1);
    }
  }, 100);
}
