// SPDX-License-Identifier: Apache-2.0
// Owns little-endian loads and stores of u32 and f32. Correct on any host byte order; on
// little-endian hosts they compile to plain moves. Floats travel as bit patterns, so NaN
// payloads survive untouched.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace scenecrdt::protocol {

inline uint32_t LoadU32Le(const uint8_t* p) {
  if constexpr (std::endian::native == std::endian::little) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  } else {
    return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
  }
}

inline void StoreU32Le(uint8_t* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof v);
  } else {
    p[0] = static_cast<uint8_t>(v);
    p[1] = static_cast<uint8_t>(v >> 8);
    p[2] = static_cast<uint8_t>(v >> 16);
    p[3] = static_cast<uint8_t>(v >> 24);
  }
}

// memcpy rather than std::bit_cast: the libc++ 13 of the WebAssembly build (docs/WEB.md) has
// no std::bit_cast; both compile to the same move.
inline float LoadF32Le(const uint8_t* p) {
  const uint32_t bits = LoadU32Le(p);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
inline void StoreF32Le(uint8_t* p, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  StoreU32Le(p, bits);
}

}  // namespace scenecrdt::protocol
