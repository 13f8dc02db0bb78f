// SPDX-License-Identifier: Apache-2.0
// Owns RateLimit: --max-rate, the most scene frames per second one member is sent (0: no
// limit; docs/SERVER.md "Fan-out"). A member holds the time of its next allowed send; a
// member not allowed yet keeps coalescing its changes in the store, and one timer per scene
// (armed for the earliest such time) hands the scene's members their catch-up then. Used on
// the scene's strand only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "scenecrdt/net/net.h"

namespace scenecrdt::server {

class RateLimit {
 public:
  // `due` runs on the strand when the timer fires (deliver to whoever may be sent to now).
  RateLimit(double max_rate_hz, const net::Strand& strand, std::function<void()> due)
      : max_rate_hz_(max_rate_hz), timer_(strand), due_(std::move(due)) {}

  // Whether a member whose next allowed send is `next_send_ms` may be sent to at `now_ms`;
  // if not, the timer is armed for `next_send_ms`.
  bool Allow(int64_t next_send_ms, int64_t now_ms);
  // The next allowed send of a member sent to at `now_ms` (0: no limit).
  int64_t Next(int64_t now_ms) const {
    return max_rate_hz_ > 0.0 ? now_ms + static_cast<int64_t>(1000.0 / max_rate_hz_) : 0;
  }
  // Arms the timer for `at_ms` whatever the rate (an interest member's byte budget waiting
  // for its bucket: docs/INTEREST.md "Byte budget").
  void WakeAt(int64_t at_ms) { Arm(std::max<int64_t>(at_ms, 1)); }
  // The timer is armed (the scene is not quiescent).
  bool armed() const { return at_ms_ != 0; }
  // Disarms the timer (a deleted scene).
  void Cancel() {
    timer_.cancel();
    at_ms_ = 0;
  }

 private:
  void Arm(int64_t at_ms);

  const double max_rate_hz_;
  net::asio::steady_timer timer_;
  std::function<void()> due_;
  int64_t at_ms_ = 0;  // when the armed timer fires (0: not armed)
};

}  // namespace scenecrdt::server
