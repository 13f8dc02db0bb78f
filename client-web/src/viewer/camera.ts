// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's orbit camera: yaw / pitch / distance around a target, mouse drag to orbit,
// shift- or right-drag to pan, wheel to zoom, and the view-projection matrix (column-major).

export class OrbitCamera {
  yaw = 0.8;
  pitch = 0.6;
  distance = 30;
  target: [number, number, number] = [0, 0, 0];
  private fitted = false;

  attach(canvas: HTMLCanvasElement): void {
    let last: [number, number] | null = null;
    let panning = false;
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    canvas.addEventListener("pointerdown", (e) => {
      last = [e.clientX, e.clientY];
      panning = e.button === 2 || e.shiftKey;
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointerup", () => (last = null));
    canvas.addEventListener("pointermove", (e) => {
      if (!last) return;
      const dx = e.clientX - last[0];
      const dy = e.clientY - last[1];
      last = [e.clientX, e.clientY];
      if (panning) this.pan(dx, dy);
      else {
        this.yaw -= dx * 0.006;
        this.pitch = Math.max(-1.5, Math.min(1.5, this.pitch + dy * 0.006));
      }
    });
    canvas.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        this.distance = Math.max(0.5, Math.min(5000, this.distance * Math.exp(e.deltaY * 0.001)));
      },
      { passive: false },
    );
  }

  /** Frames the given points once (the first time the scene has entities). */
  fitOnce(points: Float32Array, count: number): void {
    if (this.fitted || count === 0) return;
    this.fitted = true;
    const min = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < count; i++) {
      for (let k = 0; k < 3; k++) {
        const v = points[16 * i + 12 + k];
        if (!Number.isFinite(v)) continue;
        min[k] = Math.min(min[k], v);
        max[k] = Math.max(max[k], v);
      }
    }
    this.target = [0, 1, 2].map((k) => (min[k] + max[k]) / 2) as [number, number, number];
    const extent = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2], 2);
    this.distance = extent * 1.2;
  }

  eye(): [number, number, number] {
    const cp = Math.cos(this.pitch);
    return [
      this.target[0] + this.distance * cp * Math.sin(this.yaw),
      this.target[1] + this.distance * Math.sin(this.pitch),
      this.target[2] + this.distance * cp * Math.cos(this.yaw),
    ];
  }

  /** projection * view for a viewport of the given aspect ratio. */
  viewProjection(aspect: number): Float32Array {
    const eye = this.eye();
    const f = normalize(sub(this.target, eye));
    const s = normalize(cross(f, [0, 1, 0]));
    const u = cross(s, f);
    const view = [
      s[0], u[0], -f[0], 0,
      s[1], u[1], -f[1], 0,
      s[2], u[2], -f[2], 0,
      -dot(s, eye), -dot(u, eye), dot(f, eye), 1,
    ];
    const near = Math.max(0.01, this.distance / 1000);
    const far = this.distance * 100;
    const t = 1 / Math.tan((50 * Math.PI) / 360);
    const proj = [t / aspect, 0, 0, 0, 0, t, 0, 0, 0, 0, (far + near) / (near - far), -1, 0, 0,
      (2 * far * near) / (near - far), 0];
    return multiply(proj, view);
  }

  private pan(dx: number, dy: number): void {
    const eye = this.eye();
    const f = normalize(sub(this.target, eye));
    const s = normalize(cross(f, [0, 1, 0]));
    const u = cross(s, f);
    const k = this.distance * 0.0015;
    for (let i = 0; i < 3; i++) this.target[i] += (-s[i] * dx + u[i] * dy) * k;
  }
}

type V3 = [number, number, number] | number[];
const sub = (a: V3, b: V3) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: V3, b: V3) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const normalize = (a: V3) => {
  const l = Math.hypot(a[0], a[1], a[2]) || 1;
  return [a[0] / l, a[1] / l, a[2] / l];
};

/** a * b, column-major 4x4. */
export function multiply(a: ArrayLike<number>, b: ArrayLike<number>): Float32Array {
  const out = new Float32Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let v = 0;
      for (let k = 0; k < 4; k++) v += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = v;
    }
  }
  return out;
}
