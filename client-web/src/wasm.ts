// SPDX-License-Identifier: Apache-2.0
// Owns the typed TypeScript view of the WebAssembly module (wasm/, docs/WEB.md): loading it,
// and WasmRuntime, one sc_runtime replica behind the C ABI (capi/scenecrdt.h, docs/C-ABI.md)
// with its bulk copies (allocating copies for tools and tests, reused views for render loops,
// src/views.ts), node info, Lamport writes and deletes, interpolation, and the component reads
// of src/components.ts. Struct offsets match the static_asserts of wasm/module.cc.
import { type AppendValue, type ComponentChanges, type ComponentPairs, ComponentReader } from "./components.js";
import { type EntityList, HeapList, type MatrixList } from "./views.js";

/** The emscripten module's exports this file uses (MODULARIZE build of wasm/CMakeLists.txt). */
export interface ScenecrdtModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  HEAP32: Int32Array;
  HEAPF32: Float32Array;
  UTF8ToString(ptr: number): string;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _sc_abi_version(): number;
  _sc_last_error(): number;
  _sc_runtime_create(): number;
  _sc_runtime_destroy(rt: number): void;
  _sc_runtime_apply(rt: number, dcl: number, len: number): number;
  _sc_runtime_apply_at(rt: number, dcl: number, len: number, recv: bigint, sender: bigint): number;
  _sc_runtime_update(rt: number): number;
  _sc_runtime_entity_count(rt: number): number;
  _sc_runtime_world_matrix(rt: number, entity: number, out: number): number;
  _sc_runtime_copy_world(rt: number, ents: number, mats: number, cap: number, count: number): number;
  _sc_runtime_copy_changed(rt: number, ents: number, cap: number, count: number): number;
  _sc_runtime_copy_changed_world(rt: number, ents: number, mats: number, cap: number, count: number): number;
  _sc_runtime_copy_added(rt: number, ents: number, cap: number, count: number): number;
  _sc_runtime_copy_removed(rt: number, ents: number, cap: number, count: number): number;
  _sc_runtime_get_transform(rt: number, entity: number, out: number): number;
  _sc_runtime_node_info(rt: number, entity: number, out: number): number;
  _sc_runtime_state_hash(rt: number, out: number, cap: number): number;
  _sc_runtime_write_transform(rt: number, e: number, t: number, out: number, cap: number, len: number): number;
  _sc_runtime_delete_transform(rt: number, e: number, out: number, cap: number, len: number): number;
  _sc_runtime_delete_entity(rt: number, e: number, out: number, cap: number, len: number): number;
  _sc_runtime_get_component(rt: number, e: number, id: number, buf: number, cap: number, len: number): number;
  _sc_runtime_copy_append_values(rt: number, e: number, id: number, buf: number, cap: number, len: number): number;
  _sc_runtime_copy_changed_components(rt: number, ents: number, comps: number, cap: number, count: number): number;
  _sc_runtime_copy_added_components(rt: number, ents: number, comps: number, cap: number, count: number): number;
  _sc_runtime_copy_removed_components(rt: number, ents: number, comps: number, cap: number, count: number): number;
  _sc_interpolation_options_default(out: number): number;
  _sc_runtime_enable_interpolation(rt: number, options: number): number;
  _sc_runtime_update_interpolated(rt: number, renderUs: bigint): number;
  /** wasm/module.cc: sc_runtime_update_interpolated with the time as a double (no BigInt). */
  _scw_update_interpolated_us(rt: number, renderUs: number): number;
  _sc_runtime_interpolated_entity_count(rt: number): number;
  _sc_runtime_copy_interpolated_world(rt: number, ents: number, mats: number, cap: number, count: number): number;
  _sc_runtime_copy_interpolated_changed(rt: number, ents: number, cap: number, count: number): number;
  _sc_runtime_copy_interpolated_changed_world(rt: number, ents: number, mats: number, cap: number, count: number): number;
  _sc_runtime_interpolated_world_matrix(rt: number, entity: number, out: number): number;
  _sc_runtime_copy_interpolated_added(rt: number, ents: number, cap: number, count: number): number;
  _sc_runtime_copy_interpolated_removed(rt: number, ents: number, cap: number, count: number): number;
}

