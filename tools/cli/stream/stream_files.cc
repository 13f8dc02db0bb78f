// SPDX-License-Identifier: Apache-2.0
// Owns reading and strictly decoding stream files for replay-like commands, and telling a
// JSON file given in place of a DCL stream; or merging them in order window by window.
#include "tools/cli/stream/stream_files.h"

#include <algorithm>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

namespace {

Error OverLimit(LoadError* load_error, const std::string& file, uint64_t max_bytes) {
  Error e = MakeError(ErrorCode::kInvalidArgument,
                      "holding the input needs more memory than --max-memory-mb allows");
  if (load_error) *load_error = {file, e, false, true, max_bytes};
  return e;
}

}  // namespace

Result<std::vector<uint8_t>> ReadBounded(const std::string& path, uint64_t max_bytes, bool* over) {
  std::vector<uint8_t> out;
  Result<void> r =
      ReadWindows(path, WindowOptions{std::size_t{1} << 20, false},
                  [&](std::span<const uint8_t> bytes, uint64_t) -> Result<std::size_t> {
                    if (out.size() + bytes.size() > max_bytes) {
                      *over = true;
                      return MakeError(ErrorCode::kInvalidArgument, "over the memory bound");
                    }
                    out.insert(out.end(), bytes.begin(), bytes.end());
                    return bytes.size();
                  });
  if (!r.has_value() && r.error().code != ErrorCode::kTruncated) return r.error();
  return out;  // a cut message at the end is DecodeStream's to report, with its offset
}

Result<LoadedStreams> LoadStreams(const std::vector<std::string>& files, LoadError* load_error,
                                  uint64_t max_bytes) {
  LoadedStreams out;
  out.buffers.reserve(files.size());
  uint64_t file_bytes = 0;
  for (const std::string& file : files) {
    bool over = false;
    auto bytes = ReadBounded(file, max_bytes - std::min(max_bytes, file_bytes), &over);
    if (over) return OverLimit(load_error, file, max_bytes);
    if (!bytes.has_value()) {
      if (load_error) *load_error = {file, bytes.error()};
      return bytes.error();
    }
    file_bytes += bytes->size();
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
    if (HeldBytes(file_bytes, out.messages.size()) > max_bytes) {
      return OverLimit(load_error, files[i], max_bytes);
    }
  }
  return out;
}

Result<void> MergeFiles(const std::vector<std::string>& files, const WindowMerge& merge,
                        LoadError* load_error, const WindowOptions& options) {
  for (const std::string& file : files) {
    std::string head;
    Result<void> r = ReadWindows(
        file, options,
        [&](std::span<const uint8_t> bytes, uint64_t file_offset) -> Result<std::size_t> {
          return ConsumedOrError(merge(bytes), bytes.size(), file_offset);
        },
        &head);
    if (!r.has_value()) {
      if (load_error) {
        *load_error = {file, r.error(),
                       LooksLikeJsonText(std::span<const uint8_t>(
                           reinterpret_cast<const uint8_t*>(head.data()), head.size()))};
      }
      return r.error();
    }
  }
  return {};
}

std::optional<uint64_t> MaxMemoryBytes(std::string_view command, std::optional<uint64_t> mb) {
  const uint64_t value = mb.value_or(kDefaultMaxMemoryMb);
  if (value == 0 || value > (uint64_t{1} << 40)) {
    PrintMessage(command, "--max-memory-mb takes 1..1099511627776");
    return std::nullopt;
  }
  return value << 20;
}

void PrintLoadError(std::string_view command, const LoadError& e) {
  const std::string file = e.file == "-" ? std::string("stdin") : e.file;
  if (e.over_memory_limit) {
    PrintMessage(command, file + ": holding the input needs more than --max-memory-mb " +
                              std::to_string(e.max_bytes >> 20) + " (the file bytes plus " +
                              std::to_string(sizeof(protocol::CrdtMessage)) +
                              " bytes per message); raise --max-memory-mb, or use a smaller "
                              "input (in-order `replay` and `inspect` stream any size)");
    return;
  }
  PrintError(command, file, e.error);
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
