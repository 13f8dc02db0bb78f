// SPDX-License-Identifier: Apache-2.0
// Owns bindThree (docs/WEB.md section 5), the "@scenecrdt/client-web/three" entry: one
// three.js Object3D per entity of a SceneClient's replica, flat under a parent, created and
// removed from each frame's added / removed lists, its matrix (matrixAutoUpdate off) set from
// the (interpolated) world matrix of the changed list, mirrored to three.js's right-handed
// space as docs/CONVENTIONS.md says (M_rh = S * M * S, S = diag(1, 1, -1, 1)). three is not
// imported: the caller passes its THREE namespace (a peer dependency, never bundled here).
import type { Frame } from "./client.js";
import type { MatrixList } from "./views.js";

/** The parts of a three.js Object3D the binding uses. */
export interface ThreeObject3D {
  matrix: { elements: number[] | Float32Array | Float64Array };
  matrixAutoUpdate: boolean;
  matrixWorldNeedsUpdate: boolean;
  userData: Record<string, unknown>;
  add(...objects: ThreeObject3D[]): unknown;
  remove(...objects: ThreeObject3D[]): unknown;
}

/** The parts of the three namespace the binding uses (`import * as THREE from "three"`). */
export interface ThreeNamespace {
  Object3D: new () => ThreeObject3D;
}

/** What bindThree reads from the client: SceneClient fits. */
export interface FrameSource {
  frame(renderUs?: bigint | number): Frame;
  readonly runtime: {
    worldMatrixInto(entity: number, out: Float32Array | number[], interpolated?: boolean): boolean;
    readonly interpolationEnabled: boolean;
  };
}

export interface BindThreeOptions<O extends ThreeObject3D = ThreeObject3D> {
  /**
   * The mesh factory: the object shown for a new entity (a Mesh, a Group, a loaded model...).
   * Default: an empty THREE.Object3D. Its matrix is overwritten every time it changes.
   */
  createObject?: (entity: number) => O;
  /** Called after an entity's object left its parent (dispose geometries / materials here). */
  disposeObject?: (entity: number, object: O) => void;
  /**
   * Mirror Z into three.js's right-handed space (default true; docs/CONVENTIONS.md). false
   * shows the scene's left-handed matrices as they are (mirrored on screen).
   */
  mirrorZ?: boolean;
}

export interface ThreeBinding<O extends ThreeObject3D = ThreeObject3D> {
  /**
   * Once per frame, before renderer.render: client.frame(renderUs), then objects added,
   * removed and moved. Allocates nothing when no entity comes or goes. Returns the frame.
   */
  update(renderUs?: bigint | number): Frame;
  /** The object of an entity (undefined when it is not in the scene). */
  object(entity: number): O | undefined;
  /** Every entity's object (read only; the binding owns the map). */
  readonly objects: ReadonlyMap<number, O>;
  /** Removes every object from the parent (disposeObject for each); the binding is done. */
  dispose(): void;
}

/** Binds `client`'s replica to three.js objects under `parent` (see ThreeBinding). */
export function bindThree<O extends ThreeObject3D = ThreeObject3D>(
  client: FrameSource,
  THREE: ThreeNamespace,
  parent: ThreeObject3D,
  options: BindThreeOptions<O> = {},
): ThreeBinding<O> {
  const create = options.createObject ?? (() => new THREE.Object3D() as O);
  const mirror = options.mirrorZ ?? true;
  const objects = new Map<number, O>();
  const scratch = new Float32Array(16);

  const setMatrix = (object: O, m: Float32Array, at: number) => {
    const el = object.matrix.elements;
    for (let k = 0; k < 16; k++) el[k] = m[at + k];
    if (mirror) {
      // S * M * S flips the sign of row 2 and of column 2 (element 10 twice: kept).
      el[2] = -el[2];
      el[6] = -el[6];
      el[14] = -el[14];
      el[8] = -el[8];
      el[9] = -el[9];
      el[11] = -el[11];
    }
    object.matrixWorldNeedsUpdate = true;
  };
  const add = (entity: number): O => {
    const object = create(entity);
    object.matrixAutoUpdate = false;
    object.userData.entity = entity;
    parent.add(object);
    objects.set(entity, object);
    return object;
  };
  const removeOne = (entity: number) => {
    const object = objects.get(entity);
    if (!object) return;
    parent.remove(object);
    objects.delete(entity);
    options.disposeObject?.(entity, object);
  };
  const applyChanged = (changed: MatrixList) => {
    for (let i = 0; i < changed.count; i++) {
      const e = changed.entities[i];
      setMatrix(objects.get(e) ?? add(e), changed.matrices, 16 * i);
    }
  };

  return {
    update(renderUs?: bigint | number): Frame {
      const frame = client.frame(renderUs);
      const { removed, added } = frame;
      for (let i = 0; i < removed.count; i++) removeOne(removed.entities[i]);
      // The changed list first (its views are read before any other call into the runtime),
      // then added entities it did not name, with their matrix now.
      applyChanged(frame.changed);
      const interpolated = client.runtime.interpolationEnabled;
      for (let i = 0; i < added.count; i++) {
        const e = added.entities[i];
        if (objects.has(e)) continue;
        const object = add(e);
        if (client.runtime.worldMatrixInto(e, scratch, interpolated)) setMatrix(object, scratch, 0);
      }
      return frame;
    },
    object: (entity) => objects.get(entity >>> 0),
    objects,
    dispose() {
      for (const e of [...objects.keys()]) removeOne(e);
    },
  };
}
