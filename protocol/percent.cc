// SPDX-License-Identifier: Apache-2.0
// Owns percent-encoding and query lookup (the rule is in percent.h).
#include "scenecrdt/protocol/percent.h"

namespace scenecrdt::protocol {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, Plus plus) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && plus == Plus::kSpace) {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

std::optional<std::string> QueryParam(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    return PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
                         Plus::kSpace);
  }
  return std::nullopt;
}

void AppendPercentEncoded(std::string_view text, std::string& out, Slash slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : text) {
    if (IsUnreserved(c) || (slash == Slash::kKeep && c == '/')) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
}

std::string PercentEncode(std::string_view text, Slash slash) {
  std::string out;
  AppendPercentEncoded(text, out, slash);
  return out;
}

}  // namespace scenecrdt::protocol
