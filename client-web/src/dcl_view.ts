// SPDX-License-Identifier: Apache-2.0
// Owns DclSceneView (docs/ECS-TRANSPORT.md "One connection: typed components and world
// matrices"): one @dcl/ecs Transport (in practice @scenecrdt/ecs-transport's, with its
// reconnects and outbox) feeds both an unmodified @dcl/ecs Engine and a wasm replica
// (WasmRuntime). The view stands between the engine and the transport: every chunk the server
// sends goes to the engine as it is and, at the engine's next update(), the same bytes are
// merged into the replica, followed by the chunk the engine sends (its own writes, which the
// server does not echo). frame() is SceneClient.frame() over that replica: world matrices and
// the changed / added / removed lists in reused views (no allocation per frame).
// Nothing here imports @dcl/ecs or @scenecrdt/ecs-transport: both are matched structurally,
// so client-web keeps no dependency (the application brings both).
import { emptyFrame, fillFrame } from "./client.js";
import type { Frame } from "./client.js";
import type { WasmRuntime } from "./wasm.js";

/**
 * An @dcl/ecs Transport (its `Transport` type, structurally). `state`, `socket` and `close`
 * are read when present (ScenecrdtEcsTransport has them).
 */
export interface DclTransport {
  type?: string;
  send(message: Uint8Array | Uint8Array[]): Promise<void>;
  onmessage?: ((message: Uint8Array) => void) | undefined;
  filter(message: object): boolean;
  /** "joined" once the scene's snapshot arrived on the current connection. */
  readonly state?: string;
  /** The current socket: the view closes it (code 4000) when the replica refuses a chunk. */
  readonly socket?: { close(code?: number, reason?: string): void } | null;
  close?(): void;
}

/** The part of an @dcl/ecs engine (IEngine) the view uses. */
export interface DclEngine {
  addTransport(transport: DclTransport): void;
}

export interface DclSceneViewOptions<E extends DclEngine> {
  /** The engine whose typed components the render loop reads (define them before its first update). */
  engine: E;
  /** The replica: new WasmRuntime(await loadScenecrdt()) (enableInterpolation() if wanted). */
  runtime: WasmRuntime;
  /** The connection, not yet added to an engine: createEcsTransport({ url: "ws://HOST:PORT/dcl/<scene>" }). */
  transport: DclTransport;
  /** The clock of receive times, in microseconds (default performance.now()); see SceneClient. */
  nowUs?: () => bigint;
}

export interface DclSceneViewStats {
  /** The transport's state ("connecting", "joining", "joined", "closed"), or "unknown". */
  state: string;
  /** Chunks (and bytes) from the server merged into the replica. */
  serverChunks: number;
  serverBytes: number;
  /** Chunks (and bytes) of the engine's own writes merged into the replica. */
  localChunks: number;
  localBytes: number;
  /** Chunks from the server waiting for the engine's next update(). */
  pendingChunks: number;
  /**
   * Chunks the replica refused as malformed (each logged with console.error): from the server
   * (the connection is then reopened, so that a new snapshot brings the replica back), and
   * from the engine (the replica misses those writes until they are written again).
   */
  refusedServerChunks: number;
  refusedLocalChunks: number;
}

function defaultNowUs(): bigint {
  return BigInt(Math.round(performance.now() * 1000));
}

/**
 * One object for a Decentraland renderer: `view.engine` (typed components: MeshRenderer.get(e),
 * engine.getEntityState(e)) and `view.frame()` (world matrices from the wasm replica), fed from
 * one connection. The constructor adds the view's transport to the engine (which opens the
 * connection). Each frame: `await engine.update(dt)`, then `view.frame()`: the replica then
 * holds exactly the messages the engine has processed (docs/ECS-TRANSPORT.md).
 */
export class DclSceneView<E extends DclEngine = DclEngine> {
  readonly engine: E;
  readonly runtime: WasmRuntime;
  /** The transport given in the options (the connection: stats(), close(), ...). */
  readonly transport: DclTransport;
  private readonly nowUs: () => bigint;
  private readonly frameValue: Frame = emptyFrame();
  // Server chunks received since the engine's last update(), with their receive times. The
  // engine holds the same chunks in its own queue until then (it parses them on receipt and
  // keeps views into them), so they are kept as they are, not copied: a transport never reuses
  // the buffer of a chunk it handed to the engine. Bounded as the engine's queue is: both are
  // drained by every update().
  private queue: Uint8Array[] = [];
  private queueUs: bigint[] = [];
  private readonly statsValue: DclSceneViewStats = {
    state: "unknown",
    serverChunks: 0,
    serverBytes: 0,
    localChunks: 0,
    localBytes: 0,
    pendingChunks: 0,
    refusedServerChunks: 0,
    refusedLocalChunks: 0,
  };

