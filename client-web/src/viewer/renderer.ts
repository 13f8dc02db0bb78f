// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's WebGL2 drawing (docs/WEB.md): one instanced draw of shaded boxes, each
// transformed by its entity's world matrix (so a box shows the entity's scale and rotation),
// and one draw of lines (parent links, the ground grid, trails, the selected entity's axis
// gizmo). The view-projection it is given carries the Z mirror (camera.ts). Uploads read the
// caller's reused buffers by offset and length: nothing is allocated per frame.
import { COLORS } from "./overlay.js";

const BOX_VS = `#version 300 es
layout(location=0) in vec3 pos;
layout(location=1) in vec3 normal;
layout(location=2) in vec4 m0;
layout(location=3) in vec4 m1;
layout(location=4) in vec4 m2;
layout(location=5) in vec4 m3;
layout(location=6) in vec3 color;
uniform mat4 viewProj;
uniform float boxScale;
out vec3 vColor;
void main() {
  mat4 world = mat4(m0, m1, m2, m3);
  vec3 n = normalize(mat3(world) * normal);
  float light = 0.35 + 0.65 * max(dot(n, normalize(vec3(0.4, 0.9, 0.3))), 0.0);
  vColor = color * light;
  gl_Position = viewProj * world * vec4(pos * boxScale, 1.0);
}`;
const LINE_VS = `#version 300 es
layout(location=0) in vec3 pos;
layout(location=1) in vec3 color;
uniform mat4 viewProj;
out vec3 vColor;
void main() { vColor = color; gl_Position = viewProj * vec4(pos, 1.0); }`;
const FS = `#version 300 es
precision mediump float;
in vec3 vColor;
out vec4 outColor;
void main() { outColor = vec4(vColor, 1.0); }`;

/** Half the side of an entity's box, in its local units: a unit cube, as a left-handed
 * engine's default cube (Unity's), so a box is as big as the entity's scale says. */
const HALF = 0.5;

export class Renderer {
  private readonly gl: WebGL2RenderingContext;
  private readonly boxProgram: WebGLProgram;
  private readonly lineProgram: WebGLProgram;
  private readonly boxVao: WebGLVertexArrayObject;
  private readonly lineVao: WebGLVertexArrayObject;
  private readonly matrixBuffer: WebGLBuffer;
  private readonly colorBuffer: WebGLBuffer;
  private readonly lineBuffer: WebGLBuffer;
  private boxVertices = 0;
  private readonly boxViewProj: WebGLUniformLocation | null;
  private readonly boxScale: WebGLUniformLocation | null;
  private readonly lineViewProj: WebGLUniformLocation | null;

  constructor(readonly canvas: HTMLCanvasElement) {
    const gl = canvas.getContext("webgl2", { antialias: true });
    if (!gl) throw new Error("this browser has no WebGL2");
    this.gl = gl;
    this.boxProgram = program(gl, BOX_VS, FS);
    this.lineProgram = program(gl, LINE_VS, FS);
    this.boxViewProj = gl.getUniformLocation(this.boxProgram, "viewProj");
    this.lineViewProj = gl.getUniformLocation(this.lineProgram, "viewProj");
    this.boxScale = gl.getUniformLocation(this.boxProgram, "boxScale");

    this.boxVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.boxVao);
    const cube = cubeVertices();
    this.boxVertices = cube.length / 6;
    const cubeBuffer = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, cubeBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, cube, gl.STATIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 24, 0);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 24, 12);
    this.matrixBuffer = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.matrixBuffer);
    for (let i = 0; i < 4; i++) {
      gl.enableVertexAttribArray(2 + i);
      gl.vertexAttribPointer(2 + i, 4, gl.FLOAT, false, 64, 16 * i);
      gl.vertexAttribDivisor(2 + i, 1);
    }
    this.colorBuffer = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.colorBuffer);
    gl.enableVertexAttribArray(6);
    gl.vertexAttribPointer(6, 3, gl.FLOAT, false, 12, 0);
    gl.vertexAttribDivisor(6, 1);

    this.lineVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.lineVao);
    this.lineBuffer = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.lineBuffer);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 24, 0);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 24, 12);
    gl.bindVertexArray(null);
  }

  /**
   * Draws `count` boxes (matrices: 16 floats each, column-major; colors: 3 floats each), each
   * a unit cube times `boxScale` (1: true size), and `lineCount` line vertices (x y z r g b).
   */
  draw(viewProj: Float32Array, matrices: Float32Array, colors: Float32Array, count: number,
       lines: Float32Array, lineCount: number, boxScale = 1): void {
    const gl = this.gl;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.floor(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.floor(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    gl.viewport(0, 0, w, h);
    const bg = COLORS.background;
    gl.clearColor(bg[0], bg[1], bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);

    gl.useProgram(this.lineProgram);
    gl.uniformMatrix4fv(this.lineViewProj, false, viewProj);
    gl.bindVertexArray(this.lineVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.lineBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, lines, gl.STREAM_DRAW, 0, lineCount * 6);
    gl.drawArrays(gl.LINES, 0, lineCount);

    if (count > 0) {
      gl.useProgram(this.boxProgram);
      gl.uniformMatrix4fv(this.boxViewProj, false, viewProj);
      gl.uniform1f(this.boxScale, boxScale);
      gl.bindVertexArray(this.boxVao);
      gl.bindBuffer(gl.ARRAY_BUFFER, this.matrixBuffer);
      gl.bufferData(gl.ARRAY_BUFFER, matrices, gl.STREAM_DRAW, 0, count * 16);
      gl.bindBuffer(gl.ARRAY_BUFFER, this.colorBuffer);
      gl.bufferData(gl.ARRAY_BUFFER, colors, gl.STREAM_DRAW, 0, count * 3);
      gl.drawArraysInstanced(gl.TRIANGLES, 0, this.boxVertices, count);
    }
    gl.bindVertexArray(null);
  }
}

function program(gl: WebGL2RenderingContext, vs: string, fs: string): WebGLProgram {
  const p = gl.createProgram()!;
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]] as const) {
    const s = gl.createShader(type)!;
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`shader: ${gl.getShaderInfoLog(s)}`);
    gl.attachShader(p, s);
  }
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`program: ${gl.getProgramInfoLog(p)}`);
  return p;
}

// 36 vertices (position, normal) of a cube of half side HALF.
function cubeVertices(): Float32Array {
  const out: number[] = [];
  const faces: [number[], number[], number[]][] = [
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[-1, 0, 0], [0, 0, 1], [0, 1, 0]],
    [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
    [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
    [[0, 0, 1], [1, 0, 0], [0, 1, 0]],
    [[0, 0, -1], [0, 1, 0], [1, 0, 0]],
  ];
  for (const [n, u, v] of faces) {
    const corner = (a: number, b: number) => [0, 1, 2].map((k) => (n[k] + a * u[k] + b * v[k]) * HALF);
    const quad = [corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, -1), corner(1, 1), corner(-1, 1)];
    for (const p of quad) out.push(...p, ...n);
  }
  return new Float32Array(out);
}
