// SPDX-License-Identifier: Apache-2.0
// Owns lowercase hex encoding of byte strings and its strict inverse (JSON "dataHex" fields).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace scenecrdt::protocol {

std::string ToHex(std::span<const uint8_t> bytes);
void AppendHex(std::span<const uint8_t> bytes, std::string& out);
// Accepts upper and lower case; nullopt for odd length or a non-hex character.
std::optional<std::vector<uint8_t>> FromHex(std::string_view hex);

}  // namespace scenecrdt::protocol
