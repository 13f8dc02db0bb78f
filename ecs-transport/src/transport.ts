// Owns the WebSocket connection of the @dcl/ecs transport: connect to ws://HOST:PORT/dcl/<scene>,
// reconnect with jittered exponential backoff, hand the server's chunks to the engine, and route
// the engine's chunks, cut under the server's WebSocket read limit, to the socket or the outbox
// (docs/ECS-TRANSPORT.md).

import type { Transport } from '@dcl/ecs'
import { cutChunk } from './dcl'
import { Outbox } from './outbox'

/** The subset of the browser WebSocket API the transport uses (the `ws` package provides it too). */
export interface WebSocketLike {
  binaryType: string
  readyState: number
  send(data: Uint8Array): void
  close(code?: number, reason?: string): void
  onopen: ((ev: unknown) => void) | null
  onmessage: ((ev: { data: unknown }) => void) | null
  onclose: ((ev: { code?: number; reason?: string }) => void) | null
  onerror: ((ev: unknown) => void) | null
}
export type WebSocketConstructor = new (url: string) => WebSocketLike

/** `connecting`: no socket open; `joining`: open, waiting for the scene snapshot; `joined`; `closed`: close() was called. */
export type ConnectionState = 'connecting' | 'joining' | 'joined' | 'closed'

export interface EcsTransportOptions {
  /** ws://HOST:PORT/dcl/<scene>, with ?token=T when the server runs with --auth. */
  url: string
  /** WebSocket implementation; default: globalThis.WebSocket (browsers, node >= 22). */
  WebSocket?: WebSocketConstructor
  /** First reconnect delay, doubled per failed attempt up to maxBackoffMs (default 250 / 10000 ms). */
  minBackoffMs?: number
  maxBackoffMs?: number
  /** Bound of the outbox in bytes (default 4 MiB); see docs/ECS-TRANSPORT.md for what happens past it. */
  maxOutboxBytes?: number
  /**
   * Largest WebSocket message the transport sends, the engine's chunks and the outbox's flush
   * alike (default 256 KiB, at least 64). The server closes the connection (1009) on a message
   * above its WebSocket read limit, `serve --max-frame-bytes` (1 MiB by default): keep this
   * under it. Larger chunks are cut at message boundaries; a single message larger than this is
   * not sent (onOversize).
   */
  maxFlushChunkBytes?: number
  /** Called when the byte bound drops writes that were never sent (default: console.warn). */
  onOverflow?: (lostMessages: number, totalLost: number) => void
  /** Called for a message larger than maxFlushChunkBytes, which is not sent (default: console.error). */
  onOversize?: (messageBytes: number, totalOversized: number) => void
  onStateChange?: (state: ConnectionState) => void
  /** Random source of the backoff jitter (default Math.random). */
  random?: () => number
}

export interface TransportStats {
  state: ConnectionState
  joins: number
  disconnects: number
  sentChunks: number
  receivedChunks: number
  receivedBytes: number
  /** Messages written while not joined, then sent after a snapshot (and earlier ones re-sent). */
  flushedMessages: number
  outboxMessages: number
  pendingMessages: number
  outboxBytes: number
  confirmedMessages: number
  lostMessages: number
  evictedMessages: number
  /** Messages larger than maxFlushChunkBytes: not sent (onOversize). */
  oversizedMessages: number
  lastError: string | null
}

const OPEN = 1

function toBytes(data: unknown): Uint8Array | null {
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  return null
}

/** An @dcl/ecs transport over scenecrdt's raw-DCL WebSocket path; pass it to engine.addTransport(). */
export class ScenecrdtEcsTransport implements Transport {
  readonly type = 'scenecrdt-ws'
  private handler: ((message: Uint8Array) => void) | undefined
  private ws: WebSocketLike | null = null
  private current: ConnectionState = 'connecting'
  private started = false
  private attempt = 0
  private timer: ReturnType<typeof setTimeout> | null = null
  private readonly outbox: Outbox
  private readonly opts: Required<Omit<EcsTransportOptions, 'onStateChange' | 'WebSocket'>> &
    Pick<EcsTransportOptions, 'onStateChange'> & { WebSocket: WebSocketConstructor }
  private counters = { joins: 0, disconnects: 0, sentChunks: 0, receivedChunks: 0, receivedBytes: 0, flushedMessages: 0, oversizedMessages: 0 }
  private lastError: string | null = null

