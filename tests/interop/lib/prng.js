'use strict'
// Small deterministic PRNG (sfc32 seeded through splitmix32) with the helpers the generators
// need. Same seed, same sequence, on every platform: only 32-bit integer arithmetic is used.

function splitmix32(seed) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
}

// Hash a string or number into a 32-bit seed (FNV-1a over the decimal/text form).
function seedFrom(value) {
  const text = String(value)
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

class Rng {
  constructor(seed) {
    const sm = splitmix32(typeof seed === 'number' ? seed : seedFrom(seed))
    this.a = sm()
    this.b = sm()
    this.c = sm()
    this.d = sm()
    for (let i = 0; i < 12; i++) this.u32()
  }

  // uniform uint32
  u32() {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0
    this.d = (this.d + 1) >>> 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) >>> 0
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0
    this.c = (this.c + t) >>> 0
    return t >>> 0
  }

  // uniform float in [0, 1)
  float() {
    return this.u32() / 4294967296
  }

  // uniform integer in [0, n)
  int(n) {
    return Math.floor(this.float() * n)
  }

  // uniform integer in [lo, hi] (inclusive)
  range(lo, hi) {
    return lo + this.int(hi - lo + 1)
  }

  chance(p) {
    return this.float() < p
  }

  pick(array) {
    return array[this.int(array.length)]
  }

  // pick from [[weight, value], ...]
  weighted(entries) {
    let total = 0
    for (const [w] of entries) total += w
    let x = this.float() * total
    for (const [w, v] of entries) {
      if (x < w) return v
      x -= w
    }
    return entries[entries.length - 1][1]
  }

  shuffle(array) {
    for (let i = array.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const t = array[i]
      array[i] = array[j]
      array[j] = t
    }
    return array
  }
}

module.exports = { Rng, seedFrom }
