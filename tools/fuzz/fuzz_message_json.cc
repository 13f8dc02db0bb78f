// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the JSON-lines message form of `scenecrdt encode` / `decode`
// (replay/message_json.h): any text is accepted or refused cleanly, and what is accepted
// round trips: JSON -> message bytes -> decode -> JSON -> bytes gives the same bytes, and the
// printed JSON is stable. A refusal always says why, and for a whole input names a line of it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/replay/message_json.h"

using scenecrdt::json::ReadJson;
using scenecrdt::protocol::CrdtMessage;
using scenecrdt::protocol::DecodeOptions;
using scenecrdt::protocol::DecodeStream;
using scenecrdt::replay::AppendMessageJson;
using scenecrdt::replay::EncodeJsonText;
using scenecrdt::replay::EncodeMessageJson;
using scenecrdt::replay::EncodeProblem;

namespace {

// Decodes `bytes` (which the encoder wrote, so it must decode completely) into JSON lines.
std::string DecodeToJsonLines(std::span<const uint8_t> bytes, std::size_t* count) {
  std::string lines;
  *count = 0;
  auto r = DecodeStream(bytes, DecodeOptions{}, [&](const CrdtMessage& m) {
    AppendMessageJson(m, lines);
    lines += '\n';
    ++*count;
  });
  if (!r.has_value()) std::abort();
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 14)) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // One message object.
  std::string problem;
  if (auto obj = ReadJson(text); obj.has_value()) {
    std::vector<uint8_t> bytes;
    if (EncodeMessageJson(*obj, bytes, problem).has_value()) {
      std::size_t count = 0;
      const std::string json = DecodeToJsonLines(bytes, &count);
      if (count != 1) std::abort();
      auto back = ReadJson(json);
      if (!back.has_value()) std::abort();
      std::vector<uint8_t> again;
      if (!EncodeMessageJson(*back, again, problem).has_value() || again != bytes) std::abort();
      if (DecodeToJsonLines(again, &count) != json) std::abort();
    } else if (problem.empty()) {
      std::abort();  // every refusal says why
    }
  }

  // A whole `encode` input (JSON lines, an array, or {"ops": [...]}).
  EncodeProblem refused;
  auto stream = EncodeJsonText(text, refused);
  if (!stream.has_value()) {
    // Every refusal names a line of the input and says why.
    const std::size_t lines =
        1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    if (refused.message.empty() || refused.line < 1 || refused.line > lines) std::abort();
    return 0;
  }
  std::size_t count = 0;
  const std::string lines = DecodeToJsonLines(*stream, &count);
  auto again = EncodeJsonText(lines, refused);
  if (!again.has_value() || *again != *stream) std::abort();
  return 0;
}