/** createScenecrdtModule from scenecrdt.js (a script tag in the page, require() in node). */
export type ModuleFactory = (options?: {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string) => string;
}) => Promise<ScenecrdtModule>;

/** A replicated Transform (component 1), as in sc_transform. */
export interface Transform {
  position: [number, number, number];
  rotation: [number, number, number, number]; // x y z w
  scale: [number, number, number];
  parent: number; // declared parent entity, 0 = root
}

/** Where an entity sits in the effective tree (sc_node_info). */
export interface NodeInfo {
  effectiveParent: number; // 0 = root; parked loop members sit at root
  declaredParent: number;
  parked: boolean; // member of a parenting loop
  placeholder: boolean; // no Transform but has children
}

/** Entities sorted by id and their column-major world matrices (16 floats each); a copy. */
export interface WorldCopy {
  entities: Uint32Array;
  matrices: Float32Array;
}

/** A C ABI call that returned a negative status; `message` is sc_last_error(). */
export class ScenecrdtError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ScenecrdtError";
  }
}

const ABI_VERSION = 1;
const SC_OK = 0;
/** The status of a refused argument, e.g. a non-finite Transform (capi/scenecrdt.h). */
export const SC_E_INVALID_ARGUMENT = -1;
const SC_E_NOT_FOUND = -2;
/** The status of a local write the CRDT rules refuse, e.g. to a deleted entity (capi/scenecrdt.h). */
export const SC_E_REFUSED = -5;
const SC_NO_SENDER_TIME = -(2n ** 63n);
const WRITE_MAX_BYTES = 68;
const TRANSFORM_BYTES = 44;
const NODE_INFO_BYTES = 20;
const INTERPOLATION_OPTIONS_BYTES = 88; // max_extrapolation_us at 72 (wasm/module.cc)

/**
 * Throws ScenecrdtError(SC_E_INVALID_ARGUMENT) when a position, rotation or scale component is
 * NaN or infinite once stored as a float32 (a finite number beyond +-3.4e38 becomes Infinity):
 * servers refuse such Transforms, so a writer that merged one would drift from everyone. The
 * check sc_runtime_write_transform makes, for writes held before a join.
 */
export function checkFiniteTransform(t: Transform, fn = "writeTransform"): void {
  const fields: [string, readonly number[]][] = [
    ["position", t.position],
    ["rotation", t.rotation],
    ["scale", t.scale],
  ];
  for (const [name, values] of fields) {
    values.forEach((v, i) => {
      if (!Number.isFinite(Math.fround(v))) {
        throw new ScenecrdtError(
          SC_E_INVALID_ARGUMENT,
          `${fn}: non_finite_transform: ${name}[${i}] is ${v} (servers refuse non-finite Transforms); nothing written`,
        );
      }
    });
  }
}

/** Loads the module; `binary` is the wasm bytes (node) or omitted (fetched next to the glue). */
export async function loadModule(
  factory: ModuleFactory,
  binary?: ArrayBuffer | Uint8Array,
  locate?: (path: string) => string,
): Promise<ScenecrdtModule> {
  const mod = await factory({ wasmBinary: binary, locateFile: locate });
  const abi = mod._sc_abi_version();
  if (abi !== ABI_VERSION) {
    throw new Error(`scenecrdt.wasm has C ABI ${abi}, this client needs ${ABI_VERSION}: rebuild both`);
  }
  return mod;
}

/** One replica in wasm memory (sc_runtime). Call destroy() when done. */
export class WasmRuntime {
  private rt: number;
  private scratch = 0; // one malloc'd area reused by every call
  private scratchBytes = 0;
  private interpolating = false;
  // The reused lists of the view reads (one per kind; see src/views.ts).
  private readonly worldList: HeapList;
  private readonly changedList: HeapList;
  private readonly addedList: HeapList;
  private readonly removedList: HeapList;
  private readonly components: ComponentReader;

