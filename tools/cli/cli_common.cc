// SPDX-License-Identifier: Apache-2.0
// Owns argument scanning and the I/O helpers of the command line.
#include "tools/cli/cli_common.h"

#include <charconv>

namespace scenecrdt::cli {

ArgScanner::ArgScanner(std::string_view command, Args args) : command_(command) {
  for (std::string_view a : args) {
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    // Split "--name=value" into two arguments.
    if (a.size() > 2 && a.substr(0, 2) == "--" && a.find('=') != std::string_view::npos) {
      const auto eq = a.find('=');
      args_.emplace_back(a.substr(0, eq));
      args_.emplace_back(a.substr(eq + 1));
    } else {
      args_.emplace_back(a);
    }
  }
  used_.assign(args_.size(), false);
}

std::optional<std::string> ArgScanner::Value(std::string_view long_name,
                                             std::string_view short_name) {
  std::optional<std::string> result;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || (args_[i] != long_name && (short_name.empty() || args_[i] != short_name))) {
      continue;
    }
    used_[i] = true;
    if (i + 1 >= args_.size()) {
      error_ = std::string(long_name) + " needs a value";
      return std::nullopt;
    }
    used_[i + 1] = true;
    result = args_[i + 1];  // the last occurrence wins
    ++i;
  }
  return result;
}

std::vector<std::string> ArgScanner::Values(std::string_view long_name) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (used_[i] || args_[i] != long_name) continue;
    used_[i] = true;
    if (i + 1 >= args_.size()) {
      error_ = std::string(long_name) + " needs a value";
      break;
    }
    used_[i + 1] = true;
    out.push_back(args_[++i]);
  }
  return out;
}

bool ArgScanner::Flag(std::string_view long_name) {
  bool found = false;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i] && args_[i] == long_name) {
      used_[i] = true;
      found = true;
    }
  }
  return found;
}

std::optional<uint64_t> ArgScanner::U64(std::string_view long_name, std::string_view short_name) {
  auto v = Value(long_name, short_name);
  if (!v) return std::nullopt;
  uint64_t out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    error_ = std::string(long_name) + " needs a non-negative integer, got '" + *v + "'";
    return std::nullopt;
  }
  return out;
}

std::optional<double> ArgScanner::Double(std::string_view long_name) {
  auto v = Value(long_name);
  if (!v) return std::nullopt;
  double out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    error_ = std::string(long_name) + " needs a number, got '" + *v + "'";
    return std::nullopt;
  }
  return out;
}

std::vector<std::string> ArgScanner::Positionals() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i].size() > 1 && args_[i][0] == '-') continue;  // left for Finish() to report
    used_[i] = true;
    out.push_back(args_[i]);
  }
  return out;
}

bool ArgScanner::Finish() {
  for (std::size_t i = 0; i < args_.size() && error_.empty(); ++i) {
    if (!used_[i]) error_ = "unknown option '" + args_[i] + "'";
  }
  if (error_.empty()) return true;
  std::fprintf(stderr, "scenecrdt %s: %s (see 'scenecrdt %s --help')\n", command_.c_str(),
               error_.c_str(), command_.c_str());
  return false;
}

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
