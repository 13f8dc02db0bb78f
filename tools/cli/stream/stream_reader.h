// SPDX-License-Identifier: Apache-2.0
// Owns reading DCL stream files in bounded memory for replay-like commands: a file is mapped
// (or, for stdin and other unmappable inputs, read) one window at a time; each window starts at
// a message boundary, and a message cut by the window's end starts the next window. Memory: one
// window (kStreamWindowBytes, grown only while a single message does not fit), whatever the
// file size (docs/CLI.md "Memory").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cli {

inline constexpr std::size_t kStreamWindowBytes = std::size_t{8} << 20;

struct WindowOptions {
  std::size_t window_bytes = kStreamWindowBytes;  // values below 1 act as 1
  bool force_read = false;  // read() even where mmap would do (tests cover both paths)
};

// Called with bytes that start at a message boundary and their offset in the file. Returns how
// many bytes it consumed: the offset of the first message that the window cuts (or the whole
// window); an error stops the walk and is returned as it is.
using WindowSink =
    std::function<Result<std::size_t>(std::span<const uint8_t> bytes, uint64_t file_offset)>;

// Walks `path` ('-' = stdin). When the input ends inside a message: ErrorCode::kTruncated at that
// message's offset. kIo when the file cannot be opened or read. `head` (optional) receives the
// first bytes of the file (up to 256), to tell JSON given by mistake.
Result<void> ReadWindows(const std::string& path, const WindowOptions& options,
                         const WindowSink& sink, std::string* head = nullptr);

// The consumed count for a walker's result over `bytes`: all of them when it decoded to the end,
// the offset of the cut message for ErrorCode::kTruncated, otherwise the error with its offset
// made absolute.
inline Result<std::size_t> ConsumedOrError(const Result<void>& r, std::size_t window_size,
                                           uint64_t file_offset) {
  if (r.has_value()) return window_size;
  if (r.error().code == ErrorCode::kTruncated) return static_cast<std::size_t>(r.error().offset);
  Error e = r.error();
  if (e.has_offset()) e.offset += file_offset;
  return e;
}

// Calls on_message(const CrdtMessage&) for every message of `path` in order (views valid during
// the call only), decoding with `decode` window by window.
template <class OnMessage>
Result<void> ForEachMessage(const std::string& path, const protocol::DecodeOptions& decode,
                            const WindowOptions& options, OnMessage&& on_message,
                            std::string* head = nullptr) {
  return ReadWindows(
      path, options,
      [&](std::span<const uint8_t> bytes, uint64_t file_offset) -> Result<std::size_t> {
        return ConsumedOrError(protocol::DecodeStream(bytes, decode, on_message), bytes.size(),
                               file_offset);
      },
      head);
}

}  // namespace scenecrdt::cli