  constructor(readonly mod: ScenecrdtModule) {
    this.rt = mod._sc_runtime_create();
    if (this.rt === 0) throw new ScenecrdtError(-7, mod.UTF8ToString(mod._sc_last_error()));
    this.worldList = new HeapList(mod, true);
    this.changedList = new HeapList(mod, true);
    this.addedList = new HeapList(mod, false);
    this.removedList = new HeapList(mod, false);
    this.components = new ComponentReader(mod, () => this.rt, (status, message) => this.check(status, message));
    this.reserve(4096); // the scratch area exists before any frame: reads never malloc then
  }

  destroy(): void {
    for (const l of [this.worldList, this.changedList, this.addedList, this.removedList]) l.free();
    this.components.free();
    if (this.scratch) this.mod._free(this.scratch);
    this.mod._sc_runtime_destroy(this.rt);
    this.rt = 0;
    this.scratch = 0;
  }

  /** Merges a DCL stream as `scenecrdt replay` does (all or nothing). */
  apply(dcl: Uint8Array): void {
    const p = this.copyIn(dcl);
    this.check(this.mod._sc_runtime_apply(this.rt, p, dcl.length));
  }

  /** Merges one batch of live traffic received at `receiveUs` (the render clock). */
  applyAt(dcl: Uint8Array, receiveUs: bigint): void {
    const p = this.copyIn(dcl);
    this.check(this.mod._sc_runtime_apply_at(this.rt, p, dcl.length, receiveUs, SC_NO_SENDER_TIME));
  }

  /**
   * Interpolation on (docs/INTERPOLATION.md) with the default options, except those given:
   * maxExtrapolationUs, how long motion continues past the newest batch (default 250 000).
   */
  enableInterpolation(options: { maxExtrapolationUs?: number } = {}): void {
    const p = this.reserve(INTERPOLATION_OPTIONS_BYTES);
    this.check(this.mod._sc_interpolation_options_default(p));
    if (options.maxExtrapolationUs !== undefined) {
      new DataView(this.mod.HEAPU8.buffer).setBigInt64(p + 72, BigInt(options.maxExtrapolationUs), true);
    }
    this.check(this.mod._sc_runtime_enable_interpolation(this.rt, p));
    this.interpolating = true;
  }

  get interpolationEnabled(): boolean {
    return this.interpolating;
  }

  /** Once per frame: merged changes -> effective tree and world matrices. */
  update(): void {
    this.check(this.mod._sc_runtime_update(this.rt));
  }

  /**
   * update(), then the interpolated presentation at `renderUs` (when interpolation is on):
   * microseconds on the receive-time clock, as a bigint or a number (a number allocates
   * nothing: a BigInt is a heap object).
   */
  updateInterpolated(renderUs: bigint | number): void {
    this.check(typeof renderUs === "number"
      ? this.mod._scw_update_interpolated_us(this.rt, renderUs)
      : this.mod._sc_runtime_update_interpolated(this.rt, renderUs));
  }

  entityCount(): number {
    return this.mod._sc_runtime_entity_count(this.rt);
  }

  /** The exact replica's world matrices (bit-identical to `scenecrdt replay --world`). */
  copyWorld(): WorldCopy {
    return this.copyWorldWith(this.mod._sc_runtime_copy_world, this.entityCount());
  }

  /** The presentation's world matrices (the replica's when interpolation is off). */
  copyInterpolatedWorld(): WorldCopy {
    return this.copyWorldWith(
      this.mod._sc_runtime_copy_interpolated_world,
      this.mod._sc_runtime_interpolated_entity_count(this.rt),
    );
  }

  changed(interpolated = false): Uint32Array {
    const m = this.mod;
    return this.copyIds(interpolated ? m._sc_runtime_copy_interpolated_changed : m._sc_runtime_copy_changed);
  }

