// SPDX-License-Identifier: Apache-2.0
// Owns ChunkedText's hex and float writers.
#include "scenecrdt/replay/chunked_text.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace scenecrdt::replay {
namespace {

constexpr uint32_t kCanonicalNan = 0x7fc00000u;

// Both hex digits of every byte value, so a byte costs one 2-byte copy.
constexpr std::array<char, 512> MakeHexPairs() {
  constexpr char kDigits[] = "0123456789abcdef";
  std::array<char, 512> t{};
  for (int b = 0; b < 256; ++b) {
    t[2 * b] = kDigits[b >> 4];
    t[2 * b + 1] = kDigits[b & 15];
  }
  return t;
}
constexpr std::array<char, 512> kHexPairs = MakeHexPairs();

}  // namespace

char* PutHexBytes(char* p, std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) {
    std::memcpy(p, &kHexPairs[2 * b], 2);
    p += 2;
  }
  return p;
}

void ChunkedText::PutHex(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(bytes.size(), kMaxRoom / 2);
    Commit(PutHexBytes(Room(2 * n), bytes.first(n)));
    bytes = bytes.subspan(n);
  }
}

char* PutFloat(char* p, float f) {
  // Integers below 2^24 (unit scales, identity rotations, zeros) are exact, and no shorter
  // decimal reads back to them (a float's half-spacing there is at most 0.5): their shortest
  // text is their digits, unless the e-form is shorter, which to_chars prefers then (it takes
  // the fixed form on a tie). The e-form has the digits less the t trailing zeros, a '.'
  // after the first when more than one is left, and "e+XX": the fixed form is the choice
  // when t <= 4 + (digits - t > 1). The rest takes to_chars' general (slower) path.
  if (f > -16777216.0f && f < 16777216.0f) {
    const auto v = static_cast<int32_t>(f);
    if (static_cast<float>(v) == f && (v != 0 || !std::signbit(f))) {
      const uint32_t magnitude = v < 0 ? 0u - static_cast<uint32_t>(v) : static_cast<uint32_t>(v);
      int trailing = 0;
      for (uint32_t m = magnitude; m != 0 && m % 10 == 0; m /= 10) ++trailing;
      char* end = std::to_chars(p, p + kMaxFloatText, v).ptr;
      const int digits = static_cast<int>(end - p) - (v < 0 ? 1 : 0);
      if (trailing <= 4 + (digits - trailing > 1 ? 1 : 0)) return end;
    }
  }
  if (std::isfinite(f)) return std::to_chars(p, p + kMaxFloatText, f).ptr;
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isinf(f)) return f > 0 ? PutLiteral(p, "\"Infinity\"") : PutLiteral(p, "\"-Infinity\"");
  if (bits == kCanonicalNan) return PutLiteral(p, "\"NaN\"");
  p = PutLiteral(p, "\"0x");
  for (int shift = 24; shift >= 0; shift -= 8) {
    std::memcpy(p, &kHexPairs[2 * ((bits >> shift) & 0xff)], 2);
    p += 2;
  }
  *p++ = '"';
  return p;
}

}  // namespace scenecrdt::replay
