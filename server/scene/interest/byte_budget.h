// SPDX-License-Identifier: Apache-2.0
// Owns ByteBudget: one interest member's token bucket under --client-budget-kbps
// (docs/INTEREST.md "Byte budget"). It fills at the budget's bytes per second up to a burst of
// a tenth of a second's worth (at least kMinBurstBytes); every byte handed to the member is
// spent from it, and it may go negative by one delivery (a debt paid back before the next
// budgeted change is sent). Used on the scene's strand only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace scenecrdt::server {

class ByteBudget {
 public:
  static constexpr double kMinBurstBytes = 256;

  // `kbps`: kilobits (1000 bits) per second, > 0. The bucket starts full.
  ByteBudget(double kbps, int64_t now_ms)
      : rate_(kbps * 1000.0 / 8.0),
        burst_(std::max(kMinBurstBytes, rate_ / 10.0)),
        tokens_(burst_),
        at_ms_(now_ms) {}

  // Adds what the time since the last refill earned, up to the burst.
  void Refill(int64_t now_ms) {
    if (now_ms <= at_ms_) return;
    tokens_ = std::min(burst_, tokens_ + rate_ * static_cast<double>(now_ms - at_ms_) / 1000.0);
    at_ms_ = now_ms;
  }
  void Spend(std::size_t bytes) { tokens_ -= static_cast<double>(bytes); }
  // The bytes that may be sent now (<= 0: none).
  double available() const { return tokens_; }
  // Enough for a delivery of deferred changes alone: half a burst (fewer, larger frames).
  bool Ready() const { return tokens_ >= burst_ / 2.0; }
  // When Ready() holds, with no spending meanwhile (`now_ms` if it does now).
  int64_t ReadyAt(int64_t now_ms) const {
    const double missing = burst_ / 2.0 - tokens_;
    if (missing <= 0) return now_ms;
    return now_ms + static_cast<int64_t>(std::ceil(missing * 1000.0 / rate_));
  }
  double bytes_per_second() const { return rate_; }
  double burst() const { return burst_; }

 private:
  double rate_;   // bytes per second
  double burst_;  // the most the bucket holds
  double tokens_;
  int64_t at_ms_;  // the last refill
};

}  // namespace scenecrdt::server
