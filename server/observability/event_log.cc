// SPDX-License-Identifier: Apache-2.0
// Owns formatting and writing event lines: a small printf that splits a format into pieces
// and escapes every string value of a text line (issue 23 item 10: a JWT `sub` holding '"'
// used to forge fields such as role=write); event_log_json.cc writes the json lines.
#include "scenecrdt/server/observability/event_log.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <type_traits>
#include <vector>

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

// One numeric conversion (`spec`: "%...X" without the string kinds) as printf writes it.
template <class T>
std::string NumberText(const std::string& spec, T value) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, spec.c_str(), value);
  if (n <= 0) return std::string();
  return std::string(text, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof text - 1));
}

using internal::LogPiece;

LogPiece Literal(std::string text) {
  LogPiece piece;
  piece.text = std::move(text);
  return piece;
}

template <class T>
LogPiece Number(LogPiece::Kind kind, const std::string& spec, T value) {
  LogPiece piece;
  piece.kind = kind;
  piece.text = NumberText(spec, value);
  if constexpr (std::is_floating_point_v<T>) {
    piece.d = static_cast<double>(value);
  } else if constexpr (std::is_signed_v<T>) {
    piece.i = static_cast<int64_t>(value);
  } else if constexpr (!std::is_pointer_v<T>) {
    piece.u = static_cast<uint64_t>(value);
  }
  return piece;
}

// The text format's fields: every piece as today's lines have it.
void AppendTextFields(std::string& out, const std::vector<LogPiece>& pieces) {
  for (const LogPiece& piece : pieces) {
    if (piece.kind != LogPiece::Kind::kString) {
      out += piece.text;
    } else if (piece.value) {
      AppendLogValue(out, piece.text, piece.quoted);
    } else {
      AppendFragment(out, piece.text);
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

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (const LogLevel level :
       {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (name == LogLevelName(level)) return level;
  }
  return std::nullopt;
}

std::optional<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return std::nullopt;
}

namespace internal {

// The printf subset the server's formats use: flags, width and precision (numbers or '*'),
// the length modifiers hh h l ll z j t L, conversions d i u o x X f F e E g G a A c s p %.
std::vector<LogPiece> SplitLogFormat(const char* format, std::va_list args) {
  std::vector<LogPiece> pieces;
  std::string literal;
  const auto flush = [&] {
    if (!literal.empty()) pieces.push_back(Literal(std::move(literal)));
    literal.clear();
  };
  bool in_quotes = false;  // inside quotes the format itself opened
  char before = ' ';       // the format's character before the conversion
  for (const char* p = format; *p != '\0'; ++p) {
    if (*p != '%') {
      if (*p == '"') in_quotes = !in_quotes;
      before = *p;
      literal += *p;
      continue;
    }
    const char* start = p++;
    if (*p == '%') {
      literal += '%';
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
      literal.append(start);  // a dangling '%': written as it is
      break;
    }
    flush();
    if (conversion == 's' || conversion == 'c') {
      LogPiece piece;
      piece.kind = LogPiece::Kind::kString;
      if (conversion == 'c') {
        piece.text.assign(1, static_cast<char>(va_arg(args, int)));
      } else {
        const char* s = va_arg(args, const char*);
        if (s == nullptr) s = "(null)";
        piece.text = precision >= 0
                         ? std::string(s, strnlen(s, static_cast<std::size_t>(precision)))
                         : std::string(s);
      }
      piece.value = in_quotes || before == '=';
      piece.quoted = in_quotes;
      pieces.push_back(std::move(piece));
      before = ' ';
      continue;
    }
    before = ' ';
    if (has_star_width) spec += std::to_string(star_width);
    if (precision >= 0) spec += "." + std::to_string(precision);
    spec += length;
    spec += conversion;
    using K = LogPiece::Kind;
    // Octal and hex stay text in json (their digits are not decimal).
    const K unsigned_kind = conversion == 'u' ? K::kUnsigned : K::kNumberText;
    switch (conversion) {
      case 'd':
      case 'i':
        if (length == "ll") {
          pieces.push_back(Number(K::kSigned, spec, va_arg(args, long long)));
        } else if (length == "l") {
          pieces.push_back(Number(K::kSigned, spec, va_arg(args, long)));
        } else if (length == "z" || length == "t") {
          pieces.push_back(Number(K::kSigned, spec, va_arg(args, std::ptrdiff_t)));
        } else if (length == "j") {
          pieces.push_back(Number(K::kSigned, spec, va_arg(args, std::intmax_t)));
        } else {
          pieces.push_back(Number(K::kSigned, spec, va_arg(args, int)));
        }
        break;
      case 'u':
      case 'o':
      case 'x':
      case 'X':
        if (length == "ll") {
          pieces.push_back(Number(unsigned_kind, spec, va_arg(args, unsigned long long)));
        } else if (length == "l") {
          pieces.push_back(Number(unsigned_kind, spec, va_arg(args, unsigned long)));
        } else if (length == "z" || length == "t") {
          pieces.push_back(Number(unsigned_kind, spec, va_arg(args, std::size_t)));
        } else if (length == "j") {
          pieces.push_back(Number(unsigned_kind, spec, va_arg(args, std::uintmax_t)));
        } else {
          pieces.push_back(Number(unsigned_kind, spec, va_arg(args, unsigned int)));
        }
        break;
      case 'p':
        pieces.push_back(Number(K::kNumberText, spec, va_arg(args, void*)));
        break;
      default:  // floating point
        if (length == "L") {
          pieces.push_back(Number(K::kFloat, spec, va_arg(args, long double)));
        } else {
          pieces.push_back(Number(K::kFloat, spec, va_arg(args, double)));
        }
        break;
    }
  }
  flush();
  return pieces;
}

}  // namespace internal

namespace {

// "2024-05-01T12:00:00.123Z"
std::string UtcNowText() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[48];
  const int n = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                              utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                              utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  return n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

void EventLog::Emit(std::string& line) const {
  if (sink_) {
    sink_(line);
  } else {
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

void EventLog::Write(LogLevel level, const char* event, const char* fields_format, ...) const {
  if (!enabled(level)) return;
  std::va_list args;
  va_start(args, fields_format);
  const std::vector<LogPiece> pieces = internal::SplitLogFormat(fields_format, args);
  va_end(args);
  const std::string ts = UtcNowText();
  std::string line;
  if (format_ == LogFormat::kJson) {
    line = internal::JsonLogLine(ts, level, event, pieces);
  } else {
    line.reserve(256);
    line += "scenecrdt serve: ";
    line += ts;
    line += ' ';
    line += event;
    line += ' ';
    AppendTextFields(line, pieces);
    // Keep room for " cut=yes", a closing quote and the newline.
    if (line.size() > kMaxLineBytes - 1) CutLine(line, kMaxLineBytes - 10);
    line += '\n';
  }
  Emit(line);
}

void EventLog::Message(LogLevel level, const char* event, std::string_view message) const {
  if (!enabled(level)) return;
  std::string line;
  if (format_ == LogFormat::kJson) {
    line = internal::JsonMessageLine(UtcNowText(), level, event, message);
  } else {
    line = "scenecrdt serve: ";  // as `scenecrdt serve` always wrote them
    line += message;
    line += '\n';
  }
  Emit(line);
}

}  // namespace scenecrdt::server
