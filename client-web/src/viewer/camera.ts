// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's orbit camera (docs/WEB.md section 3): yaw / pitch / distance around a
// target, mouse drag to orbit, shift- or right-drag to pan, wheel to zoom; automatic framing
// that follows the scene's bounds until the user moves the camera ("F" turns it back on); and
// the view-projection matrix. The scene is left-handed (docs/CONVENTIONS.md): the camera works
// in WebGL's right-handed space and its view-projection ends with S = diag(1, 1, -1, 1), the
// Z mirror that docs/CONVENTIONS.md tells right-handed renderers to apply, so scene points go
// in as they are and appear where a left-handed engine shows them. `target` and eye() are in
// scene (left-handed) coordinates.

/** Vertical field of view, radians. */
export const FOV_Y = (50 * Math.PI) / 180;

export class OrbitCamera {
  // Orbit angles of the right-handed view: eye = target + distance * (cos p sin y, sin p,
  // cos p cos y) in right-handed coordinates. The default looks from -X, -Z of the scene.
  yaw = -0.8;
  pitch = 0.55;
  distance = 30;
  /** The point looked at, scene coordinates. */
  target: [number, number, number] = [0, 0, 0];
  /** Follow the scene's bounds (off once the user orbits, pans or zooms; "F" turns it on). */
  autoFrame = true;
  private framedOnce = false;
  private goalTarget: [number, number, number] = [0, 0, 0];
  private goalDistance = 30;
  // The box being framed: it takes in new bounds at once and lets go of old ones slowly, so
  // orbiting bodies do not make the view breathe.
  private readonly boxMin = new Float64Array(3);
  private readonly boxMax = new Float64Array(3);
  private readonly proj = new Float32Array(16);
  private readonly view = new Float32Array(16);

