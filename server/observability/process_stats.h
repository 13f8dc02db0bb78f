// SPDX-License-Identifier: Apache-2.0
// Owns ProcessStats: what /proc/self says about this process (CPU time, memory, descriptors,
// start time), read on each GET /metrics for the standard process_* series
// (docs/SERVER.md "Process and build metrics"). Linux only; elsewhere every field is absent.
#pragma once

#include <cstdint>
#include <optional>

namespace scenecrdt::server {

struct ProcessStats {
  std::optional<double> cpu_seconds;         // user + system, /proc/self/stat
  std::optional<int64_t> resident_bytes;     // RSS, /proc/self/stat
  std::optional<int64_t> virtual_bytes;      // vsize, /proc/self/stat
  std::optional<int64_t> open_fds;           // entries of /proc/self/fd
  std::optional<int64_t> max_fds;            // RLIMIT_NOFILE, soft
  std::optional<double> start_time_seconds;  // Unix seconds: /proc/stat btime + starttime
};

// Reads them now. A file that cannot be read leaves its fields empty (the series is not
// shown) instead of showing a wrong number. Counting /proc/self/fd is O(open descriptors):
// at most RLIMIT_NOFILE (65536 after `serve` raised it), once per scrape.
ProcessStats ReadProcessStats();

}  // namespace scenecrdt::server
