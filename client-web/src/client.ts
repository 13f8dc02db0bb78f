// SPDX-License-Identifier: Apache-2.0
// Owns SceneClient: one scene replica in the browser (or node) over the raw-DCL WebSocket path
// `/dcl/<scene>` (docs/PROTOCOL.md section 3, docs/WEB.md): feeds every binary message to the
// wasm runtime with its receive time, reconnects with jittered exponential backoff, hands a
// render loop the interpolated world matrices and the changed / added / removed lists (reused
// views: nothing is allocated per frame), the component lists and per-component change events
// (docs/COMPONENTS.md), and sends local Transform writes and deletes stamped with the
// runtime's Lamport rule.
import type { ComponentChanges } from "./components.js";
import type { EntityList, MatrixList } from "./views.js";
import { checkFiniteTransform, SC_E_REFUSED, ScenecrdtError } from "./wasm.js";
import type { Transform, WasmRuntime } from "./wasm.js";

/** The WebSocket constructor to use (the browser's; under node: the `ws` package's, or node's own). */
export type WebSocketCtor = new (url: string) => WebSocket;

export interface SceneClientOptions {
  /** Server base URL: ws://HOST:PORT or wss://HOST:PORT. */
  server: string;
  scene: string;
  /** A token of the server's --auth file (read is enough to watch; write to move things). */
  token?: string;
  /** First reconnect delay and its cap, in ms (defaults 250 and 5000); doubled each failure. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** The clock of receive and render times, in microseconds (default performance.now()). */
  nowUs?: () => bigint;
  WebSocket?: WebSocketCtor;
  /** Called when the connection state changes (joined: the snapshot was applied). */
  onState?: (state: ConnectionState) => void;
  /**
   * The give-up policy (docs/WEB.md, "Diagnostics"): stop retrying (state "closed", lastError
   * says why) after this many connections in a row that ended before their snapshot, or when
   * one ends and none reached its snapshot for giveUpAfterMs. 0 or absent: retry forever.
   */
  maxAttempts?: number;
  giveUpAfterMs?: number;
}

/**
 * connecting: the WebSocket is not open yet; joining: open, the snapshot not applied;
 * joined; disconnected: waiting to retry; refused: the server closed with a refusal that the
 * same request would get again (close code 1003 or 1008), for good; closed: close() or the
 * give-up policy.
 */
export type ConnectionState = "connecting" | "joining" | "joined" | "disconnected" | "refused" | "closed";

/** The latest failure (SceneClient.lastError), kept until a newer one. */
export interface ClientError {
  /** The WebSocket close code (1006: no close frame, e.g. nothing listens or an HTTP refusal). */
  code: number;
  /** The server's close reason, or what the client saw; " (gave up: ...)" when it gave up. */
  reason: string;
  /** Connections in a row that ended before their snapshot. */
  failedAttempts: number;
}

// Close codes after which the same request gets the same answer (dcl_session.cc): 1003
// unsupported data, 1008 policy violation.
const PERMANENT_CLOSE_CODES = new Set([1003, 1008]);

/**
 * What a render loop gets each frame: views into reused buffers (the same object every frame;
 * read `count` entries of each list). Valid until the next call into the client or its
 * runtime: copy out what must outlive the frame.
 */
export interface Frame {
  /** Every entity of the presentation (interpolated when enabled), sorted, with its matrix. */
  world: MatrixList;
  /** Entities whose matrix changed in this frame, with the new matrices: what to re-upload. */
  changed: MatrixList;
  /** Entities that appeared / went away in this frame. */
  added: EntityList;
  removed: EntityList;
  /**
   * The (entity, component) pairs of every other component that this frame's update changed,
   * added or removed (docs/COMPONENTS.md); read a value with runtime.getComponent.
   */
  components: ComponentChanges;
}

/** What happened to one component of one entity in a frame (see onComponent). */
export type ComponentEvent = "added" | "changed" | "removed";
/** Called by frame() for each change of a component the listener was registered for. */
export type ComponentListener = (entity: number, event: ComponentEvent, runtime: WasmRuntime) => void;
const EVENTS: readonly ComponentEvent[] = ["added", "changed", "removed"];

// A local change asked for while not joined, sent right after the next snapshot.
type PendingOp = { kind: "write"; t: Transform } | { kind: "deleteTransform" } | { kind: "deleteEntity" };

