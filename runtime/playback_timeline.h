// SPDX-License-Identifier: Apache-2.0
// Owns PlaybackTimeline: the clock of one scene's presentation (docs/INTERPOLATION.md).
// Everything runs on the receiver's clock, in microseconds:
//   - each batch gets a stamp: its receive time with the network jitter smoothed out (a line
//     fitted through recent arrivals, ArrivalClock), resynced to the receive time when a
//     batch is off the line by more than one buffer;
//   - playback runs `delay` behind the render time; the delay moves toward its target
//     max(2 x interval, interval + 3 x jitter) by small rate changes (+2 % / -4 %) and jumps
//     forward when it is more than one buffer behind. Playback never moves backwards.
// Deterministic: the same calls give the same stamps and playback times. Single-threaded.
#pragma once

#include <cstdint>
#include <deque>
#include <span>

#include "scenecrdt/runtime/interpolation.h"
#include "scenecrdt/runtime/transform/interpolation/interpolation_clock.h"

namespace scenecrdt::runtime {

class PlaybackTimeline {
 public:
  // `options` must pass ValidateInterpolationOptions.
  explicit PlaybackTimeline(const InterpolationOptions& options = {});
  void set_options(const InterpolationOptions& options) { options_ = options; }
  const InterpolationOptions& options() const { return options_; }

  // A batch arrived; returns the stamp its samples are shown at. Times within kMaxTimeUs. A
  // receive time earlier than the previous one is counted (time_regressions) and clamped.
  int64_t OnBatch(const BatchTime& time);
  // The gaps (stamp differences) between the previous sample and this batch's sample of each
  // entity the batch updated: their median feeds the update interval. Reorders `gaps_us`.
  void ObserveUpdateGaps(std::span<int64_t> gaps_us);
  // Moves playback to `render_time_us` (within kMaxTimeUs) and returns the playback time. A
  // render time earlier than the previous one is counted and holds playback.
  int64_t Advance(int64_t render_time_us);

  bool started() const { return started_; }  // Advance was called
  bool has_batches() const { return has_batches_; }
  int64_t playback_time_us() const { return playback_us_; }
  int64_t newest_stamp_us() const { return newest_stamp_us_; }  // meaningful with has_batches()
  // Playback is past the newest batch: nothing left to interpolate towards.
  bool stalled() const { return started_ && has_batches_ && playback_us_ > newest_stamp_us_; }
  int64_t delay_us() const { return started_ ? last_render_us_ - playback_us_ : 0; }
  int64_t target_delay_us() const;
  // Observed update interval of entities, else of batches; 0 before either is known.
  int64_t interval_us() const;
  int64_t jitter_us() const { return static_cast<int64_t>(jitter_us_); }
  uint32_t buffer_depth() const { return static_cast<uint32_t>(ahead_.size()); }
  uint64_t resets() const { return resets_; }
  uint64_t late_batches() const { return late_batches_; }
  uint64_t time_regressions() const { return time_regressions_; }

 private:
  InterpolationOptions options_;
  bool started_ = false;
  bool has_batches_ = false;
  int64_t last_render_us_ = 0;
  int64_t playback_us_ = 0;
  internal::ArrivalClock clock_;
  int64_t last_receive_us_ = 0;
  int64_t newest_stamp_us_ = 0;
  double batch_interval_us_ = 0.0;   // EMA of receive gaps between batches
  double update_interval_us_ = 0.0;  // EMA of per-batch median entity update gaps
  double jitter_us_ = 0.0;           // EMA of receive time - stamp
  std::deque<int64_t> ahead_;        // stamps of batches playback has not reached (bounded)
  uint64_t resets_ = 0;
  uint64_t late_batches_ = 0;
  uint64_t time_regressions_ = 0;
};

}  // namespace scenecrdt::runtime
