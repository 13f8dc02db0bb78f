// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the JSON reader (json/reader.h) and the typed accessors (json/values.h):
// any bytes parse or fail cleanly; ReadJson accepts exactly what nlohmann's own parser accepts
// (less what its bounds refuse) as the same document; tight bounds only ever refuse more; error
// offsets lie inside the text; every array element is located, in order; a document written
// back by nlohmann reads back the same; u32 and float32 readers agree with the float writer.
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"

using scenecrdt::json::AppendFloat;
using scenecrdt::json::AsFloat;
using scenecrdt::json::AsU32;
using scenecrdt::json::ElementOffsets;
using scenecrdt::json::Json;
using scenecrdt::json::ReadJson;
using scenecrdt::json::ReadLimits;

namespace {

// Accessor laws and element offsets on every node of an accepted document.
void CheckNode(const Json& v, std::string_view text, const ElementOffsets& offsets) {
  if (auto u = AsU32(v)) {
    if (!v.is_number_unsigned() || v.dump() != std::to_string(*u)) std::abort();
  }
  if (auto f = AsFloat(v)) {
    std::string written;
    AppendFloat(*f, written);
    auto again = ReadJson(written);
    if (!again.has_value()) std::abort();
    auto g = AsFloat(*again);
    if (!g || std::bit_cast<uint32_t>(*g) != std::bit_cast<uint32_t>(*f)) std::abort();
  }
  if (v.is_array()) {
    uint64_t previous = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto at = offsets.Of(v, i);
      if (!at || *at >= text.size() || (i > 0 && *at <= previous)) std::abort();
      if (v[i].is_structured() && text[*at] != (v[i].is_array() ? '[' : '{')) std::abort();
      previous = *at;
    }
    if (offsets.Of(v, v.size()).has_value()) std::abort();
  }
  if (v.is_structured()) {
    for (const Json& child : v) CheckNode(child, text, offsets);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 16)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  ElementOffsets offsets;
  auto doc = ReadJson(text, {}, &offsets);
  if (!doc.has_value() && doc.error().offset > size) std::abort();
  const Json theirs = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (theirs.is_discarded()) {
    if (doc.has_value()) std::abort();
  } else if (!doc.has_value()) {
    // nlohmann stops at a NUL byte; the depth bound is ours.
    const std::string_view why = doc.error().detail;
    if (why != "JSON nested too deeply" && why != "NUL byte in JSON text") std::abort();
  } else if (*doc != theirs) {
    std::abort();  // numbers compare by value: our -0.0 equals their integer 0
  }

  // A tight size bound refuses without looking further; a tight depth bound may only refuse
  // documents the default accepts, never accept one it refuses.
  ReadLimits tight;
  tight.max_depth = 3;
  tight.max_bytes = size / 2;
  if (size > 0 && ReadJson(text, tight).has_value()) std::abort();
  tight.max_bytes = size;
  auto shallow = ReadJson(text, tight);
  if (shallow.has_value() && (!doc.has_value() || *shallow != *doc)) std::abort();
  if (!doc.has_value()) return 0;

  // Written by nlohmann, read back by us: the same document.
  auto again = ReadJson(doc->dump());
  if (!again.has_value() || *again != *doc) std::abort();

  CheckNode(*doc, text, offsets);
  return 0;
}