export interface ClientStats {
  state: ConnectionState;
  /** Binary messages received (the snapshot included) and their bytes. */
  batches: number;
  bytes: number;
  /** Connections made after the first. */
  reconnects: number;
  /** Writes sent (deletes included), and those waiting for a snapshot. */
  writesSent: number;
  writesPending: number;
  /** Messages the wasm runtime refused as malformed (the connection is then reopened). */
  decodeErrors: number;
}

/** The raw-DCL URL of a scene: ws://HOST:PORT/dcl/<scene>[?token=T]. */
export function dclUrl(server: string, scene: string, token?: string): string {
  const base = server.replace(/\/+$/, "");
  const q = token ? `?${new URLSearchParams({ token }).toString()}` : "";
  return `${base}/dcl/${encodeURIComponent(scene)}${q}`;
}

function defaultNowUs(): bigint {
  return BigInt(Math.round(performance.now() * 1000));
}

/** A Frame with empty lists, to be filled by fillFrame (one per client, reused every frame). */
export function emptyFrame(): Frame {
  const empty = { count: 0, entities: new Uint32Array(0), matrices: new Float32Array(0) };
  const none = { count: 0, entities: new Uint32Array(0), components: new Uint32Array(0) };
  return { world: empty, changed: empty, added: empty, removed: empty, components: { changed: none, added: none, removed: none } };
}

/**
 * One render frame of `rt` into `f` (SceneClient.frame and DclSceneView.frame): update (at
 * `renderUs`, or `nowUs()`, or performance.now() when interpolating), then the reused views.
 * Allocates nothing when `renderUs` is a number.
 */
export function fillFrame(rt: WasmRuntime, f: Frame, renderUs?: bigint | number, nowUs?: () => bigint): Frame {
  const interpolated = rt.interpolationEnabled;
  if (interpolated) {
    // The default clock as a number: a BigInt per frame would be an allocation per frame.
    rt.updateInterpolated(renderUs ?? (nowUs ? nowUs() : Math.round(performance.now() * 1000)));
  } else {
    rt.update();
  }
  f.world = rt.worldView(interpolated);
  f.changed = rt.changedView(interpolated);
  f.added = rt.addedView(interpolated);
  f.removed = rt.removedView(interpolated);
  f.components = rt.componentChangesView();
  return f;
}

export class SceneClient {
  private ws: WebSocket | null = null;
  private stateValue: ConnectionState = "disconnected";
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private joinedOnce = false;
  private failedAttempts = 0;
  private failingSince = 0;
  private lastErrorValue: ClientError | null = null;
  // Writes asked for while not joined: the latest Transform per entity, stamped after the next
  // snapshot so the Lamport clock has seen the scene's timestamps (as the C++ client does).
  // Deletes wait the same way; a held entity delete is final for its entity.
  private pending = new Map<number, PendingOp>();
  private readonly statsValue: ClientStats = {
    state: "disconnected",
    batches: 0,
    bytes: 0,
    reconnects: 0,
    writesSent: 0,
    writesPending: 0,
    decodeErrors: 0,
  };
  private readonly nowUs: () => bigint;
  private readonly Ws: WebSocketCtor;
  private readonly frameValue: Frame;
  private readonly componentListeners = new Map<number, ComponentListener[]>();
  private events = new Uint32Array(0); // (entity, component, kind) triples of dispatchComponents

