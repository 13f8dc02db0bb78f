// Harness of the client-web page snippets (client-web/README.md, docs/WEB.md section 2;
// docs/SNIPPETS.md): browser globals, the writes' values (`entity`, `position`, ...), `token`
// (none: the runner's server has no --auth); the frame loop is started, and after 3 s the
// client must be joined with its frames run and its write back in the replica.
import { endAfter } from "./_browser.mjs";

const token = undefined;
const entity = 600, parent = 0;
const position = [1, 2, 3], rotation = [0, 0, 0, 1], scale = [1, 1, 1];
let frames = 0;
const countFrames = () => { frames++; requestAnimationFrame(countFrames); };
requestAnimationFrame(countFrames);
// @snippet
requestAnimationFrame(onFrame);
endAfter(3000, () => client.state !== "joined" ? `the client is ${client.state}, not joined`
  : frames < 10 ? `only ${frames} frames ran` : undefined);
void token, entity, parent, position, rotation, scale;