  constructor(options: EcsTransportOptions) {
    const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
    if (!Ctor) throw new Error('no WebSocket implementation: pass options.WebSocket (e.g. require("ws") under node < 22)')
    if (!/^wss?:\/\/[^/]+\/dcl\/[A-Za-z0-9_.-]{1,64}(\?.*)?$/.test(options.url)) {
      throw new Error(`url ${options.url} is not ws://HOST:PORT/dcl/<scene>[?token=T] (scene: 1-64 of [A-Za-z0-9_.-])`)
    }
    this.opts = {
      url: options.url,
      WebSocket: Ctor,
      minBackoffMs: options.minBackoffMs ?? 250,
      maxBackoffMs: options.maxBackoffMs ?? 10000,
      maxOutboxBytes: options.maxOutboxBytes ?? 4 << 20,
      maxFlushChunkBytes: options.maxFlushChunkBytes ?? 256 << 10,
      onOverflow:
        options.onOverflow ??
        ((lost, total) => console.warn(`scenecrdt ecs-transport: outbox full (${this.opts.maxOutboxBytes} bytes): dropped ${lost} unsent messages (${total} in all)`)),
      onOversize:
        options.onOversize ??
        ((bytes, total) =>
          console.error(
            `scenecrdt ecs-transport: a ${bytes}-byte message is larger than maxFlushChunkBytes (${this.opts.maxFlushChunkBytes}), under the server's WebSocket read limit: not sent (${total} in all)`
          )),
      onStateChange: options.onStateChange,
      random: options.random ?? Math.random
    }
    if (!(this.opts.minBackoffMs > 0 && this.opts.maxBackoffMs >= this.opts.minBackoffMs)) throw new Error('need 0 < minBackoffMs <= maxBackoffMs')
    if (!(this.opts.maxOutboxBytes >= 0)) throw new Error('maxOutboxBytes must be >= 0')
    if (!(Number.isInteger(this.opts.maxFlushChunkBytes) && this.opts.maxFlushChunkBytes >= 64)) throw new Error('maxFlushChunkBytes must be an integer >= 64')
    this.outbox = new Outbox(this.opts.maxOutboxBytes)
  }

  // @dcl/ecs's addTransport installs onmessage; the first connection starts then, so no chunk
  // arrives before the engine can take it.
  get onmessage(): ((message: Uint8Array) => void) | undefined {
    return this.handler
  }
  set onmessage(handler: ((message: Uint8Array) => void) | undefined) {
    this.handler = handler
    if (handler && !this.started) {
      this.started = true
      this.connect()
    }
  }

  filter(): boolean {
    return true
  }

  async send(message: Uint8Array | Uint8Array[]): Promise<void> {
    for (const whole of Array.isArray(message) ? message : [message]) {
      if (whole.byteLength === 0) continue // @dcl/ecs sends an empty chunk per update()
      // One update() of the engine can be megabytes: cut it under the server's read limit, which
      // would otherwise close the connection on it.
      const { parts, oversized } = cutChunk(whole, this.opts.maxFlushChunkBytes)
      for (const m of oversized) {
        this.counters.oversizedMessages++
        this.lastError = `a ${m.byteLength}-byte message is larger than maxFlushChunkBytes (${this.opts.maxFlushChunkBytes}): not sent`
        this.opts.onOversize(m.byteLength, this.counters.oversizedMessages)
      }
      for (const chunk of parts) this.route(chunk)
    }
  }

