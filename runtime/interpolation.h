// SPDX-License-Identifier: Apache-2.0
// Owns the plain value types of the interpolation buffer (docs/INTERPOLATION.md): when a batch
// arrived (BatchTime), how the presentation is delayed and smoothed (InterpolationOptions, with
// its validation), and what a renderer can show about it (InterpolationStats). Plain integers
// and floats only, so a C ABI can mirror them field by field. Times are int64 microseconds on
// the caller's clocks; the runtime never reads a clock.
#pragma once

#include <cstdint>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::runtime {

// Times outside [-kMaxTimeUs, kMaxTimeUs] are refused (kInvalidArgument): the timeline takes
// differences of times, which must not overflow. About 36 000 years either side of zero.
inline constexpr int64_t kMaxTimeUs = int64_t{1} << 60;
inline constexpr int64_t kNoSenderTime = INT64_MIN;

// When one batch (one ApplyCrdt call) arrived.
struct BatchTime {
  int64_t receive_time_us = 0;             // receiver clock, when the bytes arrived
  int64_t sender_time_us = kNoSenderTime;  // sender clock, where the sender stamped the batch
};

struct InterpolationOptions {
  // > 0: a constant delay (Source's cl_interp); 0: adaptive (the target below).
  int64_t fixed_delay_us = 0;
  // Adaptive target: max(interval_multiple x interval, interval + jitter_multiple x jitter),
  // clamped to [min_delay_us, max_delay_us]; initial_delay_us until an interval is observed.
  int64_t initial_delay_us = 100'000;
  int64_t min_delay_us = 0;
  int64_t max_delay_us = 1'000'000;
  double interval_multiple = 2.0;  // >= 1
  double jitter_multiple = 3.0;    // >= 0
  // Playback rate while the delay is above / below its target (Mirror: 2 % / 4 %).
  double catch_up = 0.02;   // in [0, 0.5]
  double slow_down = 0.04;  // in [0, 0.5]
  // Past the newest batch (a stall), entities that were moving keep moving this long, hold as
  // long, then return to their newest sample over as long (docs/INTERPOLATION.md).
  int64_t max_extrapolation_us = 250'000;
  // A local position change larger than this (metres) between two samples is a teleport: the
  // entity snaps at the new sample's time instead of sliding. Must be > 0 (infinity: never).
  float snap_distance = 5.0f;
  // Gaps between two updates of an entity longer than this are idle periods, not intervals.
  int64_t max_interval_us = 1'000'000;
};

// kInvalidArgument with the offending field in `detail` when an option is out of range.
Result<void> ValidateInterpolationOptions(const InterpolationOptions& options);

// What the presentation did; counters are totals since EnableInterpolation.
struct InterpolationStats {
  int64_t playback_time_us = 0;      // receiver-clock time being shown (render time - delay)
  int64_t delay_us = 0;              // current delay: render time - playback time
  int64_t target_delay_us = 0;       // where the delay is heading
  int64_t interval_us = 0;           // observed update interval of entities (0: none yet)
  int64_t jitter_us = 0;             // mean lateness of batches behind the smoothed arrival clock
  uint32_t buffer_depth = 0;         // batches received that playback has not reached yet
  uint32_t tracked_entities = 0;     // entities with a sample buffer
  uint32_t active_entities = 0;      // entities evaluated by the last update (moving or pending)
  uint64_t frames = 0;               // UpdateInterpolated calls
  uint64_t stalled_frames = 0;       // frames whose playback time was past the newest batch
  uint64_t extrapolated_frames = 0;  // frames that showed at least one extrapolated entity
  uint64_t snaps = 0;                // teleports and reparents shown as a jump, not a slide
  uint64_t entities_added = 0;       // entities that appeared in the presentation
  uint64_t entities_removed = 0;     // entities that left it
  uint64_t late_batches = 0;         // batches stamped behind the playback time when they came
  uint64_t resets = 0;               // arrival clock resyncs and forward jumps of playback
  uint64_t dropped_samples = 0;      // samples dropped because an entity's buffer was full
  uint64_t time_regressions = 0;     // receive or render times that went backwards (clamped)
};

}  // namespace scenecrdt::runtime
