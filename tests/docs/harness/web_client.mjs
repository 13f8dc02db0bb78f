// Harness of the client-web page snippets (client-web/README.md, docs/WEB.md section 2;
// docs/SNIPPETS.md): browser globals, the writes' values (`entity`, `position`, ...), `token`
// (none: the runner's server has no --auth); the frame loop is started, and the client must
// join (within 10 s) with its frames running.
import { endWhen } from "./_browser.mjs";

const token = undefined;
const entity = 600, parent = 0;
const position = [1, 2, 3], rotation = [0, 0, 0, 1], scale = [1, 1, 1];
let frames = 0;
const countFrames = () => { frames++; requestAnimationFrame(countFrames); };
requestAnimationFrame(countFrames);
// @snippet
requestAnimationFrame(onFrame);
endWhen(() => client.state !== "joined" ? `the client is ${client.state}, not joined`
  : frames < 10 ? `only ${frames} frames ran` : undefined);
void token, entity, parent, position, rotation, scale;
