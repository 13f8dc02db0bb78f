// SPDX-License-Identifier: Apache-2.0
// Owns formatting and writing event lines: a small printf that escapes every string value
// (issue 23 item 10: a JWT `sub` holding '"' used to forge fields such as role=write).
#include "scenecrdt/server/observability/event_log.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace scenecrdt::server {

namespace {

bool IsBareByte(unsigned char c) {
  return c > 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '=';
}

// \n \r \t or \xHH for a byte that is not printable ASCII.
void AppendByteEscape(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (byte == '\n') {
    out += "\\n";
  } else if (byte == '\r') {
    out += "\\r";
  } else if (byte == '\t') {
    out += "\\t";
  } else {
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
}

// A %s that is no field's value (not after '=' nor inside quotes: a piece of the line the
// server chose, such as " (later refusals ...)"): kept as written, but no byte of it may
// start a new line or hide text.
void AppendFragment(std::string& out, std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) {
      AppendByteEscape(out, byte);
    } else {
      out += c;
    }
  }
}

// Appends one numeric conversion (`spec`: "%...X" without the string kinds) with its value.
template <class T>
void AppendNumber(std::string& out, const std::string& spec, T value) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, spec.c_str(), value);
  if (n > 0) out.append(text, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof text - 1));
}

// The printf subset the server's formats use: flags, width and precision (numbers or '*'),
// the length modifiers hh h l ll z j t L, conversions d i u o x X f F e E g G a A c s p %.
void FormatFields(std::string& out, const char* format, std::va_list args) {
  bool in_quotes = false;  // inside quotes the format itself opened
  char before = ' ';       // the format's character before the conversion
  for (const char* p = format; *p != '\0'; ++p) {
    if (*p != '%') {
      if (*p == '"') in_quotes = !in_quotes;
      before = *p;
      out += *p;
      continue;
    }
    const char* start = p++;
    if (*p == '%') {
      out += '%';
      continue;
    }
    std::string spec = "%";
    int star_width = 0;
    bool has_star_width = false;
    int precision = -1;
    while (*p != '\0' && std::strchr("-+ #0", *p) != nullptr) spec += *p++;
    if (*p == '*') {
      has_star_width = true;
      star_width = va_arg(args, int);
      ++p;
    }
    while (*p >= '0' && *p <= '9') spec += *p++;
    if (*p == '.') {
      ++p;
      if (*p == '*') {
        precision = va_arg(args, int);
        ++p;
      } else {
        precision = 0;
        while (*p >= '0' && *p <= '9') precision = precision * 10 + (*p++ - '0');
      }
    }
    std::string length;
    while (*p != '\0' && std::strchr("hljztL", *p) != nullptr) length += *p++;
    const char conversion = *p;
    if (conversion == '\0') {
      out.append(start);  // a dangling '%': written as it is
      return;
    }
    if (conversion == 's' || conversion == 'c') {
      std::string_view value;
      char one = 0;
      if (conversion == 'c') {
        one = static_cast<char>(va_arg(args, int));
        value = std::string_view(&one, 1);
      } else {
        const char* s = va_arg(args, const char*);
        if (s == nullptr) s = "(null)";
        value = precision >= 0
                    ? std::string_view(s, strnlen(s, static_cast<std::size_t>(precision)))
                    : std::string_view(s);
      }
      (void)star_width;
      if (in_quotes || before == '=') {
        AppendLogValue(out, value, in_quotes);
      } else {
        AppendFragment(out, value);
      }
      before = ' ';
      continue;
    }
    before = ' ';
    if (has_star_width) spec += std::to_string(star_width);
    if (precision >= 0) spec += "." + std::to_string(precision);
    spec += length;
    spec += conversion;
    switch (conversion) {
      case 'd':
      case 'i':
        if (length == "ll") {
          AppendNumber(out, spec, va_arg(args, long long));
        } else if (length == "l") {
          AppendNumber(out, spec, va_arg(args, long));
        } else if (length == "z" || length == "t") {
          AppendNumber(out, spec, va_arg(args, std::ptrdiff_t));
        } else if (length == "j") {
          AppendNumber(out, spec, va_arg(args, std::intmax_t));
        } else {
          AppendNumber(out, spec, va_arg(args, int));
        }
        break;
      case 'u':
      case 'o':
      case 'x':
      case 'X':
        if (length == "ll") {
          AppendNumber(out, spec, va_arg(args, unsigned long long));
        } else if (length == "l") {
          AppendNumber(out, spec, va_arg(args, unsigned long));
        } else if (length == "z" || length == "t") {
          AppendNumber(out, spec, va_arg(args, std::size_t));
        } else if (length == "j") {
          AppendNumber(out, spec, va_arg(args, std::uintmax_t));
        } else {
          AppendNumber(out, spec, va_arg(args, unsigned int));
        }
        break;
      case 'p':
        AppendNumber(out, spec, va_arg(args, void*));
        break;
      default:  // floating point
        if (length == "L") {
          AppendNumber(out, spec, va_arg(args, long double));
        } else {
          AppendNumber(out, spec, va_arg(args, double));
        }
        break;
    }
  }
}

// Cuts `line` to `limit` bytes without leaving a quoted value open or an escape in halves.
void CutLine(std::string& line, std::size_t limit) {
  line.resize(limit);
  bool in_quotes = false;
  std::size_t escape_at = std::string::npos;  // where the last escape inside quotes began
  std::size_t escape_len = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (!in_quotes) {
      if (line[i] == '"') in_quotes = true;
      continue;
    }
    if (line[i] == '\\') {
      escape_at = i;
      escape_len = i + 1 < line.size() && line[i + 1] == 'x' ? 4 : 2;
      i += escape_len - 1;
    } else if (line[i] == '"') {
      in_quotes = false;
    }
  }
  if (in_quotes) {
    if (escape_at != std::string::npos && escape_at + escape_len > line.size()) {
      line.resize(escape_at);
    }
    line += '"';
  }
  line += " cut=yes";
}

}  // namespace

void AppendLogValue(std::string& out, std::string_view value, bool quoted) {
  bool bare = !quoted && !value.empty();
  for (const char c : value) bare = bare && IsBareByte(static_cast<unsigned char>(c));
  if (bare) {
    out.append(value);
    return;
  }
  if (!quoted) out += '"';
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte > 0x7e) {
      AppendByteEscape(out, byte);
    } else {
      out += c;
    }
  }
  if (!quoted) out += '"';
}

void EventLog::Write(const char* event, const char* fields_format, ...) const {
  if (!enabled_) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char prefix[96];
  const int n =
      std::snprintf(prefix, sizeof prefix, "scenecrdt serve: %04d-%02d-%02dT%02d:%02d:%02d.%03dZ ",
                    utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                    utc.tm_sec, static_cast<int>(millis));
  if (n < 0) return;
  std::string line(prefix, static_cast<std::size_t>(n));
  line.reserve(256);
  line += event;
  line += ' ';
  std::va_list args;
  va_start(args, fields_format);
  FormatFields(line, fields_format, args);
  va_end(args);
  // Keep room for " cut=yes", a closing quote and the newline.
  if (line.size() > kMaxLineBytes - 1) CutLine(line, kMaxLineBytes - 10);
  line += '\n';
  if (sink_) {
    sink_(line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

}  // namespace scenecrdt::server
