// SPDX-License-Identifier: Apache-2.0
// Owns the accept loop's pacing: AcceptBackoff, the delay before the next accept after an
// accept error (EMFILE, ENFILE, ENOBUFS ...: re-arming at once would spin a core while the
// cause lasts), doubling from 50 ms to 1 s and reset by the next success; and LogGate, which
// lets one line per second through for events an outsider can repeat at will (refused
// connections, accept errors) and counts the rest.
#pragma once

#include <chrono>
#include <cstdint>

namespace scenecrdt::server {

class AcceptBackoff {
 public:
  static constexpr std::chrono::milliseconds kFirst{50};
  static constexpr std::chrono::milliseconds kMax{1000};

  // The delay to wait after one more consecutive error.
  std::chrono::milliseconds Next();
  void Reset() { next_ = kFirst; }

 private:
  std::chrono::milliseconds next_ = kFirst;
};

// Not thread-safe: one per accept loop (its strand).
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
