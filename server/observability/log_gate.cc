// SPDX-License-Identifier: Apache-2.0
// Owns the log gate's one-per-second window.
#include "scenecrdt/server/observability/log_gate.h"

namespace scenecrdt::server {

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
