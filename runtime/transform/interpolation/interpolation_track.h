// SPDX-License-Identifier: Apache-2.0
// Owns EntityTrack: the bounded sample buffer of one entity and the pose it shows at a
// playback time (docs/INTERPOLATION.md): the sample itself, a blend of the two samples around
// the playback time (position and scale lerped, rotation slerped the short way), a bounded
// extrapolation past the newest sample while the stream is stalled (then a hold and a return to
// the newest sample), or nothing. A pair of samples that is not continuous (another parent, a
// jump longer than the snap distance, an untimed value, an appearance or a removal) is shown as
// a step at the second sample's time.
#pragma once

#include <array>
#include <cstdint>

#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::runtime::internal {

// Samples kept per entity: the one being left, and up to seven ahead of playback (the default
// delay needs two or three). When full, the oldest sample ahead of playback is dropped.
inline constexpr int kSamplesPerEntity = 8;
// A time before any real one: seeds and untimed values written before the first frame.
inline constexpr int64_t kDistantPastUs = -(int64_t{1} << 61);

struct TrackSample {
  int64_t stamp_us = kDistantPastUs;  // playback time at which this value holds
  protocol::Transform value;          // valid when present
  bool present = false;               // the entity had a Transform (false: removed)
  bool immediate = false;             // untimed (local write, snapshot): shown at once
  bool blends = false;  // set by Push: Continuous(previous sample, this one) when it came
};

enum class PoseKind : uint8_t {
  kAbsent,        // no Transform to show (not yet appeared, or removed)
  kSample,        // exactly one sample's value
  kInterpolated,  // between two samples
  kExtrapolated,  // past the newest sample during a stall
};

struct Pose {
  PoseKind kind = PoseKind::kAbsent;
  protocol::Transform value;
  bool settled = false;  // shows the newest sample (or nothing) for good: no work until new data
};

// What the presentation knows about the scene when it evaluates a track.
struct PoseParams {
  int64_t playback_us = 0;
  bool stalled = false;         // playback is past the newest batch
  int64_t newest_batch_us = 0;  // stamp of the newest batch
  int64_t max_span_us = 0;      // a pair further apart is held, then blended over this span
  int64_t interval_us = 0;      // observed update interval (0: unknown)
  int64_t max_extrapolation_us = 0;
  float snap_distance = 0.0f;
};

// True when the pair may be blended: both present, `b` timed, the same parent, every float
// finite, non-zero rotations, and positions at most `snap_distance` apart.
bool Continuous(const TrackSample& a, const TrackSample& b, float snap_distance);
// a -> b at parameter t (t > 1 extrapolates position and rotation; scale stops at b). The
// parent is a's. Fields equal in a and b keep their exact bits.
protocol::Transform Blend(const protocol::Transform& a, const protocol::Transform& b, float t);

class EntityTrack {
 public:
  int count() const { return count_; }
  const TrackSample& sample(int i) const { return samples_[static_cast<std::size_t>(i)]; }
  const TrackSample& newest() const { return samples_[static_cast<std::size_t>(count_ - 1)]; }

  // Appends `s`, noting whether it blends from the sample before it (`snap_distance`). A stamp
  // not after the newest one takes the newest's stamp and replaces it (same time: the later
  // value wins). Returns true when a full buffer dropped a sample.
  bool Push(TrackSample s, float snap_distance);
  // Drops samples stamped after `stamp_us` (not yet shown; superseded by an untimed value).
  void DropAfter(int64_t stamp_us);
  // Number of steps between present samples (teleports, reparents, bad floats) that playback
  // reached since the last call.
  int CrossSteps(int64_t playback_us);
  // Forgets samples playback has left behind, keeping the one being left (and, at the end of
  // the buffer, the pair before it for extrapolation).
  void Prune(int64_t playback_us);
  Pose Evaluate(const PoseParams& params) const;

 private:
  // Counters first: a frame reads them and the first samples, in the same cache lines.
  int count_ = 0;
  int64_t reached_us_ = kDistantPastUs - 1;  // newest stamp playback had reached (CrossSteps)
  std::array<TrackSample, kSamplesPerEntity> samples_{};
};

}  // namespace scenecrdt::runtime::internal
