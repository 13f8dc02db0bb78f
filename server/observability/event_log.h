// SPDX-License-Identifier: Apache-2.0
// Owns EventLog: the server's event lines (session open/close, drops, resyncs, refusals), one
// line per event, written to stderr (or to a sink a test installs). Two formats: text
// (`key=value` fields after a UTC timestamp and the event name) and json (one object per line,
// the same fields). Each event has a level; lines below --log-level are not written.
// Thread-safe: each line is written with one call. Every string value is escaped by one rule
// per format (AppendLogValue; nlohmann-json for json), so no value can end its field, add a
// field or a line. Owner: server/ (docs/SERVER.md "Logs" and "Log format and levels").
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scenecrdt::server {

// debug: reserved (no event uses it today); info: the normal course of things (joins, closes,
// reloads); warn: a peer or a client did something refused or was cut; error: the server
// could not do its work (storage, accept, a stored scene that does not load).
enum class LogLevel : uint8_t { kDebug, kInfo, kWarn, kError };
const char* LogLevelName(LogLevel level);  // "debug", "info", "warn", "error"
std::optional<LogLevel> ParseLogLevel(std::string_view name);

enum class LogFormat : uint8_t { kText, kJson };
std::optional<LogFormat> ParseLogFormat(std::string_view name);  // "text", "json"

// Appends `value` as a field value: as it is when it is non-empty printable ASCII without
// space, '"', '\\' or '='; otherwise in double quotes with '"' and '\\' escaped by a backslash,
// \n \r \t, and every other byte below 0x20 or above 0x7e as \xHH. `quoted`: the format
// already opened the quotes (`detail=\"%s\"`), so only the escaping applies.
void AppendLogValue(std::string& out, std::string_view value, bool quoted);

class EventLog {
 public:
  // Receives each complete line (with its trailing newline). Called from any io thread, so it
  // must be thread-safe. Empty: stderr.
  using Sink = std::function<void(std::string_view line)>;
  static constexpr std::size_t kMaxLineBytes = 1024;  // longer lines are cut (cut=yes)

  explicit EventLog(Sink sink = {}, bool enabled = true, LogFormat format = LogFormat::kText,
                    LogLevel min_level = LogLevel::kInfo)
      : sink_(std::move(sink)), enabled_(enabled), format_(format), min_level_(min_level) {}
  EventLog(const EventLog& other)
      : sink_(other.sink_),
        enabled_(other.enabled_),
        format_(other.format_),
        min_level_(other.min_level()) {}

  bool enabled() const { return enabled_; }
  bool enabled(LogLevel level) const { return enabled_ && level >= min_level(); }
  LogLevel min_level() const { return min_level_.load(std::memory_order_relaxed); }
  // SIGHUP's config reload (log-level): lines from now on are filtered at `level`.
  void set_min_level(LogLevel level) { min_level_.store(level, std::memory_order_relaxed); }
  LogFormat format() const { return format_; }

  // Text: "scenecrdt serve: <UTC time> <event> <fields>\n". Json: {"ts":..,"level":..,
  // "event":.., one member per field, "note": the words that are no field's}. `fields_format`
  // is printf-style and written by the server (never from input). A %s / %.*s / %c after '='
  // or inside the format's quotes is a value and goes through AppendLogValue (text) or is a
  // json string; elsewhere it is a piece of text the server chose, written as it is but for
  // bytes outside printable ASCII (escaped as in values; json: part of "note"). Numbers as
  // printf writes them (json: a value that is one %d/%u/%f... alone is a json number; a value
  // "-" is null).
  void Write(LogLevel level, const char* event, const char* fields_format, ...) const
      __attribute__((format(printf, 4, 5)));
  // One line of free text the server chose (the start and stop lines of `scenecrdt serve`):
  // text: "scenecrdt serve: <message>\n" as before; json: {"ts","level","event","message"}.
  void Message(LogLevel level, const char* event, std::string_view message) const;

 private:
  void Emit(std::string& line) const;

  Sink sink_;
  bool enabled_;
  LogFormat format_;
  std::atomic<LogLevel> min_level_;
};

namespace internal {
// One piece of a formatted event: literal format text, a string conversion or a number.
struct LogPiece {
  enum class Kind : uint8_t { kLiteral, kString, kSigned, kUnsigned, kFloat, kNumberText };
  Kind kind = Kind::kLiteral;
  bool value = false;   // a string conversion after '=' or inside the format's quotes
  bool quoted = false;  // ... inside the format's quotes
  std::string text;     // literal text, the string, or the number as printf wrote it
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
};
// The pieces of `format` with `args`; the printf subset the server's formats use.
std::vector<LogPiece> SplitLogFormat(const char* format, std::va_list args);
// The json line (with its newline) for one event, at most EventLog::kMaxLineBytes bytes but
// for the fixed members.
std::string JsonLogLine(std::string_view ts, LogLevel level, std::string_view event,
                        const std::vector<LogPiece>& pieces);
std::string JsonMessageLine(std::string_view ts, LogLevel level, std::string_view event,
                            std::string_view message);
}  // namespace internal

}  // namespace scenecrdt::server