  added(interpolated = false): Uint32Array {
    const m = this.mod;
    return this.copyIds(interpolated ? m._sc_runtime_copy_interpolated_added : m._sc_runtime_copy_added);
  }

  removed(interpolated = false): Uint32Array {
    const m = this.mod;
    return this.copyIds(interpolated ? m._sc_runtime_copy_interpolated_removed : m._sc_runtime_copy_removed);
  }

  /**
   * Every entity of the presentation (interpolated when `interpolated` and interpolation is
   * on, else the exact replica) with its world matrix, sorted by id, in a reused list: no
   * allocation. The views stay valid until the next call into this runtime.
   */
  worldView(interpolated = false): MatrixList {
    const m = this.mod;
    const list = this.worldList;
    const status = interpolated
      ? list.fillWorld(this.rt, m._sc_runtime_copy_interpolated_world, m._sc_runtime_interpolated_entity_count(this.rt))
      : list.fillWorld(this.rt, m._sc_runtime_copy_world, m._sc_runtime_entity_count(this.rt));
    this.check(status);
    return list;
  }

  /**
   * The entities whose world matrix the last update changed, with their matrices (one
   * crossing: sc_runtime_copy_changed_world), in a reused list: what an instanced mesh
   * re-uploads. Valid until the next call into this runtime.
   */
  changedView(interpolated = false): MatrixList {
    const m = this.mod;
    const list = this.changedList;
    // Room for every entity at once (at most all change): no growth frame after frame.
    this.check(list.fillWorld(this.rt, interpolated ? m._sc_runtime_copy_interpolated_changed_world
      : m._sc_runtime_copy_changed_world, this.worldList.count));
    return list;
  }

  /** The entities the last update added, in a reused list (see changedView). */
  addedView(interpolated = false): EntityList {
    const m = this.mod;
    const list = this.addedList;
    this.check(list.fillIds(this.rt, interpolated ? m._sc_runtime_copy_interpolated_added : m._sc_runtime_copy_added, 0));
    return list;
  }

  /** The entities the last update removed, in a reused list (see changedView). */
  removedView(interpolated = false): EntityList {
    const m = this.mod;
    const list = this.removedList;
    this.check(list.fillIds(this.rt, interpolated ? m._sc_runtime_copy_interpolated_removed : m._sc_runtime_copy_removed, 0));
    return list;
  }

  /**
   * Writes the entity's world matrix (the presentation's when `interpolated`) into `out`
   * (16 floats, column-major) without allocating; false when it is not in the scene.
   */
  worldMatrixInto(entity: number, out: Float32Array | number[], interpolated = false): boolean {
    const p = this.reserve(64);
    const m = this.mod;
    const status = interpolated
      ? m._sc_runtime_interpolated_world_matrix(this.rt, entity >>> 0, p)
      : m._sc_runtime_world_matrix(this.rt, entity >>> 0, p);
    if (status === SC_E_NOT_FOUND) return false;
    this.check(status);
    const f = m.HEAPF32;
    for (let k = 0; k < 16; k++) out[k] = f[(p >> 2) + k];
    return true;
  }

  /** 16 floats, column-major; null when the entity is not in the scene. */
  worldMatrix(entity: number): Float32Array | null {
    const p = this.reserve(64);
    const status = this.mod._sc_runtime_world_matrix(this.rt, entity >>> 0, p);
    if (status === SC_E_NOT_FOUND) return null;
    this.check(status);
    return this.mod.HEAPF32.slice(p >> 2, (p >> 2) + 16);
  }

  nodeInfo(entity: number): NodeInfo | null {
    const out: NodeInfo = { effectiveParent: 0, declaredParent: 0, parked: false, placeholder: false };
    return this.nodeInfoInto(entity, out) ? out : null;
  }

