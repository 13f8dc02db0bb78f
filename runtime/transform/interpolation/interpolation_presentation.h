// SPDX-License-Identifier: Apache-2.0
// Owns Presentation: the interpolated copy of a scene behind Runtime::EnableInterpolation
// (docs/INTERPOLATION.md). It keeps a PlaybackTimeline, one EntityTrack per entity that has
// (or recently had) a Transform, and a second TransformSystem fed with the local Transforms
// shown at the playback time, so parents, parked loops, placeholders and local components
// behave exactly as in the replica's. The replica itself is never touched. Single-threaded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/runtime/internal/flat_map.h"
#include "scenecrdt/runtime/interpolation.h"
#include "scenecrdt/runtime/playback_timeline.h"
#include "scenecrdt/runtime/transform/interpolation/interpolation_track.h"
#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::runtime::internal {

class Presentation {
 public:
  // `options` must pass ValidateInterpolationOptions. Every live Transform of `store` is shown
  // as it is at the first Update.
  Presentation(const InterpolationOptions& options, const CrdtStore& store);
  void set_options(const InterpolationOptions& options);

  // The Transform registers of `changed` (duplicates allowed) changed in one timed batch.
  void OnBatch(const BatchTime& time, std::span<const EntityId> changed, const CrdtStore& store);
  // They changed without a time (local writes, snapshots): shown at the next Update, at once.
  void OnImmediate(std::span<const EntityId> changed, const CrdtStore& store);
  // Shows the scene at render time `render_time_us` (within kMaxTimeUs).
  void Update(int64_t render_time_us, const UpdateOptions& options);

  TransformSystem& system() { return system_; }
  const TransformSystem& system() const { return system_; }
  // Entities whose Transform appeared in / left the presentation in the last Update.
  std::span<const EntityId> added() const { return added_; }
  std::span<const EntityId> removed() const { return removed_; }
  InterpolationStats stats() const;

 private:
  struct Track {
    EntityId entity = 0;
    bool shown = false;       // in the presentation system
    bool active = false;      // in active_
    uint64_t last_batch = 0;  // batch that last pushed a sample (duplicates in a batch)
    protocol::Transform shown_value;
    EntityTrack samples;
  };

  uint32_t TrackOf(EntityId e);
  void Activate(uint32_t index);
  void Show(Track& track, const Pose& pose);
  void Sample(EntityId e, const CrdtStore& store, int64_t stamp_us, bool immediate);

  InterpolationOptions options_;
  PlaybackTimeline timeline_;
  TransformSystem system_;
  std::vector<Track> tracks_;
  std::vector<uint32_t> free_tracks_;
  FlatMap<uint32_t, uint32_t> track_of_;  // entity -> index into tracks_
  std::vector<uint32_t> active_;          // tracks to evaluate at the next Update
  std::vector<EntityId> added_;
  std::vector<EntityId> removed_;
  std::vector<int64_t> gaps_us_;  // scratch: update gaps of one batch
  int64_t playback_us_ = kDistantPastUs;
  uint64_t batch_ = 0;
  InterpolationStats counters_;  // the counter fields; the rest is filled by stats()
};

}  // namespace scenecrdt::runtime::internal
