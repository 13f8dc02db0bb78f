// SPDX-License-Identifier: Apache-2.0
// Owns hex encoding and decoding.
#include "scenecrdt/protocol/hex.h"

namespace scenecrdt::protocol {
namespace {
constexpr char kDigits[] = "0123456789abcdef";
int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

void AppendHex(std::span<const uint8_t> bytes, std::string& out) {
  const std::size_t at = out.size();
  out.resize(at + 2 * bytes.size());
  char* p = out.data() + at;
  for (uint8_t b : bytes) {
    *p++ = kDigits[b >> 4];
    *p++ = kDigits[b & 15];
  }
}

std::string ToHex(std::span<const uint8_t> bytes) {
  std::string s;
  AppendHex(bytes, s);
  return s;
}

std::optional<std::vector<uint8_t>> FromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = Nibble(hex[2 * i]);
    const int lo = Nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

}  // namespace scenecrdt::protocol
