// Owns splitting a DCL CRDT chunk into its messages and reading the fields the outbox keys on
// (docs/PROTOCOL.md section 1: an 8-byte header {u32 length, u32 type}, little-endian fields).

export const PUT_COMPONENT = 1
export const DELETE_COMPONENT = 2
export const DELETE_ENTITY = 3
export const APPEND_VALUE = 4

/** One message of a chunk: its bytes (a view) and the fields the outbox needs. */
export interface DclMessage {
  type: number
  entity: number
  /** PUT_COMPONENT, DELETE_COMPONENT, APPEND_VALUE: the component id and the Lamport timestamp. */
  component: number
  timestamp: number
  bytes: Uint8Array
}

/** The bytes after the header and the fixed fields of a PUT (the component data). */
export function putData(m: DclMessage): Uint8Array {
  return m.bytes.subarray(24)
}

/**
 * Splits `chunk` into messages. Returns null when the chunk is not a well-formed sequence of
 * messages (a length below 8 or past the end, or a PUT / APPEND whose data length disagrees with
 * its header): the caller then treats the chunk as one opaque unit.
 */
export function splitMessages(chunk: Uint8Array): DclMessage[] | null {
  const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  const out: DclMessage[] = []
  let pos = 0
  while (pos < chunk.byteLength) {
    if (chunk.byteLength - pos < 8) return null
    const length = view.getUint32(pos, true)
    const type = view.getUint32(pos + 4, true)
    if (length < 8 || length > chunk.byteLength - pos) return null
    let entity = 0
    let component = 0
    let timestamp = 0
    if (length >= 12) entity = view.getUint32(pos + 8, true)
    if (type === PUT_COMPONENT || type === APPEND_VALUE) {
      if (length < 24 || view.getUint32(pos + 20, true) !== length - 24) return null
      component = view.getUint32(pos + 12, true)
      timestamp = view.getUint32(pos + 16, true)
    } else if (type === DELETE_COMPONENT) {
      if (length !== 20) return null
      component = view.getUint32(pos + 12, true)
      timestamp = view.getUint32(pos + 16, true)
    } else if (type === DELETE_ENTITY) {
      if (length !== 12) return null
    }
    out.push({ type, entity, component, timestamp, bytes: chunk.subarray(pos, pos + length) })
    pos += length
  }
  return out
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Cuts `chunk` at message boundaries into parts of at most `maxBytes` bytes (views into
 * `chunk`, in order). A message larger than `maxBytes` alone goes to `oversized` instead; a
 * chunk that is not whole messages is one unit: a part when it fits, else oversized.
 */
export function cutChunk(chunk: Uint8Array, maxBytes: number): { parts: Uint8Array[]; oversized: Uint8Array[] } {
  if (chunk.byteLength <= maxBytes) return { parts: [chunk], oversized: [] }
  const messages = splitMessages(chunk)
  if (!messages) return { parts: [], oversized: [chunk] }
  const parts: Uint8Array[] = []
  const oversized: Uint8Array[] = []
  let start = -1
  let end = 0
  const close = () => {
    if (start >= 0) parts.push(chunk.subarray(start, end))
    start = -1
  }
  for (const m of messages) {
    const at = m.bytes.byteOffset - chunk.byteOffset
    if (m.bytes.byteLength > maxBytes) {
      close()
      oversized.push(m.bytes)
      continue
    }
    if (start >= 0 && at + m.bytes.byteLength - start > maxBytes) close()
    if (start < 0) start = at
    end = at + m.bytes.byteLength
  }
  close()
  return { parts, oversized }
}
