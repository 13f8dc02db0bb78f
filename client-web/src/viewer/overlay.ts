// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's decorations (docs/WEB.md section 3): each entity's colour, the orbit
// trails of moving entities (bounded ring buffers, sampled every TRAIL_SAMPLE_MS), the line
// buffer every frame writes into (grown, never shrunk), and the HTML labels over the canvas
// (a bounded pool of elements, moved only when their place changes).

/** Colours of the viewer (r, g, b in 0..1). Entities get distinct hues in 0.2..0.9 (greens,
 * blues, purples): red, orange and yellow are kept for parked and selected ones. */
export const COLORS = {
  parked: [1.0, 0.35, 0.2],
  placeholder: [0.55, 0.55, 0.55],
  selected: [1.0, 0.9, 0.2],
  link: [0.45, 0.5, 0.6],
  grid: [0.22, 0.24, 0.28],
  background: [0.08, 0.09, 0.11],
};

/** Writes entity `e`'s own colour at out[o .. o + 2]: a hue by the golden ratio of its id. */
export function entityColor(e: number, out: Float32Array, o: number): void {
  const h = 0.2 + 0.7 * ((((e & 0xffff) * 0.618033988749895) + (e >>> 16) * 0.37) % 1);
  const s = 0.6;
  const v = 1.0;
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
  let r = v, g = t, b = p;
  switch (i % 6) {
    case 1: r = q; g = v; b = p; break;
    case 2: r = p; g = v; b = t; break;
    case 3: r = p; g = q; b = v; break;
    case 4: r = t; g = p; b = v; break;
    case 5: r = v; g = p; b = q; break;
  }
  out[o] = r;
  out[o + 1] = g;
  out[o + 2] = b;
}

/** Line vertices (x y z r g b), grown as needed and reused frame after frame. */
export class LineBuffer {
  data = new Float32Array(6 * 4096);
  count = 0;

  reset(): void {
    this.count = 0;
  }

  /** Makes room for `more` vertices. */
  reserve(more: number): void {
    const need = (this.count + more) * 6;
    if (need <= this.data.length) return;
    const grown = new Float32Array(Math.max(need, this.data.length * 2));
    grown.set(this.data.subarray(0, this.count * 6));
    this.data = grown;
  }

  vertex(x: number, y: number, z: number, r: number, g: number, b: number): void {
    const o = this.count++ * 6;
    const d = this.data;
    d[o] = x;
    d[o + 1] = y;
    d[o + 2] = z;
    d[o + 3] = r;
    d[o + 4] = g;
    d[o + 5] = b;
  }
}

/** At most this many entities keep a trail (all of a scene this small, else the selected). */
export const MAX_TRAILS = 64;
const TRAIL_POINTS = 150;
const TRAIL_SAMPLE_MS = 80;

/** Orbit trails: the last TRAIL_POINTS positions of up to MAX_TRAILS moving entities. */
export class Trails {
  private readonly points = new Float32Array(MAX_TRAILS * TRAIL_POINTS * 3);
  private readonly length = new Int32Array(MAX_TRAILS);
  private readonly head = new Int32Array(MAX_TRAILS);
  private readonly owner = new Uint32Array(MAX_TRAILS);
  private readonly seen = new Float64Array(MAX_TRAILS);
  private readonly slots = new Map<number, number>();
  private lastSample = -Infinity;
  private readonly color = new Float32Array(3);

  /** Records the positions of `entities` (those of the list when few, else `selected`). */
  sample(now: number, entities: Uint32Array, matrices: Float32Array, count: number, selected: number): void {
    if (now - this.lastSample < TRAIL_SAMPLE_MS) return;
    this.lastSample = now;
    if (count <= MAX_TRAILS) {
      for (let i = 0; i < count; i++) this.record(entities[i], matrices, 16 * i, now);
    } else if (selected !== 0) {
      const i = indexOf(entities, count, selected);
      if (i >= 0) this.record(selected, matrices, 16 * i, now);
    }
    // Slots not seen in this pass are freed (the entity left, or is no longer tracked).
    for (let s = 0; s < MAX_TRAILS; s++) {
      if (this.length[s] > 0 && this.seen[s] !== now) {
        this.slots.delete(this.owner[s]);
        this.length[s] = 0;
      }
    }
  }

  /** How many entities have a trail of at least two points. */
  drawn(): number {
    let n = 0;
    for (let s = 0; s < MAX_TRAILS; s++) if (this.length[s] >= 2) n++;
    return n;
  }