  constructor(
    readonly runtime: WasmRuntime,
    private readonly options: SceneClientOptions,
  ) {
    this.nowUs = options.nowUs ?? defaultNowUs;
    const ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketCtor }).WebSocket;
    if (!ctor) {
      throw new Error("no global WebSocket: pass options.WebSocket (under node: WebSocket from the ws package)");
    }
    this.Ws = ctor;
    this.frameValue = emptyFrame();
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** The latest failure, or null while nothing failed (docs/WEB.md, "Diagnostics"). */
  get lastError(): ClientError | null {
    return this.lastErrorValue;
  }

  stats(): ClientStats {
    return { ...this.statsValue, state: this.stateValue, writesPending: this.pending.size };
  }

  /** Opens the connection (and keeps reopening it until close()). */
  start(): void {
    this.closed = false;
    this.failingSince = Date.now();
    this.connect();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ws?.close(1000);
    this.ws = null;
    this.setState("closed");
  }

  /** Resolves once the scene's snapshot is applied (rejects after timeoutMs). */
  joined(timeoutMs = 10000): Promise<void> {
    if (this.stateValue === "joined") return Promise.resolve();
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = () => {
        if (this.stateValue === "joined") resolve();
        else if (Date.now() - started > timeoutMs) reject(new Error(`not joined after ${timeoutMs} ms`));
        else setTimeout(poll, 10);
      };
      poll();
    });
  }

  /**
   * One render frame: merged changes -> world matrices (interpolated at `renderUs`, in
   * microseconds on the clock of `nowUs`, default now, when the runtime interpolates), and
   * the lists a renderer re-uploads. Returns the same object every
   * time, its lists views into reused buffers: no allocation per frame (docs/WEB.md).
   */
  frame(renderUs?: bigint | number): Frame {
    const f = fillFrame(this.runtime, this.frameValue, renderUs, this.options.nowUs ? this.nowUs : undefined);
    if (this.componentListeners.size > 0) this.dispatchComponents(f.components);
    return f;
  }

  /**
   * Calls `listener(entity, event, runtime)` from frame() for every change of component `id`
   * in that frame: "added" (it appeared), "changed" (a new value or set value; not for an
   * added one), "removed"; removals first, then by entity. Returns the function that removes
   * the listener. The Transform (id 1) has no events: its changes are the entity lists.
   */
  onComponent(id: number, listener: ComponentListener): () => void {
    const key = id >>> 0;
    this.componentListeners.set(key, [...(this.componentListeners.get(key) ?? []), listener]);
    return () => {
      const rest = (this.componentListeners.get(key) ?? []).filter((l) => l !== listener);
      if (rest.length > 0) this.componentListeners.set(key, rest);
      else this.componentListeners.delete(key);
    };
  }

  private emit(entity: number, id: number, event: ComponentEvent): void {
    const listeners = this.componentListeners.get(id);
    if (!listeners) return;
    // An indexed loop over an array replaced (never mutated) on change: no iterator object.
    for (let k = 0; k < listeners.length; k++) listeners[k](entity, event, this.runtime);
  }

  // The events of one frame's lists. They are copied first into a JavaScript array kept
  // between frames (grown geometrically): a listener may call into the runtime (getComponent),
  // which can grow wasm memory and detach the lists' views. Nothing is allocated once grown.
  private dispatchComponents(c: ComponentChanges): void {
    const n = c.removed.count + c.changed.count;
    if (this.events.length < 3 * n) this.events = new Uint32Array(Math.max(3 * n, 2 * this.events.length, 48));
    const ev = this.events;
    let k = 0;
    for (let i = 0; i < c.removed.count; i++, k += 3) {
      ev[k] = c.removed.entities[i];
      ev[k + 1] = c.removed.components[i];
      ev[k + 2] = 2;
    }
    let a = 0; // added is a sorted sub-list of changed
    for (let i = 0; i < c.changed.count; i++, k += 3) {
      const e = c.changed.entities[i];
      const id = c.changed.components[i];
      const added = a < c.added.count && c.added.entities[a] === e && c.added.components[a] === id;
      if (added) a++;
      ev[k] = e;
      ev[k + 1] = id;
      ev[k + 2] = added ? 0 : 1;
    }
    for (let j = 0; j < k; j += 3) this.emit(ev[j], ev[j + 1], EVENTS[ev[j + 2]]);
  }

  /**
   * Writes an entity's Transform: merged into the replica with the Lamport rule and sent. While
   * not joined it waits (latest per entity) and is written right after the next snapshot.
   * Returns true when sent now. Throws ScenecrdtError with status SC_E_INVALID_ARGUMENT (-1)
   * for a NaN or infinite component (servers refuse them: merged, it would leave this replica
   * apart from everyone): nothing is merged, sent or held.
   */
  writeTransform(entity: number, t: Transform): boolean {
    checkFiniteTransform(t);
    return this.change(entity, { kind: "write", t });
  }

  /**
   * Deletes the entity's Transform (it leaves the scene, or stays as a placeholder while it
   * has children): merged with the Lamport rule and sent; held like a write while not joined.
   * Returns true when sent now.
   */
  deleteTransform(entity: number): boolean {
    return this.change(entity, { kind: "deleteTransform" });
  }

  /**
   * Deletes the entity, every component of it (DCL DELETE_ENTITY): merged and sent; held like
   * a write while not joined. Final: later writes to the entity throw ScenecrdtError with
   * status SC_E_REFUSED (-5), as do numbers below 512 (reserved by the SDK). Returns true
   * when sent now.
   */
  deleteEntity(entity: number): boolean {
    if ((entity & 0xffff) < 512) {
      throw new ScenecrdtError(SC_E_REFUSED, `deleteEntity: entity ${entity}: numbers below 512 are reserved`);
    }
    return this.change(entity, { kind: "deleteEntity" });
  }

  private change(entity: number, op: PendingOp): boolean {
    const e = entity >>> 0;
    if (this.pending.get(e)?.kind === "deleteEntity") {
      throw new ScenecrdtError(SC_E_REFUSED, `entity ${e} is deleted (a delete is waiting for the join)`);
    }
    if (this.stateValue !== "joined" || !this.ws) {
      this.pending.set(e, op);
      return false;
    }
    const rt = this.runtime;
    const msg = op.kind === "write" ? rt.writeTransform(e, op.t)
      : op.kind === "deleteTransform" ? rt.deleteTransform(e) : rt.deleteEntity(e);
    if (msg.length === 0) return true; // unchanged: nothing to send
    this.ws.send(msg);
    this.statsValue.writesSent += 1;
    return true;
  }

  private setState(s: ConnectionState): void {
    if (this.stateValue === s) return;
    this.stateValue = s;
    this.options.onState?.(s);
  }

  private connect(): void {
    if (this.closed) return;
    if (this.joinedOnce || this.attempt > 0) this.statsValue.reconnects += 1;
    this.setState("connecting");
    const ws = new this.Ws(dclUrl(this.options.server, this.options.scene, this.options.token));
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    let first = true;
    ws.onopen = () => {
      if (this.ws === ws && first) this.setState("joining");
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (this.ws !== ws || !(ev.data instanceof ArrayBuffer)) return;
      const bytes = new Uint8Array(ev.data);
      this.statsValue.batches += 1;
      this.statsValue.bytes += bytes.length;
      try {
        this.runtime.applyAt(bytes, this.nowUs());
      } catch (err) {
        // A server sends only well-formed chunks; a refusal means a broken link or a bug:
        // reopen and start over from a snapshot.
        this.statsValue.decodeErrors += 1;
        console.error(`scenecrdt: batch refused (${String(err)}); reconnecting`);
        ws.close(4000);
        return;
      }
      if (first) {
        first = false;
        this.attempt = 0;
        this.failedAttempts = 0;
        this.joinedOnce = true;
        this.setState("joined");
        this.flushPending();
      }
    };
    // Either event ends this connection (once): node 20's WebSocket reports a refused
    // connection with an error and no close event.
    const lost = (ev?: Event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      try {
        ws.close();
      } catch {
        // already closing
      }
      const close = ev as CloseEvent | undefined;
      const code = typeof close?.code === "number" ? close.code : 1006;
      if (first) this.failedAttempts += 1;
      else this.failingSince = Date.now();
      const reason =
        close?.reason ||
        (code === 1006
          ? `no connection to ${this.options.server} (nothing listens, or the server refused the upgrade: a wrong token or scene, or ws:// on the --tcp port: use the --http port)`
          : `closed with code ${code}`);
      this.lastErrorValue = { code, reason, failedAttempts: this.failedAttempts };
      if (PERMANENT_CLOSE_CODES.has(code)) {
        this.giveUp("refused", "the server's refusal is permanent");
        return;
      }
      const max = this.options.maxAttempts ?? 0;
      const after = this.options.giveUpAfterMs ?? 0;
      if (max > 0 && this.failedAttempts >= max) {
        this.giveUp("closed", "too many failed attempts");
      } else if (after > 0 && Date.now() - this.failingSince >= after) {
        this.giveUp("closed", "no join within giveUpAfterMs");
      } else {
        this.scheduleReconnect();
      }
    };
    ws.onclose = lost;
    ws.onerror = lost;
  }

  private flushPending(): void {
    const writes = [...this.pending];
    this.pending.clear();
    for (const [entity, op] of writes) {
      try {
        this.change(entity, op);
      } catch (err) {
        // Refused now (e.g. the snapshot shows the entity deleted): the others still go.
        console.error(`scenecrdt: held ${op.kind} of entity ${entity} refused: ${String(err)}`);
      }
    }
  }

  private giveUp(state: ConnectionState, why: string): void {
    this.closed = true;
    if (this.lastErrorValue) this.lastErrorValue.reason += ` (gave up: ${why})`;
    this.setState(state);
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.setState("disconnected");
    const initial = this.options.backoffInitialMs ?? 250;
    const max = this.options.backoffMaxMs ?? 5000;
    const base = Math.min(max, initial * 2 ** Math.min(this.attempt, 16));
    this.attempt += 1;
    const delay = base / 2 + Math.random() * (base / 2); // jitter: [base/2, base)
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }
}