  attach(canvas: HTMLCanvasElement): void {
    let last: [number, number] | null = null;
    let panning = false;
    let moved = false;
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    canvas.addEventListener("pointerdown", (e) => {
      last = [e.clientX, e.clientY];
      panning = e.button === 2 || e.shiftKey;
      moved = false;
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointerup", () => (last = null));
    canvas.addEventListener("pointermove", (e) => {
      if (!last) return;
      const dx = e.clientX - last[0];
      const dy = e.clientY - last[1];
      if (!moved && Math.abs(dx) + Math.abs(dy) < 3) return; // a click, not a drag
      moved = true;
      last = [e.clientX, e.clientY];
      this.autoFrame = false;
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
        this.autoFrame = false;
        this.distance = Math.max(0.5, Math.min(1e5, this.distance * Math.exp(e.deltaY * 0.001)));
      },
      { passive: false },
    );
  }

  /**
   * Frames the bounding box [min, max] (scene coordinates) when auto-framing is on: the first
   * time at once, then easing towards it so the view follows a moving scene smoothly.
   * `aspect` is the viewport's width / height. `immediate` jumps (the "F" key).
   */
  follow(min: ArrayLike<number>, max: ArrayLike<number>, aspect: number, immediate = false): void {
    if (!this.autoFrame) return;
    const reset = immediate || !this.framedOnce;
    let radius2 = 0;
    for (let k = 0; k < 3; k++) {
      const lo = this.boxMin, hi = this.boxMax;
      lo[k] = reset || min[k] < lo[k] ? min[k] : lo[k] + (min[k] - lo[k]) * 0.002;
      hi[k] = reset || max[k] > hi[k] ? max[k] : hi[k] + (max[k] - hi[k]) * 0.002;
      this.goalTarget[k] = (lo[k] + hi[k]) / 2;
      radius2 += ((hi[k] - lo[k]) / 2) ** 2;
    }
    const radius = Math.max(Math.sqrt(radius2), 1); // the box's half diagonal
    const halfFov = Math.min(FOV_Y / 2, Math.atan(Math.tan(FOV_Y / 2) * aspect));
    this.goalDistance = (radius / Math.sin(halfFov)) * 1.05;
    const k = reset ? 1 : 0.08;
    this.framedOnce = true;
    for (let i = 0; i < 3; i++) this.target[i] += (this.goalTarget[i] - this.target[i]) * k;
    this.distance += (this.goalDistance - this.distance) * k;
  }

  /** Looks from `eye` at `target` (scene coordinates); turns auto-framing off. */
  lookFrom(eye: ArrayLike<number>, target: ArrayLike<number>): void {
    this.autoFrame = false;
    this.target = [target[0], target[1], target[2]];
    // The offset in right-handed coordinates (z mirrored).
    const ox = eye[0] - target[0];
    const oy = eye[1] - target[1];
    const oz = -(eye[2] - target[2]);
    this.distance = Math.max(1e-3, Math.hypot(ox, oy, oz));
    this.pitch = Math.asin(Math.max(-1, Math.min(1, oy / this.distance)));
    this.yaw = Math.atan2(ox, oz);
  }

  /** The eye, scene coordinates. */
  eye(): [number, number, number] {
    const cp = Math.cos(this.pitch);
    return [
      this.target[0] + this.distance * cp * Math.sin(this.yaw),
      this.target[1] + this.distance * Math.sin(this.pitch),
      this.target[2] - this.distance * cp * Math.cos(this.yaw), // mirrored back to the scene
    ];
  }

  /**
   * projection * view * S for a viewport of the given aspect ratio, written into `out`
   * (column-major): scene points in, clip space out.
   */
  viewProjection(aspect: number, out: Float32Array): Float32Array {
    const cp = Math.cos(this.pitch);
    const sp = Math.sin(this.pitch);
    // Right-handed look-at: f = -offset / |offset|, s = f x up, u = s x f.
    const fx = -cp * Math.sin(this.yaw), fy = -sp, fz = -cp * Math.cos(this.yaw);
    let sx = -fz, sz = fx; // f x (0, 1, 0) = (-fz, 0, fx)
    const sl = Math.hypot(sx, sz) || 1;
    sx /= sl;
    sz /= sl;
    const ux = -sz * fy, uy = sz * fx - sx * fz, uz = sx * fy; // s x f with s = (sx, 0, sz)
    // The eye in right-handed coordinates.
    const ex = this.target[0] - this.distance * fx;
    const ey = this.target[1] - this.distance * fy;
    const ez = -this.target[2] - this.distance * fz;
    const v = this.view;
    v[0] = sx; v[1] = ux; v[2] = -fx; v[3] = 0;
    v[4] = 0; v[5] = uy; v[6] = -fy; v[7] = 0;
    v[8] = sz; v[9] = uz; v[10] = -fz; v[11] = 0;
    v[12] = -(sx * ex + sz * ez);
    v[13] = -(ux * ex + uy * ey + uz * ez);
    v[14] = fx * ex + fy * ey + fz * ez;
    v[15] = 1;
    // The Z mirror: view * S negates the view's third column.
    v[8] = -v[8]; v[9] = -v[9]; v[10] = -v[10]; v[11] = -v[11];
    const near = Math.max(0.01, this.distance / 1000);
    const far = this.distance * 100;
    const t = 1 / Math.tan(FOV_Y / 2);
    const p = this.proj;
    p.fill(0);
    p[0] = t / aspect;
    p[5] = t;
    p[10] = (far + near) / (near - far);
    p[11] = -1;
    p[14] = (2 * far * near) / (near - far);
    return multiplyInto(p, v, out);
  }

  private pan(dx: number, dy: number): void {
    // Screen right and up in right-handed coordinates, then z mirrored into the scene.
    const cp = Math.cos(this.pitch);
    const sp = Math.sin(this.pitch);
    const fx = -cp * Math.sin(this.yaw), fy = -sp, fz = -cp * Math.cos(this.yaw);
    const sl = Math.hypot(fz, fx) || 1;
    const sx = -fz / sl, sz = fx / sl;
    const ux = -sz * fy, uy = sz * fx - sx * fz, uz = sx * fy;
    const k = this.distance * 0.0015;
    this.target[0] += (-sx * dx + ux * dy) * k;
    this.target[1] += uy * dy * k;
    this.target[2] -= (-sz * dx + uz * dy) * k;
  }
}

/** out = a * b, column-major 4x4 (out must not alias a or b). */
export function multiplyInto(a: ArrayLike<number>, b: ArrayLike<number>, out: Float32Array): Float32Array {
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let v = 0;
      for (let k = 0; k < 4; k++) v += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = v;
    }
  }
  return out;
}

/** a * b, column-major 4x4, in a new array. */
export function multiply(a: ArrayLike<number>, b: ArrayLike<number>): Float32Array {
  return multiplyInto(a, b, new Float32Array(16));
}
