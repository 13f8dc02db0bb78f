// SPDX-License-Identifier: Apache-2.0
// Owns the I/O and error-printing helpers of the command line.
#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

Result<std::vector<uint8_t>> ReadInput(const std::string& path) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return MakeError(ErrorCode::kIo, "cannot open the input file");
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  while (true) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    out.insert(out.end(), buf, buf + n);
    if (n < sizeof buf) break;
  }
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (failed) return MakeError(ErrorCode::kIo, "error while reading the input");
  return out;
}

Result<void> WriteOutput(const std::string& path, std::span<const uint8_t> bytes) {
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) return MakeError(ErrorCode::kIo, "cannot open the output file for writing");
  const std::size_t n = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool ok = n == bytes.size() && (f == stdout ? std::fflush(f) == 0 : std::fclose(f) == 0);
  if (!ok) return MakeError(ErrorCode::kIo, "error while writing the output");
  return {};
}

Result<void> WriteText(const std::string& path, std::string_view text) {
  return WriteOutput(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void PrintError(std::string_view command, std::string_view what, const Error& e) {
  std::string line = "scenecrdt ";
  line += command;
  line += ": ";
  line += what;
  line += ": ";
  line += ErrorCodeName(e.code);
  line += ": ";
  line += e.detail;
  if (e.has_offset()) line += " (at byte offset " + std::to_string(e.offset) + ")";
  std::fprintf(stderr, "%s\n", line.c_str());
}

void PrintMessage(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "scenecrdt %.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace scenecrdt::cli
