// Harness of the three.js page snippets (README.md, docs/WEB.md section 5; docs/SNIPPETS.md):
// browser globals, the page's `THREE` (when the snippet does not import it), `scene`,
// `camera` and a `renderer` whose animation loop runs every 16 ms; the client must join
// (within 10 s) and the loop must run.
import * as HarnessThree from "three";
import { endWhen } from "./_browser.mjs";

globalThis.THREE ??= HarnessThree;
const scene = new HarnessThree.Scene();
const camera = new HarnessThree.PerspectiveCamera();
let renders = 0;
const renderer = {
  setAnimationLoop(f) { setInterval(f, 16); },
  render() { renders++; },
};
// @snippet
endWhen(() => client.state !== "joined" ? `the client is ${client.state}, not joined`
  : renders < 10 ? `only ${renders} frames rendered` : undefined);
void camera;
