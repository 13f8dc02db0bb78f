// Owns the transport's outbox: the engine's writes the server has not been seen to hold, keyed
// so that a newer write to the same register replaces the older one, bounded in bytes
// (docs/ECS-TRANSPORT.md "The outbox").

import { DELETE_COMPONENT, DELETE_ENTITY, DclMessage, PUT_COMPONENT, bytesEqual, splitMessages } from './dcl'

interface Entry {
  type: number
  entity: number
  timestamp: number
  bytes: Uint8Array // an owned copy of the whole message
}

export interface OutboxCounters {
  /** Messages dropped from the pending set by the byte bound: never sent (the engine's peers miss them). */
  lost: number
  /** Already-sent messages dropped by the byte bound before a snapshot confirmed them. */
  evicted: number
  /** Messages the server was seen to hold (or to hold something newer for the same register). */
  confirmed: number
}

const isLww = (type: number) => type === PUT_COMPONENT || type === DELETE_COMPONENT

function keyOf(m: DclMessage, seq: number): string {
  if (isLww(m.type)) return `c${m.entity}:${m.component}`
  if (m.type === DELETE_ENTITY) return `e${m.entity & 0xffff}` // per entity number; the newest version wins
  return `u${seq}` // APPEND_VALUE, network and unknown types: never merged with another message
}

/**
 * Two keyed sets: `pending` (written by the engine, not yet sent on any connection) and
 * `retained` (sent, kept until a server snapshot or a newer write from elsewhere shows the
 * server has it, so a message lost with a dropped connection is sent again). Only LWW messages
 * (PUT_COMPONENT, DELETE_COMPONENT) and DELETE_ENTITY are retained; APPEND_VALUE and other
 * types are sent once.
 */
export class Outbox {
  private pending = new Map<string, Entry>()
  private retained = new Map<string, Entry>()
  private bytes = 0
  private seq = 0
  readonly counters: OutboxCounters = { lost: 0, evicted: 0, confirmed: 0 }

  constructor(private readonly maxBytes: number) {}

  get pendingMessages(): number {
    return this.pending.size
  }
  get messages(): number {
    return this.pending.size + this.retained.size
  }
  get byteSize(): number {
    return this.bytes
  }

  /**
   * Adds what the engine sent. `sent`: the chunk went out on a joined connection (retained);
   * otherwise it waits in `pending`. Returns how many pending messages the byte bound dropped.
   */
  add(chunk: Uint8Array, sent: boolean): number {
    const messages = splitMessages(chunk)
    const list: DclMessage[] = messages ?? [{ type: 0, entity: 0, component: 0, timestamp: 0, bytes: chunk }]
    for (const m of list) {
      const key = keyOf(m, this.seq++)
      if (sent && !isLww(m.type) && m.type !== DELETE_ENTITY) continue
      const old = this.pending.get(key) ?? this.retained.get(key)
      // The engine's own timestamps only grow per register (entity versions per number); keep
      // the newer if an older one is ever repeated.
      if (old && isLww(m.type) && old.timestamp > m.timestamp) continue
      if (old && m.type === DELETE_ENTITY && old.entity >>> 16 > m.entity >>> 16) continue
      this.remove(key)
      const entry: Entry = { type: m.type, entity: m.entity, timestamp: m.timestamp, bytes: m.bytes.slice() }
      ;(sent ? this.retained : this.pending).set(key, entry)
      this.bytes += entry.bytes.byteLength
    }
    return this.enforceBound()
  }

  /**
   * Drops every entry the server is seen to hold in `chunk` (a snapshot or a live batch from the
   * server): an LWW register at a higher timestamp, or at the same timestamp with identical
   * bytes; a DELETE_ENTITY of the same number at the same or a newer version.
   */
  confirm(chunk: Uint8Array): void {
    if (this.messages === 0) return
    const messages = splitMessages(chunk)
    if (!messages) return
    for (const m of messages) {
      if (isLww(m.type)) {
        const key = `c${m.entity}:${m.component}`
        const e = this.pending.get(key) ?? this.retained.get(key)
        if (e && (m.timestamp > e.timestamp || (m.timestamp === e.timestamp && bytesEqual(m.bytes, e.bytes)))) this.drop(key)
      } else if (m.type === DELETE_ENTITY) {
        const key = `e${m.entity & 0xffff}`
        const e = this.pending.get(key) ?? this.retained.get(key)
        if (e && m.entity >>> 16 >= e.entity >>> 16) this.drop(key)
      }
    }
  }

  /**
   * Everything still unconfirmed (retained from earlier connections, then pending), as chunks of
   * at most `maxChunkBytes` (a message larger alone would be a chunk of its own: the transport
   * never adds one). Sent entries stay retained.
   */
  drain(maxChunkBytes: number): Uint8Array[] {
    const entries = [...this.retained.values(), ...this.pending.values()]
    const kept = new Map<string, Entry>()
    for (const [key, e] of [...this.retained, ...this.pending]) {
      if (isLww(e.type) || e.type === DELETE_ENTITY) kept.set(key, e)
      else this.bytes -= e.bytes.byteLength
    }
    this.retained = kept
    this.pending = new Map()
    const chunks: Uint8Array[] = []
    let group: Entry[] = []
    let size = 0
    const close = () => {
      if (group.length === 0) return
      const out = new Uint8Array(size)
      let at = 0
      for (const e of group) {
        out.set(e.bytes, at)
        at += e.bytes.byteLength
      }
      chunks.push(out)
      group = []
      size = 0
    }
    for (const e of entries) {
      if (size > 0 && size + e.bytes.byteLength > maxChunkBytes) close()
      group.push(e)
      size += e.bytes.byteLength
    }
    close()
    return chunks
  }

  private drop(key: string): void {
    this.remove(key)
    this.counters.confirmed++
  }

  private remove(key: string): void {
    const e = this.pending.get(key) ?? this.retained.get(key)
    if (!e) return
    this.pending.delete(key)
    this.retained.delete(key)
    this.bytes -= e.bytes.byteLength
  }

  // Oldest retained entries go first (most were delivered); then the oldest pending ones, lost.
  private enforceBound(): number {
    let lost = 0
    while (this.bytes > this.maxBytes) {
      const fromRetained = this.retained.size > 0
      const map = fromRetained ? this.retained : this.pending
      const first = map.keys().next()
      if (first.done) break
      this.remove(first.value)
      if (fromRetained) this.counters.evicted++
      else {
        this.counters.lost++
        lost++
      }
    }
    return lost
  }
}
