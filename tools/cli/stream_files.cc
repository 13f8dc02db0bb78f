// SPDX-License-Identifier: Apache-2.0
// Owns reading and strictly decoding stream files for replay-like commands.
#include "tools/cli/stream_files.h"

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
      if (load_error) *load_error = {files[i], r.error()};
      return r.error();
    }
  }
  return out;
}

void PrintLoadError(std::string_view command, const LoadError& e) {
  PrintError(command, e.file == "-" ? std::string("stdin") : e.file, e.error);
}

}  // namespace scenecrdt::cli
