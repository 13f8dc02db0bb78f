// SPDX-License-Identifier: Apache-2.0
// Owns the strict base64url codec of compact JWS tokens (RFC 7515 section 2: RFC 4648 section 5
// alphabet, no padding, no whitespace). Decoding refuses anything a canonical encoder would not
// produce, so one byte string has exactly one accepted spelling.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// The bytes `text` encodes. Errors (kParse): a character outside [A-Za-z0-9_-] ('=' padding
// included), a length of 4n+1, or non-zero bits after the last whole byte.
Result<std::vector<uint8_t>> Base64UrlDecode(std::string_view text);

// The unpadded base64url spelling of `bytes`.
std::string Base64UrlEncode(std::span<const uint8_t> bytes);
inline std::string Base64UrlEncode(std::string_view text) {
  return Base64UrlEncode(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace scenecrdt::server
