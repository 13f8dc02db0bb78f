// SPDX-License-Identifier: Apache-2.0
// Owns base64url decoding and encoding for JWT parts. Written here rather than mapped onto
// OpenSSL's EVP_DecodeBlock, which decodes the padded '+/' alphabet, skips whitespace and
// returns padding as zero bytes: each of those would need undoing to stay strict.
#include "scenecrdt/server/auth/jwt_base64url.h"

#include <array>

namespace scenecrdt::server {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr uint8_t kInvalid = 0xff;

constexpr std::array<uint8_t, 256> MakeDecodeTable() {
  std::array<uint8_t, 256> table{};
  for (uint8_t& v : table) v = kInvalid;
  for (uint8_t i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  return table;
}
constexpr std::array<uint8_t, 256> kDecode = MakeDecodeTable();

}  // namespace

Result<std::vector<uint8_t>> Base64UrlDecode(std::string_view text) {
  // 4n+1 characters would leave 6 bits: no byte count encodes to that length.
  if (text.size() % 4 == 1) {
    return MakeError(ErrorCode::kParse, "base64url: impossible length", text.size());
  }
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t bits = 0;
  int num_bits = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const uint8_t v = kDecode[static_cast<unsigned char>(text[i])];
    if (v == kInvalid) return MakeError(ErrorCode::kParse, "base64url: bad character", i);
    bits = (bits << 6) | v;
    num_bits += 6;
    if (num_bits >= 8) {
      num_bits -= 8;
      out.push_back(static_cast<uint8_t>(bits >> num_bits));
      bits &= (1u << num_bits) - 1;
    }
  }
  // The 2 or 4 bits left over must be zero, or two spellings would decode to the same bytes.
  if (bits != 0) {
    return MakeError(ErrorCode::kParse, "base64url: non-zero trailing bits", text.size() - 1);
  }
  return out;
}

std::string Base64UrlEncode(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const uint32_t v = uint32_t{bytes[i]} << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (rest == 2) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

}  // namespace scenecrdt::server
