// SPDX-License-Identifier: Apache-2.0
// Owns LogGate: lets one line per second through for events an outsider can repeat at will
// (refused connections, accept errors, rate-limited scene listings) and counts the rest.
#pragma once

#include <cstdint>

namespace scenecrdt::server {

// Not thread-safe: one per accept loop (its strand), or under its owner's mutex.
class LogGate {
 public:
  // True at most once per second; `suppressed` gets how many calls were refused since the
  // last true.
  bool Allow(int64_t now_ms, uint64_t& suppressed);

 private:
  int64_t last_ms_ = -1000000;
  uint64_t suppressed_ = 0;
};

}  // namespace scenecrdt::server