  constructor(options: DclSceneViewOptions<E>) {
    this.engine = options.engine;
    this.runtime = options.runtime;
    this.transport = options.transport;
    this.nowUs = options.nowUs ?? defaultNowUs;
    const inner = options.transport;
    const view = this; // for the accessors of `tap` (an accessor cannot be an arrow function)
    if (inner.onmessage) {
      throw new Error("DclSceneView: the transport is already added to an engine: pass a new one " +
        "(createEcsTransport(...)); the view adds it to options.engine itself");
    }
    const tap: DclTransport = {
      type: inner.type ?? "scenecrdt-dcl-view",
      filter: (message) => inner.filter(message),
      send: (message) => {
        this.merge(message);
        return inner.send(message);
      },
      get onmessage() {
        return inner.onmessage;
      },
      // @dcl/ecs's addTransport installs the engine's handler here; setting it on
      // ScenecrdtEcsTransport opens the connection.
      set onmessage(handler: ((message: Uint8Array) => void) | undefined) {
        inner.onmessage = handler === undefined ? undefined : (chunk: Uint8Array) => {
          view.queue.push(chunk);
          view.queueUs.push(view.nowUs());
          handler(chunk);
        };
      },
    };
    options.engine.addTransport(tap);
  }

  /** The transport's state ("joined": the snapshot arrived), or "unknown" when it has none. */
  get state(): string {
    return this.transport.state ?? "unknown";
  }

  /**
   * One render frame of the replica, as SceneClient.frame(): world matrices (interpolated at
   * `renderUs` when the runtime interpolates) and the changed / added / removed lists, the same
   * object every time, its lists views into reused buffers (valid until the next call into the
   * runtime). Call it after `await engine.update(dt)`: the replica then holds what the engine
   * holds. Allocates nothing (pass `renderUs` as a number when interpolating).
   */
  frame(renderUs?: bigint | number): Frame {
    return fillFrame(this.runtime, this.frameValue, renderUs, this.nowUs === defaultNowUs ? undefined : this.nowUs);
  }

  /**
   * Resolves once the transport is joined and the replica has merged a chunk from the server
   * (the snapshot, at an engine.update(): keep updating the engine meanwhile); rejects after
   * timeoutMs.
   */
  joined(timeoutMs = 10000): Promise<void> {
    const ready = () => this.statsValue.serverChunks > 0 && (this.transport.state ?? "joined") === "joined";
    if (ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = () => {
        if (ready()) resolve();
        else if (Date.now() - started > timeoutMs) {
          reject(new Error(`DclSceneView: not joined after ${timeoutMs} ms (state ${this.state})`));
        } else setTimeout(poll, 10);
      };
      poll();
    });
  }

  stats(): DclSceneViewStats {
    return { ...this.statsValue, state: this.state, pendingChunks: this.queue.length };
  }

  /** Closes the transport (when it has close()) and drops the chunks not merged yet. */
  close(): void {
    this.queue = [];
    this.queueUs = [];
    this.transport.close?.();
  }

  // The engine's update() ends with send() (@dcl/ecs calls it every update, an empty chunk
  // when nothing changed): what the engine processed at the start of that update, then what
  // it wrote, go into the replica in that order.
  private merge(message: Uint8Array | Uint8Array[]): void {
    const s = this.statsValue;
    const queue = this.queue;
    const times = this.queueUs;
    if (queue.length > 0) {
      this.queue = [];
      this.queueUs = [];
      for (let i = 0; i < queue.length; i++) {
        try {
          this.runtime.applyAt(queue[i], times[i]);
          s.serverChunks += 1;
          s.serverBytes += queue[i].byteLength;
        } catch (err) {
          // A server sends well-formed chunks only: a broken link or a bug. A new connection
          // brings a snapshot, which both the engine and the replica merge.
          s.refusedServerChunks += 1;
          console.error(`scenecrdt DclSceneView: the replica refused a ${queue[i].byteLength}-byte chunk from ` +
            `the server (${String(err)}); reconnecting for a new snapshot`);
          this.transport.socket?.close(4000, "the replica refused a chunk");
        }
      }
    }
    if (Array.isArray(message)) {
      for (const chunk of message) this.mergeLocal(chunk);
    } else {
      this.mergeLocal(message);
    }
  }

  private mergeLocal(chunk: Uint8Array): void {
    const s = this.statsValue;
    if (chunk.byteLength > 0) {
      try {
        this.runtime.applyAt(chunk, this.nowUs());
        s.localChunks += 1;
        s.localBytes += chunk.byteLength;
      } catch (err) {
        s.refusedLocalChunks += 1;
        console.error(`scenecrdt DclSceneView: the replica refused a ${chunk.byteLength}-byte chunk the engine ` +
          `wrote (${String(err)}); it misses those writes`);
      }
    }
  }
}
