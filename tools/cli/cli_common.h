// SPDX-License-Identifier: Apache-2.0
// Owns what every subcommand shares: file and stdin I/O, error printing and the exit-status
// convention (0 ok, 1 check failed, 2 bad input or usage). Options are declared and parsed in
// cli_app.h; progress output is in progress.h.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;

using Args = std::span<const std::string_view>;

// Reads a whole file, or stdin for "-".
Result<std::vector<uint8_t>> ReadInput(const std::string& path);
// Writes bytes to a file (or stdout for "-"), replacing it.
Result<void> WriteOutput(const std::string& path, std::span<const uint8_t> bytes);
Result<void> WriteText(const std::string& path, std::string_view text);

// "scenecrdt <command>: <what>: <reason> (at byte offset N)" on stderr.
void PrintError(std::string_view command, std::string_view what, const Error& e);
// "scenecrdt <command>: <message>" on stderr.
void PrintMessage(std::string_view command, std::string_view message);

// Buffered stdout writer for line output (flushes every 64 KiB and at destruction).
class StdoutBuffer {
 public:
  ~StdoutBuffer() { Flush(); }
  std::string& buffer() { return buffer_; }
  void MaybeFlush() {
    if (buffer_.size() >= 64 * 1024) Flush();
  }
  void Flush() {
    if (!buffer_.empty()) std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    buffer_.clear();
    std::fflush(stdout);
  }

 private:
  std::string buffer_;
};

}  // namespace scenecrdt::cli