  /** Appends every trail as line segments fading from the entity's colour to the background. */
  draw(lines: LineBuffer): void {
    const bg = COLORS.background;
    for (let s = 0; s < MAX_TRAILS; s++) {
      const n = this.length[s];
      if (n < 2) continue;
      lines.reserve(2 * (n - 1));
      entityColor(this.owner[s], this.color, 0);
      const c = this.color;
      for (let k = 1; k < n; k++) {
        // k-th oldest to (k+1)-th oldest; brighter towards the newest point.
        const a = (this.head[s] - n + k - 1 + TRAIL_POINTS) % TRAIL_POINTS;
        const b = (a + 1) % TRAIL_POINTS;
        const fa = (k - 1) / (n - 1), fb = k / (n - 1);
        const pa = (s * TRAIL_POINTS + a) * 3, pb = (s * TRAIL_POINTS + b) * 3;
        const p = this.points;
        lines.vertex(p[pa], p[pa + 1], p[pa + 2], bg[0] + (c[0] - bg[0]) * fa * 0.8,
          bg[1] + (c[1] - bg[1]) * fa * 0.8, bg[2] + (c[2] - bg[2]) * fa * 0.8);
        lines.vertex(p[pb], p[pb + 1], p[pb + 2], bg[0] + (c[0] - bg[0]) * fb * 0.8,
          bg[1] + (c[1] - bg[1]) * fb * 0.8, bg[2] + (c[2] - bg[2]) * fb * 0.8);
      }
    }
  }

  private record(e: number, m: Float32Array, o: number, now: number): void {
    let s = this.slots.get(e);
    if (s === undefined) {
      s = this.length.indexOf(0);
      if (s < 0) return;
      this.slots.set(e, s);
      this.owner[s] = e;
      this.head[s] = 0;
    }
    this.seen[s] = now;
    const x = m[o + 12], y = m[o + 13], z = m[o + 14];
    const p = this.points;
    if (this.length[s] > 0) {
      const last = (s * TRAIL_POINTS + ((this.head[s] - 1 + TRAIL_POINTS) % TRAIL_POINTS)) * 3;
      if (Math.abs(p[last] - x) + Math.abs(p[last + 1] - y) + Math.abs(p[last + 2] - z) < 1e-4) return;
    }
    const at = (s * TRAIL_POINTS + this.head[s]) * 3;
    p[at] = x;
    p[at + 1] = y;
    p[at + 2] = z;
    this.head[s] = (this.head[s] + 1) % TRAIL_POINTS;
    this.length[s] = Math.min(TRAIL_POINTS, this.length[s] + 1);
  }
}

/** Index of `e` in the sorted first `count` entries of `entities`, or -1. */
export function indexOf(entities: Uint32Array, count: number, e: number): number {
  let lo = 0;
  let hi = count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = entities[mid];
    if (v === e) return mid;
    if (v < e) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** At most this many labels are shown (all entities of a scene this small, else the selected). */
export const MAX_LABELS = 40;

/** HTML labels over the canvas, one per labelled entity, from a fixed pool of elements. */
export class Labels {
  private readonly pool: HTMLDivElement[] = [];
  private readonly text: string[] = [];
  private readonly at = new Float32Array(MAX_LABELS * 2);
  private used = 0;

  constructor(readonly root: HTMLElement) {
    for (let i = 0; i < MAX_LABELS; i++) {
      const el = document.createElement("div");
      el.className = "label";
      el.style.display = "none";
      root.appendChild(el);
      this.pool.push(el);
      this.text.push("");
    }
  }

  begin(): void {
    this.used = 0;
  }

  /** Shows `text` at canvas pixel (x, y) (the label's lower-left corner, a little above). */
  show(text: string, x: number, y: number, selected: boolean): void {
    if (this.used >= MAX_LABELS) return;
    const i = this.used++;
    const el = this.pool[i];
    if (this.text[i] !== text) {
      this.text[i] = text;
      el.textContent = text;
    }
    el.classList.toggle("sel", selected);
    if (el.style.display !== "") el.style.display = "";
    if (Math.abs(this.at[2 * i] - x) >= 0.5 || Math.abs(this.at[2 * i + 1] - y) >= 0.5) {
      this.at[2 * i] = x;
      this.at[2 * i + 1] = y;
      el.style.transform = `translate(${Math.round(x + 6)}px, ${Math.round(y - 18)}px)`;
    }
  }

  end(): void {
    for (let i = this.used; i < MAX_LABELS; i++) {
      if (this.pool[i].style.display !== "none") this.pool[i].style.display = "none";
    }
  }
}
