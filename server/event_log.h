// SPDX-License-Identifier: Apache-2.0
// Owns EventLog: the server's event lines (session open/close, drops, resyncs, refusals), one
// line per event, `key=value` fields after a UTC timestamp and the event name, written to
// stderr (or to a sink a test installs). Thread-safe: each line is written with one call.
// Owner: server/ (docs/SERVER.md "Logs" lists the events and fields).
#pragma once

#include <cstdarg>
#include <functional>
#include <string_view>

namespace scenecrdt::server {

class EventLog {
 public:
  // Receives each complete line (with its trailing newline). Called from any io thread, so it
  // must be thread-safe. Empty: stderr.
  using Sink = std::function<void(std::string_view line)>;

  explicit EventLog(Sink sink = {}, bool enabled = true)
      : sink_(std::move(sink)), enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // Writes "scenecrdt serve: <UTC time> <event> <fields>\n"; `fields_format` is printf-style.
  // Lines longer than 1 KiB are cut.
  void Write(const char* event, const char* fields_format, ...) const
      __attribute__((format(printf, 3, 4)));

 private:
  Sink sink_;
  bool enabled_;
};

}  // namespace scenecrdt::server
