// SPDX-License-Identifier: Apache-2.0
// Owns the component reads of the wasm runtime (docs/COMPONENTS.md, docs/WEB.md): one
// component's payload (a copy, or into a caller's buffer without allocating), the values of a
// grow-only set, and the changed / added / removed (entity, component) lists of the last
// update, as copies or as reused views into wasm memory (no allocation per frame, like
// src/views.ts). Over the C ABI's sc_runtime_get_component, sc_runtime_copy_append_values and
// sc_runtime_copy_{changed,added,removed}_components.
import type { ScenecrdtModule } from "./wasm.js";

/** The status of sc_runtime_get_component on a grow-only (APPEND_VALUE) set (capi/scenecrdt.h). */
export const SC_E_GROW_ONLY = -13;
const SC_E_NOT_FOUND = -2;
const SC_E_BUFFER_TOO_SMALL = -3;
const APPEND_RECORD_HEADER_BYTES = 8;

/**
 * (entity, component) pairs of one list: `entities[i]` with `components[i]` for i < count,
 * sorted by entity then component. Views into wasm memory, valid until the next call that
 * fills the same list.
 */
export interface ComponentList {
  count: number;
  entities: Uint32Array;
  components: Uint32Array;
}

/** The three component lists of the last update (docs/COMPONENTS.md). */
export interface ComponentChanges {
  /** A value or set now whose state changed since the update before (added ones included). */
  changed: ComponentList;
  /** Absent at the update before, present now. */
  added: ComponentList;
  /** Present at the update before, absent now (deleted, or the entity deleted). */
  removed: ComponentList;
}

/** One value of a grow-only set (a copy). */
export interface AppendValue {
  timestamp: number;
  bytes: Uint8Array;
}

/** The pairs of a list, copied out of wasm memory. */
export interface ComponentPairs {
  entities: Uint32Array;
  components: Uint32Array;
}

export type PairCopy = (rt: number, ents: number, comps: number, cap: number, count: number) => number;

/** One reusable pair list in wasm memory (entities, components, count). */
export class HeapPairList implements ComponentList {
  count = 0;
  entities: Uint32Array = new Uint32Array(0);
  components: Uint32Array = new Uint32Array(0);
  private ptr = 0; // entities at ptr, components at ptr + 4 * capacity, count after them
  private capacity = 0;
  private buffer: ArrayBufferLike | null = null;

  constructor(private readonly mod: ScenecrdtModule) {}

  /** Runs `copy` into the list, growing it and retrying once when too small. The status. */
  fill(rt: number, copy: PairCopy): number {
    this.reserve(0);
    let status = copy(rt, this.ptr, this.ptr + 4 * this.capacity, this.capacity, this.countPtr());
    if (status === SC_E_BUFFER_TOO_SMALL) {
      this.reserve(this.mod.HEAPU32[this.countPtr() >> 2]);
      status = copy(rt, this.ptr, this.ptr + 4 * this.capacity, this.capacity, this.countPtr());
    }
    this.count = status < 0 ? 0 : this.mod.HEAPU32[this.countPtr() >> 2];
    const heap = this.mod.HEAPU8.buffer;
    if (this.buffer !== heap) {
      this.buffer = heap;
      this.entities = new Uint32Array(heap, this.ptr, this.capacity);
      this.components = new Uint32Array(heap, this.ptr + 4 * this.capacity, this.capacity);
    }
    return status;
  }

  free(): void {
    if (this.ptr) this.mod._free(this.ptr);
    this.ptr = 0;
    this.capacity = 0;
    this.count = 0;
    this.entities = new Uint32Array(0);
    this.components = new Uint32Array(0);
    this.buffer = null;
  }

  private countPtr(): number {
    return this.ptr + 8 * this.capacity;
  }

  private reserve(entries: number): void {
    if (this.ptr !== 0 && entries <= this.capacity) return;
    const capacity = Math.max(entries, this.capacity * 2, 64);
    const ptr = this.mod._malloc(8 * capacity + 8);
    if (ptr === 0) throw new Error(`wasm malloc(${8 * capacity + 8}) failed`);
    if (this.ptr) this.mod._free(this.ptr);
    this.ptr = ptr;
    this.capacity = capacity;
    this.buffer = null; // views made again by fill
  }
}

/**
 * The component reads of one sc_runtime (WasmRuntime forwards to it). `check` throws the
 * ScenecrdtError of a negative status (with `message`, or sc_last_error()).
 */
export class ComponentReader {
  private scratch = 0;
  private scratchBytes = 0;
  private readonly lists: HeapPairList[];
  readonly changes: ComponentChanges;

  constructor(
    private readonly mod: ScenecrdtModule,
    private readonly handle: () => number,
    private readonly check: (status: number, message?: string) => void,
  ) {
    this.lists = [new HeapPairList(mod), new HeapPairList(mod), new HeapPairList(mod)];
    this.changes = { changed: this.lists[0], added: this.lists[1], removed: this.lists[2] };
    this.reserve(4096);
  }

