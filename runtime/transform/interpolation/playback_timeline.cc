// SPDX-License-Identifier: Apache-2.0
// Owns the arrival clock (batch stamps), the interval and jitter estimates, the target delay
// and the playback rate control of PlaybackTimeline.
#include "scenecrdt/runtime/playback_timeline.h"

#include <algorithm>
#include <cmath>

namespace scenecrdt::runtime {
namespace {

// EMA weights: jitter and batch gaps per batch, the entity interval per batch median.
constexpr double kJitterAlpha = 1.0 / 16.0;
constexpr double kBatchIntervalAlpha = 1.0 / 16.0;
constexpr double kIntervalAlpha = 1.0 / 8.0;
// Batch and update gaps shorter than this fraction of the current estimate are bursts (frames
// read back to back, a backlog after a stall), not a new rate.
constexpr double kBurstFraction = 0.25;
// Within this much of its target (1/40, at least 1 ms) the delay is left alone.
constexpr int64_t kMinToleranceUs = 1000;
constexpr int64_t kToleranceDivisor = 40;
// Stamps ahead of playback kept for buffer_depth (a bound, not a limit on the stream).
constexpr std::size_t kMaxAhead = 4096;

void AddSample(double& ema, double value, double alpha) {
  ema = ema > 0.0 ? ema + (value - ema) * alpha : value;
}

}  // namespace

PlaybackTimeline::PlaybackTimeline(const InterpolationOptions& options) : options_(options) {}

int64_t PlaybackTimeline::interval_us() const {
  const double interval = update_interval_us_ > 0.0 ? update_interval_us_ : batch_interval_us_;
  return std::llround(interval);
}

int64_t PlaybackTimeline::target_delay_us() const {
  if (options_.fixed_delay_us > 0) return options_.fixed_delay_us;
  const double interval = update_interval_us_ > 0.0 ? update_interval_us_ : batch_interval_us_;
  double delay = static_cast<double>(options_.initial_delay_us);
  if (interval > 0.0) {
    delay = std::max(options_.interval_multiple * interval,
                     interval + options_.jitter_multiple * jitter_us_);
  }
  delay = std::clamp(delay, static_cast<double>(options_.min_delay_us),
                     static_cast<double>(options_.max_delay_us));
  return std::llround(delay);
}

int64_t PlaybackTimeline::OnBatch(const BatchTime& time) {
  int64_t receive_us = time.receive_time_us;
  if (has_batches_ && receive_us < last_receive_us_) {
    ++time_regressions_;
    receive_us = last_receive_us_;
  }
  if (has_batches_) {
    // Batch gaps give the raw path its first period; idle periods and bursts are not a rate.
    const double gap_us = static_cast<double>(receive_us - last_receive_us_);
    if (gap_us > 0.0 && gap_us <= static_cast<double>(options_.max_interval_us) &&
        gap_us >= kBurstFraction * batch_interval_us_) {
      AddSample(batch_interval_us_, gap_us, kBatchIntervalAlpha);
    }
  }
  const internal::ArrivalClock::Stamp stamp =
      clock_.OnBatch(receive_us, time.sender_time_us, target_delay_us(), batch_interval_us_);
  if (stamp.resynced && has_batches_) ++resets_;
  if (!stamp.resynced) {
    const double lateness_us = static_cast<double>(receive_us - stamp.stamp_us);
    jitter_us_ += (std::fabs(lateness_us) - jitter_us_) * kJitterAlpha;
  }
  if (started_ && stamp.stamp_us < playback_us_) ++late_batches_;
  has_batches_ = true;
  last_receive_us_ = receive_us;
  newest_stamp_us_ = stamp.stamp_us;
  if (!started_ || stamp.stamp_us > playback_us_) {
    if (ahead_.size() == kMaxAhead) ahead_.pop_front();
    ahead_.push_back(stamp.stamp_us);
  }
  return stamp.stamp_us;
}

void PlaybackTimeline::ObserveUpdateGaps(std::span<int64_t> gaps_us) {
  if (gaps_us.empty()) return;
  const auto middle = gaps_us.begin() + static_cast<std::ptrdiff_t>(gaps_us.size() / 2);
  std::nth_element(gaps_us.begin(), middle, gaps_us.end());
  const double median_us = static_cast<double>(*middle);
  if (median_us <= 0.0 || median_us > static_cast<double>(options_.max_interval_us)) return;
  if (median_us < kBurstFraction * update_interval_us_) return;
  AddSample(update_interval_us_, median_us, kIntervalAlpha);
}

int64_t PlaybackTimeline::Advance(int64_t render_time_us) {
  const int64_t target_us = target_delay_us();
  if (!started_) {
    started_ = true;
    last_render_us_ = render_time_us;
    playback_us_ = render_time_us - target_us;
  } else {
    int64_t dt_us = render_time_us - last_render_us_;
    if (dt_us < 0) {
      ++time_regressions_;
      dt_us = 0;
    }
    const int64_t delay_us = last_render_us_ - playback_us_;
    last_render_us_ += dt_us;
    const int64_t drift_us = delay_us - target_us;
    if (drift_us > target_us) {
      // More than one buffer behind: jump instead of a long catch-up at +2 %.
      playback_us_ = last_render_us_ - target_us;
      ++resets_;
    } else {
      const int64_t tolerance_us = std::max(kMinToleranceUs, target_us / kToleranceDivisor);
      double rate = 1.0;
      if (drift_us > tolerance_us) rate += options_.catch_up;
      if (drift_us < -tolerance_us) rate -= options_.slow_down;
      playback_us_ += std::llround(static_cast<double>(dt_us) * rate);
      // A correction stops at the target instead of overshooting it (both clamps move
      // playback forward: see docs/INTERPOLATION.md).
      const int64_t new_delay_us = last_render_us_ - playback_us_;
      if ((rate > 1.0 && new_delay_us < target_us) || (rate < 1.0 && new_delay_us > target_us)) {
        playback_us_ = last_render_us_ - target_us;
      }
    }
  }
  while (!ahead_.empty() && ahead_.front() <= playback_us_) ahead_.pop_front();
  return playback_us_;
}

}  // namespace scenecrdt::runtime