  /** nodeInfo() into a caller's object, without allocating; false when not in the scene. */
  nodeInfoInto(entity: number, out: NodeInfo): boolean {
    const p = this.reserve(NODE_INFO_BYTES);
    this.mod.HEAPU32[p >> 2] = NODE_INFO_BYTES;
    const status = this.mod._sc_runtime_node_info(this.rt, entity >>> 0, p);
    if (status === SC_E_NOT_FOUND) return false;
    this.check(status);
    const u = this.mod.HEAPU32;
    const i = this.mod.HEAP32;
    const w = p >> 2;
    out.effectiveParent = u[w + 1];
    out.declaredParent = u[w + 2];
    out.parked = i[w + 3] !== 0;
    out.placeholder = i[w + 4] !== 0;
    return true;
  }

  /** The merged Transform; null when the entity has none. */
  getTransform(entity: number): Transform | null {
    const p = this.reserve(TRANSFORM_BYTES);
    const status = this.mod._sc_runtime_get_transform(this.rt, entity >>> 0, p);
    if (status === SC_E_NOT_FOUND) return null;
    this.check(status);
    const f = this.mod.HEAPF32;
    const w = p >> 2;
    return {
      position: [f[w], f[w + 1], f[w + 2]],
      rotation: [f[w + 3], f[w + 4], f[w + 5], f[w + 6]],
      scale: [f[w + 7], f[w + 8], f[w + 9]],
      parent: this.mod.HEAPU32[w + 10],
    };
  }

  /**
   * A local Transform write with the Lamport rule (sc_runtime_write_transform): merged here,
   * the DCL message to send returned (empty when the write changed nothing). Throws
   * ScenecrdtError with status SC_E_INVALID_ARGUMENT (-1) for a NaN or infinite component,
   * which servers refuse: nothing is merged.
   */
  writeTransform(entity: number, t: Transform): Uint8Array {
    const p = this.reserve(TRANSFORM_BYTES + WRITE_MAX_BYTES + 4);
    const f = this.mod.HEAPF32;
    const w = p >> 2;
    f.set(t.position, w);
    f.set(t.rotation, w + 3);
    f.set(t.scale, w + 7);
    this.mod.HEAPU32[w + 10] = t.parent >>> 0;
    const out = p + TRANSFORM_BYTES;
    const lenAt = out + WRITE_MAX_BYTES;
    this.check(this.mod._sc_runtime_write_transform(this.rt, entity >>> 0, p, out, WRITE_MAX_BYTES, lenAt));
    const len = this.mod.HEAPU32[lenAt >> 2];
    return this.mod.HEAPU8.slice(out, out + len);
  }

  /**
   * Deletes the entity's Transform (DCL DELETE_COMPONENT of component 1) with the Lamport
   * rule: merged here, the message to send returned (empty when there was nothing to delete).
   * The entity leaves the scene at the next update unless it still has children (it is then
   * a placeholder).
   */
  deleteTransform(entity: number): Uint8Array {
    return this.deleteWith(this.mod._sc_runtime_delete_transform, entity);
  }

  /**
   * Deletes the entity (DCL DELETE_ENTITY: every component of this number up to its version):
   * merged here, the message to send returned. A later write to the same entity is refused
   * (SC_E_REFUSED, -5); entity numbers below 512 are reserved and refused too.
   */
  deleteEntity(entity: number): Uint8Array {
    return this.deleteWith(this.mod._sc_runtime_delete_entity, entity);
  }

  /**
   * The current value of component `id` of `entity` (docs/COMPONENTS.md): the payload of its
   * last winning PUT exactly as sent (the Transform, id 1: its 44 wire bytes), as a copy; null
   * when absent (never set, deleted, or the entity deleted). Current at once, before update().
   * Throws ScenecrdtError with status -13 (SC_E_GROW_ONLY) for a grow-only set: getAppendValues.
   */
  getComponent(entity: number, id: number): Uint8Array | null {
    return this.components.get(entity, id);
  }

  /**
   * getComponent without allocating: the value's size, its bytes written to `out` when they
   * fit (size <= out.length; otherwise nothing is written: grow `out` and call again); -1 when
   * absent.
   */
  getComponentInto(entity: number, id: number, out: Uint8Array): number {
    return this.components.getInto(entity, id, out);
  }

