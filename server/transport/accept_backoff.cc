// SPDX-License-Identifier: Apache-2.0
// Owns the accept backoff's doubling and the log gate's one-per-second window.
#include "scenecrdt/server/transport/accept_backoff.h"

#include <algorithm>

namespace scenecrdt::server {

std::chrono::milliseconds AcceptBackoff::Next() {
  const std::chrono::milliseconds delay = next_;
  next_ = std::min(kMax, next_ * 2);
  return delay;
}

bool LogGate::Allow(int64_t now_ms, uint64_t& suppressed) {
  if (now_ms - last_ms_ < 1000) {
    ++suppressed_;
    return false;
  }
  last_ms_ = now_ms;
  suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

}  // namespace scenecrdt::server
