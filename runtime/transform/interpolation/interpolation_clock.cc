// SPDX-License-Identifier: Apache-2.0
// Owns the line fit behind ArrivalClock's stamps.
#include "scenecrdt/runtime/transform/interpolation/interpolation_clock.h"

#include <algorithm>
#include <cmath>

namespace scenecrdt::runtime::internal {
namespace {

// The period's fit forgets old batches by this factor per batch (about 256 batches of memory:
// a period fitted over 32 jittered batches would wander, and its error is multiplied by the
// distance from the window's middle). It replaces the prior once the fit holds this much
// weight, when it lies within [1/2, 2] x the prior.
constexpr double kFitForget = 1.0 - 1.0 / 256.0;
constexpr double kMinFitWeight = 8.0;
constexpr double kMaxPeriodRatio = 2.0;
// More periods than this without a batch is an idle stream, not lost batches.
constexpr double kMaxMissedPeriods = 16.0;
// Skipped periods are counted beyond half a period plus this many mean deviations, once the
// period is fitted over this much weight: before, a wrong period would count phantom skips
// that confirm it.
constexpr double kSkipDeviations = 3.0;
constexpr double kMinSkipWeight = 16.0;
constexpr double kDeviationAlpha = 1.0 / 16.0;

}  // namespace

void ArrivalClock::Restart(int64_t receive_us, int64_t sender_us, bool sender_mode) {
  started_ = true;
  sender_mode_ = sender_mode;
  base_sender_us_ = sender_mode ? sender_us : 0;
  base_receive_us_ = receive_us;
  last_sender_us_ = sender_us;
  last_x_ = 0.0;
  count_ = 0;
  next_ = 0;
  fit_weight_ = fit_mean_x_ = fit_mean_r_ = fit_cxx_ = fit_cxr_ = 0.0;
  AddPoint(Point{});
}

void ArrivalClock::AddPoint(const Point& p) {
  points_[static_cast<std::size_t>(next_)] = p;
  next_ = (next_ + 1) % kWindow;
  count_ = std::min(count_ + 1, kWindow);
  last_x_ = p.x;
  if (sender_mode_) return;
  // Exponentially weighted covariance (West's update): stable for long streams.
  fit_weight_ = fit_weight_ * kFitForget + 1.0;
  const double dx = p.x - fit_mean_x_;
  fit_mean_x_ += dx / fit_weight_;
  fit_mean_r_ += (p.r - fit_mean_r_) / fit_weight_;
  fit_cxx_ = fit_cxx_ * kFitForget + dx * (p.x - fit_mean_x_);
  fit_cxr_ = fit_cxr_ * kFitForget + dx * (p.r - fit_mean_r_);
  if (fit_weight_ >= kMinFitWeight && fit_cxx_ > 0.0) {
    const double slope = fit_cxr_ / fit_cxx_;
    if (slope >= period_us_ / kMaxPeriodRatio && slope <= period_us_ * kMaxPeriodRatio) {
      period_us_ = slope;
    }
  }
}

double ArrivalClock::Predict(double x) const {
  const double slope = sender_mode_ ? 1.0 : period_us_;
  double offset = 0.0;  // the mean of r - slope x: the least-squares offset for this slope
  for (int i = 0; i < count_; ++i) {
    const Point& p = points_[static_cast<std::size_t>(i)];
    offset += p.r - slope * p.x;
  }
  return offset / count_ + slope * x;
}

ArrivalClock::Stamp ArrivalClock::OnBatch(int64_t receive_us, int64_t sender_us, int64_t bound_us,
                                          double fallback_period_us) {
  const bool sender_mode = sender_us != kNoSenderTime;
  const double r = static_cast<double>(receive_us - base_receive_us_);
  bool resync = !started_ || sender_mode != sender_mode_;
  double x = 0.0;
  if (!resync && sender_mode) {
    resync = sender_us < last_sender_us_;  // the sender's clock went back (a restart)
    x = static_cast<double>(sender_us - base_sender_us_);
  } else if (!resync) {
    if (!(period_us_ > 0.0)) period_us_ = fallback_period_us;
    resync = !(period_us_ > 0.0);
    if (!resync) {
      // A batch clearly later than the next slot skipped periods (a tick with nothing to send,
      // a lost batch) and keeps its place on the line. "Clearly": beyond half a period plus
      // three mean deviations, so jitter is not mistaken for a skip.
      const double late_us = r - Predict(last_x_ + 1.0);
      double periods = 1.0;
      if (fit_weight_ >= kMinSkipWeight &&
          late_us > 0.5 * period_us_ + kSkipDeviations * deviation_us_) {
        periods += std::round(late_us / period_us_);
      }
      resync = periods > kMaxMissedPeriods;
      x = last_x_ + periods;
    }
  }
  if (!resync) {
    const double error_us = r - Predict(x);
    resync = std::fabs(error_us) > static_cast<double>(bound_us);
    if (!resync) deviation_us_ += (std::fabs(error_us) - deviation_us_) * kDeviationAlpha;
  }
  Stamp out;
  if (resync) {
    Restart(receive_us, sender_us, sender_mode);
    out.stamp_us = receive_us;
    out.resynced = true;
  } else {
    AddPoint(Point{x, r});
    last_sender_us_ = sender_us;
    out.stamp_us = base_receive_us_ + std::llround(Predict(x));
  }
  if (has_stamp_) out.stamp_us = std::max(out.stamp_us, newest_stamp_us_ + 1);  // increasing
  has_stamp_ = true;
  newest_stamp_us_ = out.stamp_us;
  return out;
}

}  // namespace scenecrdt::runtime::internal
