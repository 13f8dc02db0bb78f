// SPDX-License-Identifier: Apache-2.0
// Owns formatting and writing event lines.
#include "scenecrdt/server/event_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace scenecrdt::server {

void EventLog::Write(const char* event, const char* fields_format, ...) const {
  if (!enabled_) return;
  char line[1024];
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  int n =
      std::snprintf(line, sizeof line, "scenecrdt serve: %04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s ",
                    utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                    utc.tm_sec, static_cast<int>(millis), event);
  if (n < 0) return;
  std::va_list args;
  va_start(args, fields_format);
  const int m =
      std::vsnprintf(line + n, sizeof line - static_cast<std::size_t>(n) - 1, fields_format, args);
  va_end(args);
  if (m > 0) n += m;
  // vsnprintf truncates to fit; keep room for the newline.
  if (n > static_cast<int>(sizeof line) - 2) n = static_cast<int>(sizeof line) - 2;
  line[n++] = '\n';
  line[n] = '\0';
  const std::string_view text(line, static_cast<std::size_t>(n));
  if (sink_) {
    sink_(text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

}  // namespace scenecrdt::server
