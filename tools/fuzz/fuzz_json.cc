// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the JSON reader (protocol/json.h): any bytes parse or fail cleanly within
// the depth and size bounds; an accepted document printed back (with AppendJsonString and the
// numbers' source text) parses to the same tree; number accessors and the float writer agree.
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/json.h"

using scenecrdt::protocol::AppendJsonFloat;
using scenecrdt::protocol::AppendJsonString;
using scenecrdt::protocol::JsonParseOptions;
using scenecrdt::protocol::JsonValue;
using scenecrdt::protocol::ParseFloatJson;
using scenecrdt::protocol::ParseJson;

namespace {

// Compact printer: the library has writers for strings and floats only, so the tree printer
// lives here. Numbers keep their source text, which is valid JSON by construction.
void Print(const JsonValue& v, std::string& out) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull:
      out += "null";
      break;
    case JsonValue::Kind::kBool:
      out += v.bool_value() ? "true" : "false";
      break;
    case JsonValue::Kind::kNumber:
      out += v.text();
      break;
    case JsonValue::Kind::kString:
      AppendJsonString(v.text(), out);
      break;
    case JsonValue::Kind::kArray: {
      out += '[';
      bool first = true;
      for (const JsonValue& item : v.array()) {
        if (!first) out += ',';
        first = false;
        Print(item, out);
      }
      out += ']';
      break;
    }
    case JsonValue::Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.object()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(key, out);
        out += ':';
        Print(value, out);
      }
      out += '}';
      break;
    }
    default:
      std::abort();
  }
}

bool Equal(const JsonValue& a, const JsonValue& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case JsonValue::Kind::kNull:
      return true;
    case JsonValue::Kind::kBool:
      return a.bool_value() == b.bool_value();
    case JsonValue::Kind::kNumber:
    case JsonValue::Kind::kString:
      return a.text() == b.text();
    case JsonValue::Kind::kArray: {
      if (a.array().size() != b.array().size()) return false;
      for (std::size_t i = 0; i < a.array().size(); ++i) {
        if (!Equal(a.array()[i], b.array()[i])) return false;
      }
      return true;
    }
    case JsonValue::Kind::kObject: {
      if (a.object().size() != b.object().size()) return false;
      for (std::size_t i = 0; i < a.object().size(); ++i) {
        if (a.object()[i].first != b.object()[i].first) return false;
        if (!Equal(a.object()[i].second, b.object()[i].second)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// Accessor laws on every node: a u32/u64 reads back as its own text (JSON has no leading
// zeros or '+'), and a float written by AppendJsonFloat reads back to the same bits.
void CheckAccessors(const JsonValue& v) {
  if (auto u = v.AsU64()) {
    if (std::to_string(*u) != v.text()) std::abort();
    auto u32 = v.AsU32();
    if (u32.has_value() != (*u <= 0xFFFFFFFFu)) std::abort();
  } else if (v.AsU32()) {
    std::abort();
  }
  (void)v.AsDouble();
  if (auto f = ParseFloatJson(v)) {
    std::string text;
    AppendJsonFloat(*f, text);
    auto again = ParseJson(text);
    if (!again.has_value()) std::abort();
    auto g = ParseFloatJson(*again);
    if (!g || std::bit_cast<uint32_t>(*g) != std::bit_cast<uint32_t>(*f)) std::abort();
  }
  if (v.is_array()) {
    for (const JsonValue& item : v.array()) CheckAccessors(item);
  } else if (v.is_object()) {
    for (const auto& member : v.object()) CheckAccessors(member.second);
    if (!v.object().empty() && v.Find(v.object().back().first) != &v.object().back().second) {
      std::abort();  // Find() returns the last of duplicate keys
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 16)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto doc = ParseJson(text);
  // A tight size bound must refuse without looking further; a tight depth bound may only
  // refuse documents the default accepts, never accept one it refuses.
  JsonParseOptions tight;
  tight.max_depth = 3;
  tight.max_bytes = size / 2;
  auto small = ParseJson(text, tight);
  if (size > 0 && small.has_value()) std::abort();
  tight.max_bytes = size;
  auto shallow = ParseJson(text, tight);
  if (shallow.has_value() && !doc.has_value()) std::abort();
  if (!doc.has_value()) return 0;
  if (shallow.has_value() && !Equal(*shallow, *doc)) std::abort();

  std::string printed;
  Print(*doc, printed);
  auto again = ParseJson(printed);
  if (!again.has_value() || !Equal(*again, *doc)) std::abort();
  std::string reprinted;
  Print(*again, reprinted);
  if (reprinted != printed) std::abort();

  CheckAccessors(*doc);
  return 0;
}
