// SPDX-License-Identifier: Apache-2.0
// Owns EventLog: the server's event lines (session open/close, drops, resyncs, refusals), one
// line per event, `key=value` fields after a UTC timestamp and the event name, written to
// stderr (or to a sink a test installs). Thread-safe: each line is written with one call.
// Every string value is escaped by one rule (AppendLogValue), so no value can end its field,
// add a field or a line. Owner: server/ (docs/SERVER.md "Logs" lists the events and fields).
#pragma once

#include <cstdarg>
#include <functional>
#include <string>
#include <string_view>

namespace scenecrdt::server {

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

  explicit EventLog(Sink sink = {}, bool enabled = true)
      : sink_(std::move(sink)), enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // Writes "scenecrdt serve: <UTC time> <event> <fields>\n"; `fields_format` is printf-style
  // and written by the server (never from input). A %s / %.*s / %c after '=' or inside the
  // format's quotes is a value and goes through AppendLogValue; elsewhere it is a piece of text
  // the server chose, written as it is but for bytes outside printable ASCII (escaped as in
  // values). Numbers as printf writes them.
  void Write(const char* event, const char* fields_format, ...) const
      __attribute__((format(printf, 3, 4)));

 private:
  Sink sink_;
  bool enabled_;
};

}  // namespace scenecrdt::server
