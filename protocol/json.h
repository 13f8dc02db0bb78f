// SPDX-License-Identifier: Apache-2.0
// Owns the small JSON reader and writer shared by the command line (decode/encode/replay
// output) and the server's configuration files (--auth). Bounded: nesting depth and input
// size are limited, numbers keep their source text so u32 values stay exact, and floats are
// written in the shortest form that reads back to the same float.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::protocol {

class JsonValue {
 public:
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<JsonValue>;
  // Members in source order; Find() returns the last of duplicate keys.
  using Object = std::vector<std::pair<std::string, JsonValue>>;

  JsonValue() = default;
  static JsonValue Bool(bool b);
  static JsonValue Number(std::string text);
  static JsonValue String(std::string s);
  static JsonValue MakeArray(Array a);
  static JsonValue MakeObject(Object o);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_bool() const { return kind_ == Kind::kBool; }

  bool bool_value() const { return bool_; }
  // The string contents (kString) or the number's source text (kNumber).
  const std::string& text() const { return text_; }
  const Array& array() const;
  const Object& object() const;

  // Object member, or nullptr when absent or when this is not an object.
  const JsonValue* Find(std::string_view key) const;

  // A non-negative integer <= 0xFFFFFFFF written without fraction or exponent.
  std::optional<uint32_t> AsU32() const;
  std::optional<uint64_t> AsU64() const;
  std::optional<double> AsDouble() const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  std::string text_;
  Array array_;
  Object object_;
};

struct JsonParseOptions {
  std::size_t max_depth = 64;
  std::size_t max_bytes = 64u << 20;
};

// Parses one JSON document (surrounding white space allowed). Errors carry the byte offset.
Result<JsonValue> ParseJson(std::string_view text, const JsonParseOptions& options = {});

// Appends `s` as a JSON string literal (quotes and escapes included).
void AppendJsonString(std::string_view s, std::string& out);
// Appends the shortest decimal form that reads back to exactly `f`. Non-finite values cannot
// be JSON numbers: they are written as the strings "NaN", "Infinity", "-Infinity", and a NaN
// other than the canonical quiet NaN (0x7fc00000) as its bits, "0x7fc00001". ParseFloatJson
// reads all of these back to the same bits.
void AppendJsonFloat(float f, std::string& out);
// Reads a float written by AppendJsonFloat (or any JSON number, rounded double -> float as
// JavaScript's Float32 store does).
std::optional<float> ParseFloatJson(const JsonValue& v);

}  // namespace scenecrdt::protocol