  // One chunk under the limit: to the socket when joined (and retained), else to the outbox.
  private route(chunk: Uint8Array): void {
    const ws = this.ws
    if (this.current === 'joined' && ws && ws.readyState === OPEN) {
      const copy = chunk.slice() // the engine reuses its buffer
      ws.send(copy)
      this.counters.sentChunks++
      this.outbox.add(copy, true)
    } else {
      const lost = this.outbox.add(chunk, false)
      if (lost > 0) this.opts.onOverflow(lost, this.outbox.counters.lost)
    }
  }

  /** Closes the connection for good (no reconnect). Unsent outbox entries are discarded. */
  close(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.setState('closed')
    this.ws?.close(1000, 'closed by the application')
    this.ws = null
  }

  get state(): ConnectionState {
    return this.current
  }

  /** The current socket, or null between connections (tests close it to simulate a drop). */
  get socket(): WebSocketLike | null {
    return this.ws
  }

  stats(): TransportStats {
    const c = this.outbox.counters
    return {
      state: this.current,
      ...this.counters,
      outboxMessages: this.outbox.messages,
      pendingMessages: this.outbox.pendingMessages,
      outboxBytes: this.outbox.byteSize,
      confirmedMessages: c.confirmed,
      lostMessages: c.lost,
      evictedMessages: c.evicted,
      lastError: this.lastError
    }
  }

  private setState(state: ConnectionState): void {
    if (this.current === state) return
    this.current = state
    this.opts.onStateChange?.(state)
  }

  private connect(): void {
    this.timer = null
    if (this.current === 'closed') return
    this.setState('connecting')
    let ws: WebSocketLike
    try {
      ws = new this.opts.WebSocket(this.opts.url)
    } catch (e) {
      this.lastError = String((e as Error)?.message ?? e)
      this.scheduleReconnect()
      return
    }
    ws.binaryType = 'arraybuffer'
    this.ws = ws
    ws.onopen = () => {
      if (this.ws === ws) this.setState('joining')
    }
    ws.onmessage = (ev) => {
      if (this.ws === ws) this.receive(ws, ev.data)
    }
    ws.onerror = (ev) => {
      if (this.ws === ws) this.lastError = String((ev as { message?: string })?.message ?? 'WebSocket error')
    }
    ws.onclose = (ev) => {
      if (this.ws !== ws) return
      this.ws = null
      if (this.current === 'closed') return
      if (ev && ev.code !== undefined && ev.code !== 1005 && ev.code !== 1006) this.lastError = `closed with ${ev.code} ${ev.reason ?? ''}`.trim()
      this.counters.disconnects++
      this.scheduleReconnect()
    }
  }

  private receive(ws: WebSocketLike, data: unknown): void {
    const bytes = toBytes(data)
    if (!bytes) {
      this.lastError = 'the server sent a text message (the /dcl/ path sends binary DCL chunks only)'
      return
    }
    this.counters.receivedChunks++
    this.counters.receivedBytes += bytes.byteLength
    this.outbox.confirm(bytes)
    this.handler?.(bytes)
    if (this.current !== 'joining') return
    // The first chunk is the scene's state: everything in the outbox it does not already hold
    // goes out now, then the engine's chunks go straight to the socket.
    this.attempt = 0
    this.counters.joins++
    this.setState('joined')
    const before = this.outbox.messages
    for (const chunk of this.outbox.drain(this.opts.maxFlushChunkBytes)) {
      ws.send(chunk)
      this.counters.sentChunks++
    }
    this.counters.flushedMessages += before
  }

  private scheduleReconnect(): void {
    if (this.current === 'closed' || this.timer) return
    this.setState('connecting')
    const cap = Math.min(this.opts.maxBackoffMs, this.opts.minBackoffMs * 2 ** Math.min(this.attempt, 30))
    this.attempt++
    const delay = cap / 2 + (this.opts.random() * cap) / 2
    this.timer = setTimeout(() => this.connect(), delay)
  }
}
