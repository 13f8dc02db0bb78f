// SPDX-License-Identifier: Apache-2.0
// Owns reading /proc/self/stat, /proc/stat (boot time), /proc/self/fd and RLIMIT_NOFILE.
#include "scenecrdt/server/observability/process_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace scenecrdt::server {

namespace {

// The whole of a small /proc file ("" when it cannot be read).
std::string ReadSmallFile(const char* path) {
  std::string text;
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return text;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0 && text.size() < (1u << 20)) {
    text.append(buffer, n);
  }
  std::fclose(f);
  return text;
}

// /proc/stat's "btime N": the boot time, Unix seconds.
std::optional<int64_t> BootTime() {
  const std::string text = ReadSmallFile("/proc/stat");
  const std::size_t at = text.find("\nbtime ");
  if (at == std::string::npos) return std::nullopt;
  return std::strtoll(text.c_str() + at + 7, nullptr, 10);
}

}  // namespace

ProcessStats ReadProcessStats() {
  ProcessStats s;
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  const std::string stat = ReadSmallFile("/proc/self/stat");
  // The command name (field 2) is in parentheses and may hold spaces: fields count from the
  // last ')'. After it: field 3 (state) ... utime 14, stime 15, starttime 22, vsize 23, rss 24.
  const std::size_t close = stat.rfind(')');
  if (close != std::string::npos && ticks > 0 && page > 0) {
    const char* p = stat.c_str() + close + 1;
    unsigned long long field[25] = {};
    int index = 3;
    while (*p != '\0' && index <= 24) {
      while (*p == ' ') ++p;
      char* end = nullptr;
      field[index] = std::strtoull(p, &end, 10);
      if (end == p) {  // the state letter (field 3)
        while (*p != '\0' && *p != ' ') ++p;
      } else {
        p = end;
      }
      ++index;
    }
    if (index > 24) {
      s.cpu_seconds = static_cast<double>(field[14] + field[15]) / static_cast<double>(ticks);
      s.virtual_bytes = static_cast<int64_t>(field[23]);
      s.resident_bytes = static_cast<int64_t>(field[24]) * page;
      if (const auto boot = BootTime()) {
        s.start_time_seconds = static_cast<double>(*boot) +
                               static_cast<double>(field[22]) / static_cast<double>(ticks);
      }
    }
  }
  if (DIR* dir = opendir("/proc/self/fd")) {
    int64_t n = 0;
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(dir);
    s.open_fds = n - 1;  // not the descriptor of the listing itself
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    s.max_fds = limit.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(limit.rlim_cur);
  }
  return s;
}

}  // namespace scenecrdt::server
