// Harness of the three.js page snippets (README.md, docs/WEB.md section 5; docs/SNIPPETS.md):
// browser globals, the page's `THREE` (when the snippet does not import it), `scene`,
// `camera` and a `renderer` whose animation loop runs every 16 ms; after 3 s the client must
// be joined and the loop must have run.
import * as HarnessThree from "three";
import { endAfter } from "./_browser.mjs";

globalThis.THREE ??= HarnessThree;
const scene = new HarnessThree.Scene();
const camera = new HarnessThree.PerspectiveCamera();
let renders = 0;
const renderer = {
  setAnimationLoop(f) { setInterval(f, 16); },
  render() { renders++; },
};
// @snippet
endAfter(3000, () => client.state !== "joined" ? `the client is ${client.state}, not joined`
  : renders < 10 ? `only ${renders} frames rendered` : undefined);
void camera;
