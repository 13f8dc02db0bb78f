// SPDX-License-Identifier: Apache-2.0
// Owns loading DCL stream files for the commands that replay them: held whole (replay --shuffle,
// converge: they permute a held set), bounded by --max-memory-mb, messages kept as views into
// buffers the result owns; or merged in order window by window in bounded memory (MergeFiles).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"
#include "tools/cli/stream/stream_reader.h"

namespace scenecrdt::cli {

struct LoadedStreams {
  std::vector<std::vector<uint8_t>> buffers;    // one per file; messages point into them
  std::vector<protocol::CrdtMessage> messages;  // in file order, then stream order
};

struct LoadError {
  std::string file;
  Error error;
  bool looks_like_json = false;    // the file is text that starts like JSON (LooksLikeJsonText)
  bool over_memory_limit = false;  // LoadStreams stopped at max_bytes
  uint64_t max_bytes = 0;
};

// True when `head` (the first bytes of an input) is text that starts like JSON: after white
// space, '{' or '['; no control bytes in the first 256 bytes. A DCL stream never is: its
// first u32 is a message length, and four text bytes make it at least 0x20202020.
bool LooksLikeJsonText(std::span<const uint8_t> head);

// Printed after a decode error on such input: "this looks like JSON lines; use `scenecrdt
// encode` ...". Every command that reads a DCL stream prints it (decode, replay, converge,
// inspect, send, bench).
void PrintJsonLinesHint(std::string_view command);

// Default of --max-memory-mb, the bound of a held input (LoadStreams).
inline constexpr uint64_t kDefaultMaxMemoryMb = 2048;

// What holding the input costs: the file bytes plus one decoded message entry per message.
inline uint64_t HeldBytes(uint64_t file_bytes, uint64_t messages) {
  return file_bytes + messages * sizeof(protocol::CrdtMessage);
}

// Reads a whole file ('-' = stdin) unless it is larger than `max_bytes` (*over set, nothing
// returned).
Result<std::vector<uint8_t>> ReadBounded(const std::string& path, uint64_t max_bytes, bool* over);

// Reads and decodes every file ("-" = stdin). On a malformed stream returns the file and the
// error (with its byte offset); messages before the fault are not returned. When holding the
// input (HeldBytes) would pass `max_bytes`, stops reading and returns ErrorCode::kInvalidArgument
// (load_error->over_memory_limit set).
Result<LoadedStreams> LoadStreams(const std::vector<std::string>& files, LoadError* load_error,
                                  uint64_t max_bytes = ~uint64_t{0});

// Merges every file in order without holding it: `merge` gets windows of whole messages (a
// window may end inside a message; `merge` then returns ErrorCode::kTruncated at that message's
// offset in the window, having merged everything before it, as CrdtStore::MergeStream does).
// Memory: one window (stream_reader.h).
using WindowMerge = std::function<Result<void>(std::span<const uint8_t> window)>;
Result<void> MergeFiles(const std::vector<std::string>& files, const WindowMerge& merge,
                        LoadError* load_error, const WindowOptions& options = {});

// Parses --max-memory-mb (default kDefaultMaxMemoryMb) into bytes; prints the error and returns
// nullopt for 0.
std::optional<uint64_t> MaxMemoryBytes(std::string_view command, std::optional<uint64_t> mb);

// Prints "scenecrdt <command>: <file>: <reason> (at byte offset N)" for a LoadStreams failure,
// and the JSON-lines hint when it applies.
void PrintLoadError(std::string_view command, const LoadError& e);

}  // namespace scenecrdt::cli
