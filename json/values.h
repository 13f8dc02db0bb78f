// SPDX-License-Identifier: Apache-2.0
// Owns typed access to read JSON values (members, u32, float32) and the float32 text form the
// command line writes. nlohmann's dump() prints a float through double (0.1f becomes
// 0.10000000149011612) and non-finite values as null, so floats are written here: the
// shortest text that reads back to the same float, NaN and infinities as strings
// (docs/JSON.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "scenecrdt/json/reader.h"

namespace scenecrdt::json {

// Object member `key`, or nullptr when absent or when `v` is not an object.
const Json* Member(const Json& v, std::string_view key);

// A non-negative integer <= 0xFFFFFFFF written without fraction or exponent.
std::optional<uint32_t> AsU32(const Json& v);

// Appends the shortest decimal form that reads back to exactly `f` (std::to_chars). Non-finite
// values cannot be JSON numbers: they are written as the strings "NaN", "Infinity",
// "-Infinity", and a NaN other than the canonical quiet NaN (0x7fc00000) as its bits,
// "0x7fc00001". AsFloat reads all of these back to the same bits.
void AppendFloat(float f, std::string& out);

// Reads a float written by AppendFloat, or any JSON number rounded double -> float as
// JavaScript's Float32 store does. nullopt for other values.
std::optional<float> AsFloat(const Json& v);

}  // namespace scenecrdt::json