  /** The values of a grow-only (APPEND_VALUE) set, ascending by (timestamp, bytes); null when none. */
  getAppendValues(entity: number, id: number): AppendValue[] | null {
    return this.components.appendValues(entity, id);
  }

  /**
   * The changed / added / removed (entity, component) lists of the last update (every component
   * but the Transform, whose lists are changed / added / removed), in reused views: no
   * allocation. Valid until the next call into this runtime.
   */
  componentChangesView(): ComponentChanges {
    return this.components.fillViews();
  }

  /** One component list of the last update, copied. */
  changedComponents(): ComponentPairs {
    return this.components.copy("changed");
  }

  addedComponents(): ComponentPairs {
    return this.components.copy("added");
  }

  removedComponents(): ComponentPairs {
    return this.components.copy("removed");
  }

  /** The "stateHash" of `scenecrdt replay`. */
  stateHash(): string {
    const p = this.reserve(65);
    this.check(this.mod._sc_runtime_state_hash(this.rt, p, 65));
    return this.mod.UTF8ToString(p);
  }

  private deleteWith(fn: (rt: number, e: number, out: number, cap: number, len: number) => number,
    entity: number): Uint8Array {
    const p = this.reserve(WRITE_MAX_BYTES + 8);
    const lenAt = p + WRITE_MAX_BYTES;
    this.check(fn(this.rt, entity >>> 0, p, WRITE_MAX_BYTES, lenAt));
    const len = this.mod.HEAPU32[lenAt >> 2];
    return this.mod.HEAPU8.slice(p, p + len);
  }

  private copyWorldWith(
    fn: (rt: number, e: number, m: number, cap: number, count: number) => number,
    capacity: number,
  ): WorldCopy {
    const p = this.reserve(capacity * 68 + 8);
    const ents = p + 8;
    const mats = ents + capacity * 4;
    this.check(fn(this.rt, ents, mats, capacity, p));
    const n = this.mod.HEAPU32[p >> 2];
    return {
      entities: this.mod.HEAPU32.slice(ents >> 2, (ents >> 2) + n),
      matrices: this.mod.HEAPF32.slice(mats >> 2, (mats >> 2) + 16 * n),
    };
  }

  private copyIds(fn: (rt: number, e: number, cap: number, count: number) => number): Uint32Array {
    // Size query first (capacity 0), then the copy.
    let p = this.reserve(8);
    const status = fn(this.rt, 0, 0, p);
    if (status !== SC_OK && status !== -3) this.check(status);
    const n = this.mod.HEAPU32[p >> 2];
    if (n === 0) return new Uint32Array(0);
    p = this.reserve(8 + 4 * n);
    this.check(fn(this.rt, p + 8, n, p));
    const got = this.mod.HEAPU32[p >> 2];
    return this.mod.HEAPU32.slice((p + 8) >> 2, ((p + 8) >> 2) + got);
  }

  private copyIn(bytes: Uint8Array): number {
    const p = this.reserve(Math.max(1, bytes.length));
    this.mod.HEAPU8.set(bytes, p);
    return p;
  }

  // The scratch area, grown to at least `bytes` (8-aligned by malloc). Heap views may be
  // replaced when memory grows, so callers read this.mod.HEAP* after each call.
  private reserve(bytes: number): number {
    if (bytes > this.scratchBytes) {
      if (this.scratch) this.mod._free(this.scratch);
      const size = Math.max(bytes, this.scratchBytes * 2, 4096);
      this.scratch = this.mod._malloc(size);
      if (this.scratch === 0) throw new ScenecrdtError(-7, `wasm malloc(${size}) failed`);
      this.scratchBytes = size;
    }
    return this.scratch;
  }

  private check(status: number, message?: string): void {
    if (status < 0) throw new ScenecrdtError(status, message ?? this.mod.UTF8ToString(this.mod._sc_last_error()));
  }
}
