// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the JSON-lines message form of `scenecrdt encode` / `decode`
// (tools/cli/message_json.h): any text is accepted or refused cleanly, and what is accepted
// round trips: JSON -> message bytes -> decode -> JSON -> bytes gives the same bytes, and the
// printed JSON is stable.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/json.h"
#include "tools/cli/message_json.h"

using scenecrdt::cli::AppendMessageJson;
using scenecrdt::cli::EncodeJsonText;
using scenecrdt::cli::EncodeMessageJson;
using scenecrdt::protocol::CrdtMessage;
using scenecrdt::protocol::DecodeOptions;
using scenecrdt::protocol::DecodeStream;
using scenecrdt::protocol::ParseJson;

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
  if (auto obj = ParseJson(text); obj.has_value()) {
    std::vector<uint8_t> bytes;
    if (EncodeMessageJson(*obj, bytes).has_value()) {
      std::size_t count = 0;
      const std::string json = DecodeToJsonLines(bytes, &count);
      if (count != 1) std::abort();
      auto back = ParseJson(json);
      if (!back.has_value()) std::abort();
      std::vector<uint8_t> again;
      if (!EncodeMessageJson(*back, again).has_value() || again != bytes) std::abort();
      if (DecodeToJsonLines(again, &count) != json) std::abort();
    }
  }

  // A whole `encode` input (JSON lines, an array, or {"ops": [...]}).
  std::size_t error_line = 0;
  auto stream = EncodeJsonText(text, &error_line);
  if (!stream.has_value()) return 0;
  std::size_t count = 0;
  const std::string lines = DecodeToJsonLines(*stream, &count);
  auto again = EncodeJsonText(lines, &error_line);
  if (!again.has_value() || *again != *stream) std::abort();
  return 0;
}
