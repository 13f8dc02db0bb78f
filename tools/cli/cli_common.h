// SPDX-License-Identifier: Apache-2.0
// Owns what every subcommand shares: argument scanning, file and stdin I/O, error printing
// and the exit-status convention (0 ok, 1 check failed, 2 bad input or usage). Progress
// output is in progress.h.
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

// Walks argv: flags ("--name value", "--name=value", "-o value", boolean "--name") and
// positionals. Unknown flags are reported by Finish().
class ArgScanner {
 public:
  ArgScanner(std::string_view command, Args args);

  bool Help() const { return help_; }
  // A flag with a value; nullopt when absent. Records an error if the value is missing.
  std::optional<std::string> Value(std::string_view long_name, std::string_view short_name = {});
  // Every value of a repeatable flag, in order (empty when absent).
  std::vector<std::string> Values(std::string_view long_name);
  // A boolean flag.
  bool Flag(std::string_view long_name);
  // Typed values; record an error (and return nullopt) when not parseable.
  std::optional<uint64_t> U64(std::string_view long_name, std::string_view short_name = {});
  std::optional<double> Double(std::string_view long_name);
  // Remaining positionals (call after all flags were taken).
  std::vector<std::string> Positionals();
  // Reports unknown flags or value errors on stderr; true when the command may run.
  bool Finish();

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::vector<bool> used_;
  std::string error_;
  bool help_ = false;
};

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
