// SPDX-License-Identifier: Apache-2.0
// Owns reading and strictly decoding stream files for replay-like commands, and telling a
// JSON file given in place of a DCL stream.
#include "tools/cli/stream_files.h"

#include <algorithm>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

Result<LoadedStreams> LoadStreams(const std::vector<std::string>& files, LoadError* load_error) {
  LoadedStreams out;
  out.buffers.reserve(files.size());
  for (const std::string& file : files) {
    auto bytes = ReadInput(file);
    if (!bytes.has_value()) {
      if (load_error) *load_error = {file, bytes.error()};
      return bytes.error();
    }
    out.buffers.push_back(std::move(*bytes));
  }
  // Decode after every buffer is in place, so the views stay valid.
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto r =
        protocol::DecodeStream(out.buffers[i], protocol::DecodeOptions{},
                               [&](const protocol::CrdtMessage& m) { out.messages.push_back(m); });
    if (!r.has_value()) {
      if (load_error) *load_error = {files[i], r.error(), LooksLikeJsonText(out.buffers[i])};
      return r.error();
    }
  }
  return out;
}

void PrintLoadError(std::string_view command, const LoadError& e) {
  PrintError(command, e.file == "-" ? std::string("stdin") : e.file, e.error);
  if (e.looks_like_json) PrintJsonLinesHint(command);
}

bool LooksLikeJsonText(std::span<const uint8_t> head) {
  head = head.first(std::min<std::size_t>(head.size(), 256));
  bool started = false;
  for (uint8_t b : head) {
    const bool space = b == ' ' || b == '\t' || b == '\n' || b == '\r';
    if (!space && (b < 0x20 || b == 0x7F)) return false;  // a control byte: binary
    if (!started && !space) {
      if (b != '{' && b != '[') return false;
      started = true;
    }
  }
  return started;
}

void PrintJsonLinesHint(std::string_view command) {
  PrintMessage(command,
               "this looks like JSON lines; use `scenecrdt encode FILE -o OUT` to turn it into "
               "a DCL stream first");
}

}  // namespace scenecrdt::cli
