// SPDX-License-Identifier: Apache-2.0
// Owns the per-member send times under --max-rate and the scene's one rate timer.
#include "scenecrdt/server/scene/rate_limit.h"

#include <algorithm>
#include <chrono>

#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

bool RateLimit::Allow(int64_t next_send_ms, int64_t now_ms) {
  if (max_rate_hz_ <= 0.0 || now_ms >= next_send_ms) return true;
  Arm(next_send_ms);
  return false;
}

void RateLimit::Arm(int64_t at_ms) {
  if (at_ms_ != 0 && at_ms_ <= at_ms) return;
  at_ms_ = at_ms;
  timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(0, at_ms - NowMs())));
  timer_.async_wait([this](const net::error_code& ec) {
    if (ec) return;
    at_ms_ = 0;
    due_();
  });
}

}  // namespace scenecrdt::server
