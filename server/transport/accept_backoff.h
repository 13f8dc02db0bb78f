// SPDX-License-Identifier: Apache-2.0
// Owns the accept loop's pacing: AcceptBackoff, the delay before the next accept after an
// accept error (EMFILE, ENFILE, ENOBUFS ...: re-arming at once would spin a core while the
// cause lasts), doubling from 50 ms to 1 s and reset by the next success. Its log lines go
// through a LogGate (observability/log_gate.h).
#pragma once

#include <chrono>

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

}  // namespace scenecrdt::server