  free(): void {
    for (const l of this.lists) l.free();
    if (this.scratch) this.mod._free(this.scratch);
    this.scratch = 0;
    this.scratchBytes = 0;
  }

  /** The value's bytes, a copy; null when absent. Throws ScenecrdtError(-13) for a grow-only set. */
  get(entity: number, id: number): Uint8Array | null {
    const len = this.read(entity, id);
    if (len < 0) return null;
    return this.mod.HEAPU8.slice(this.scratch + 8, this.scratch + 8 + len);
  }

  /** The value's size (-1 when absent); its bytes are written to `out` when it fits. */
  getInto(entity: number, id: number, out: Uint8Array): number {
    const len = this.read(entity, id);
    if (len < 0 || len > out.length) return len;
    const heap = this.mod.HEAPU8;
    const from = this.scratch + 8;
    for (let i = 0; i < len; i++) out[i] = heap[from + i]; // no subarray object: no allocation
    return len;
  }

  /** The values of a grow-only set, ascending by (timestamp, bytes); null when there is none. */
  appendValues(entity: number, id: number): AppendValue[] | null {
    const m = this.mod;
    const rt = this.handle();
    let p = this.reserve(8);
    let status = m._sc_runtime_copy_append_values(rt, entity >>> 0, id >>> 0, p + 8, this.scratchBytes - 8, p);
    if (status === SC_E_NOT_FOUND) return null;
    if (status === SC_E_BUFFER_TOO_SMALL) {
      p = this.reserve(8 + m.HEAPU32[p >> 2]);
      status = m._sc_runtime_copy_append_values(rt, entity >>> 0, id >>> 0, p + 8, this.scratchBytes - 8, p);
    }
    this.check(status);
    const total = this.mod.HEAPU32[p >> 2];
    const view = new DataView(this.mod.HEAPU8.buffer, p + 8, total);
    const out: AppendValue[] = [];
    for (let at = 0; at + APPEND_RECORD_HEADER_BYTES <= total;) {
      const timestamp = view.getUint32(at, true);
      const n = view.getUint32(at + 4, true);
      const from = p + 8 + at + APPEND_RECORD_HEADER_BYTES;
      out.push({ timestamp, bytes: this.mod.HEAPU8.slice(from, from + n) });
      at += APPEND_RECORD_HEADER_BYTES + n;
    }
    return out;
  }

  /** Fills the three reused lists of the last update (no allocation once grown). */
  fillViews(): ComponentChanges {
    const m = this.mod;
    const rt = this.handle();
    this.check(this.lists[0].fill(rt, m._sc_runtime_copy_changed_components));
    this.check(this.lists[1].fill(rt, m._sc_runtime_copy_added_components));
    this.check(this.lists[2].fill(rt, m._sc_runtime_copy_removed_components));
    return this.changes;
  }

  /** One list of the last update, copied. */
  copy(which: "changed" | "added" | "removed"): ComponentPairs {
    const m = this.mod;
    const fn = which === "changed" ? m._sc_runtime_copy_changed_components
      : which === "added" ? m._sc_runtime_copy_added_components : m._sc_runtime_copy_removed_components;
    const list = new HeapPairList(m);
    try {
      this.check(list.fill(this.handle(), fn));
      return { entities: list.entities.slice(0, list.count), components: list.components.slice(0, list.count) };
    } finally {
      list.free();
    }
  }

  // The value into scratch + 8 (its length at scratch): the length, or -1 when absent.
  private read(entity: number, id: number): number {
    const m = this.mod;
    const rt = this.handle();
    let p = this.reserve(8);
    let status = m._sc_runtime_get_component(rt, entity >>> 0, id >>> 0, p + 8, this.scratchBytes - 8, p);
    if (status === SC_E_NOT_FOUND) return -1;
    if (status === SC_E_BUFFER_TOO_SMALL) {
      p = this.reserve(8 + m.HEAPU32[p >> 2]);
      status = m._sc_runtime_get_component(rt, entity >>> 0, id >>> 0, p + 8, this.scratchBytes - 8, p);
    }
    if (status === SC_E_GROW_ONLY) {
      this.check(status, `getComponent: component ${id >>> 0} of entity ${entity >>> 0} is a grow-only set ` +
        "(APPEND_VALUE): read it with getAppendValues");
    }
    this.check(status);
    return this.mod.HEAPU32[p >> 2];
  }

  // The scratch area, at least `bytes` long (8-aligned by malloc).
  private reserve(bytes: number): number {
    if (bytes > this.scratchBytes) {
      if (this.scratch) this.mod._free(this.scratch);
      const size = Math.max(bytes, this.scratchBytes * 2, 4096);
      this.scratch = this.mod._malloc(size);
      if (this.scratch === 0) throw new Error(`wasm malloc(${size}) failed`);
      this.scratchBytes = size;
    }
    return this.scratch;
  }
}
