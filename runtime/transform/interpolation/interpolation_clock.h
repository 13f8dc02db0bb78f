// SPDX-License-Identifier: Apache-2.0
// Owns ArrivalClock: the jitter-free time at which each batch is shown (its "stamp"), on the
// receiver's clock (docs/INTERPOLATION.md, "Stamps"). Each batch is a point (x, receive time)
// with x the sender's time (envelope path) or the count of update periods since the line
// started (raw-DCL path, where the sender stamps nothing). The line has slope 1 (sender
// clock) or the period, learnt by an exponentially weighted least-squares fit over about 256
// batches, and the offset that fits the last 32 points best; a batch is stamped with the
// line's value at its x. A batch further off the line than the bound, a sender clock that
// goes back, a switch between the two paths, or more than 16 silent periods starts a new line
// at the receive time (a resync). Deterministic, single-threaded.
#pragma once

#include <array>
#include <cstdint>

#include "scenecrdt/runtime/interpolation.h"

namespace scenecrdt::runtime::internal {

class ArrivalClock {
 public:
  struct Stamp {
    int64_t stamp_us = 0;
    bool resynced = false;  // a new line started here (the first batch included)
  };

  // `receive_us` never decreases (the caller clamps); `sender_us` is kNoSenderTime on the raw
  // path. `bound_us`: the largest distance from the line kept. `fallback_period_us`: the
  // raw path's period until the clock has learnt one (0: unknown, the batch resyncs).
  Stamp OnBatch(int64_t receive_us, int64_t sender_us, int64_t bound_us, double fallback_period_us);
  // The raw path's learnt period between batches (0 before one is known).
  double period_us() const { return period_us_; }

 private:
  static constexpr int kWindow = 32;
  struct Point {
    double x = 0.0;  // sender time since the line's base (us), or periods since it
    double r = 0.0;  // receive time since the line's base (us)
  };

  void Restart(int64_t receive_us, int64_t sender_us, bool sender_mode);
  void AddPoint(const Point& p);
  // The line at x: offset fitted over the window for the slope (1, or the period).
  double Predict(double x) const;

  std::array<Point, kWindow> points_{};
  int count_ = 0;
  int next_ = 0;
  bool started_ = false;
  bool sender_mode_ = false;
  int64_t base_sender_us_ = 0;
  int64_t base_receive_us_ = 0;
  int64_t last_sender_us_ = 0;
  double last_x_ = 0.0;
  bool has_stamp_ = false;
  int64_t newest_stamp_us_ = 0;
  // Raw path: the period, its weighted least-squares fit since the line started, and the
  // mean distance of batches from the line (to tell skipped periods from jitter).
  double period_us_ = 0.0;
  double fit_weight_ = 0.0;
  double fit_mean_x_ = 0.0;
  double fit_mean_r_ = 0.0;
  double fit_cxx_ = 0.0;
  double fit_cxr_ = 0.0;
  double deviation_us_ = 0.0;
};

}  // namespace scenecrdt::runtime::internal
