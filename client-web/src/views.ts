// SPDX-License-Identifier: Apache-2.0
// Owns the reused result buffers of the bulk copies (docs/WEB.md "No allocation per frame"):
// one malloc'd area in wasm memory per kind of copy, grown geometrically and kept, with typed
// array views over it that are made again only when the area grows or the wasm memory grows
// (which detaches every old view). A frame therefore allocates nothing in JavaScript: the
// lists are views with a `count`, not exact-length copies.
import type { ScenecrdtModule } from "./wasm.js";

/** Entities of one list: `entities[0 .. count - 1]` are valid (the view may be longer). */
export interface EntityList {
  count: number;
  entities: Uint32Array;
}

/**
 * Entities with their world matrices: entity `entities[i]` has the column-major matrix
 * `matrices[16 * i .. 16 * i + 15]`, for i < count. Views into wasm memory, valid until the
 * next call that fills the same list (copy out what must outlive it).
 */
export interface MatrixList extends EntityList {
  matrices: Float32Array;
}

/** SC_E_BUFFER_TOO_SMALL: *count holds the number needed, nothing was written. */
const SC_E_BUFFER_TOO_SMALL = -3;

/** A C ABI bulk copy: fills (entities, matrices?) up to `capacity` and writes the count. */
export type IdsCopy = (rt: number, ents: number, cap: number, count: number) => number;
export type WorldCopyFn = (rt: number, ents: number, mats: number, cap: number, count: number) => number;

/** One reusable list in wasm memory (entities, and matrices when `withMatrices`). */
export class HeapList implements MatrixList {
  count = 0;
  entities: Uint32Array;
  matrices: Float32Array;
  private ptr = 0; // entities at ptr, matrices at ptr + 4 * capacity, count at ptr + 68 * capacity
  private capacity = 0;
  private buffer: ArrayBufferLike | null = null;

  constructor(
    private readonly mod: ScenecrdtModule,
    private readonly withMatrices: boolean,
  ) {
    this.entities = new Uint32Array(0);
    this.matrices = new Float32Array(0);
  }

  /**
   * Runs `copy` into this list, growing it (and retrying once) when the C ABI says the list
   * is too small. Returns the C ABI status (>= 0, or the error for the caller to throw).
   * No closure or array is made: this runs every frame.
   */
  fillIds(rt: number, copy: IdsCopy, hint: number): number {
    this.reserve(hint);
    let status = copy(rt, this.ptr, this.capacity, this.countPtr());
    if (status === SC_E_BUFFER_TOO_SMALL) {
      this.reserve(this.mod.HEAPU32[this.countPtr() >> 2]);
      status = copy(rt, this.ptr, this.capacity, this.countPtr());
    }
    return this.done(status);
  }

  fillWorld(rt: number, copy: WorldCopyFn, hint: number): number {
    this.reserve(hint);
    let status = copy(rt, this.ptr, this.ptr + 4 * this.capacity, this.capacity, this.countPtr());
    if (status === SC_E_BUFFER_TOO_SMALL) {
      this.reserve(this.mod.HEAPU32[this.countPtr() >> 2]);
      status = copy(rt, this.ptr, this.ptr + 4 * this.capacity, this.capacity, this.countPtr());
    }
    return this.done(status);
  }

  /** Frees the area (the views become empty). */
  free(): void {
    if (this.ptr) this.mod._free(this.ptr);
    this.ptr = 0;
    this.capacity = 0;
    this.count = 0;
    this.entities = new Uint32Array(0);
    this.matrices = new Float32Array(0);
    this.buffer = null;
  }

  private done(status: number): number {
    this.count = status < 0 ? 0 : this.mod.HEAPU32[this.countPtr() >> 2];
    this.refreshViews();
    return status;
  }

  private countPtr(): number {
    return this.ptr + (this.withMatrices ? 68 : 4) * this.capacity;
  }

  private reserve(entries: number): void {
    if (this.ptr !== 0 && entries <= this.capacity) return;
    const capacity = Math.max(entries, this.capacity * 2, 64);
    const bytes = (this.withMatrices ? 68 : 4) * capacity + 8;
    const ptr = this.mod._malloc(bytes);
    if (ptr === 0) throw new Error(`wasm malloc(${bytes}) failed`);
    if (this.ptr) this.mod._free(this.ptr);
    this.ptr = ptr;
    this.capacity = capacity;
    this.buffer = null; // views made again below
  }

  private refreshViews(): void {
    const heap = this.mod.HEAPU8.buffer;
    if (this.buffer === heap) return;
    this.buffer = heap;
    this.entities = new Uint32Array(heap, this.ptr, this.capacity);
    this.matrices = this.withMatrices
      ? new Float32Array(heap, this.ptr + 4 * this.capacity, 16 * this.capacity)
      : new Float32Array(0);
  }
}
