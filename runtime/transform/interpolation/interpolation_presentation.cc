// SPDX-License-Identifier: Apache-2.0
// Owns the bookkeeping of Presentation: which entities have a track, which need evaluating
// each frame (only those with samples ahead, pending or extrapolating: a scene at rest costs
// nothing), and the hand-over of shown poses to the presentation TransformSystem.
#include "scenecrdt/runtime/transform/interpolation/interpolation_presentation.h"

#include "scenecrdt/runtime/internal/prefetch.h"

namespace scenecrdt::runtime::internal {
namespace {

// A pair of samples further apart than this many update intervals is an idle period: the
// first is held, and the move takes at most this span (no slow slide after standing still).
constexpr int64_t kMaxSpanIntervals = 4;

}  // namespace

Presentation::Presentation(const InterpolationOptions& options, const CrdtStore& store)
    : options_(options), timeline_(options) {
  for (const CrdtStore::TransformRegister& r : store.transform_registers()) {
    if (r.has_data != 0) Sample(r.entity, store, kDistantPastUs, /*immediate=*/true);
  }
}

void Presentation::set_options(const InterpolationOptions& options) {
  options_ = options;
  timeline_.set_options(options);
}

uint32_t Presentation::TrackOf(EntityId e) {
  if (const uint32_t* index = track_of_.Find(e)) return *index;
  uint32_t index = 0;
  if (!free_tracks_.empty()) {
    index = free_tracks_.back();
    free_tracks_.pop_back();
  } else {
    index = static_cast<uint32_t>(tracks_.size());
    tracks_.emplace_back();
  }
  tracks_[index] = Track{};
  tracks_[index].entity = e;
  track_of_.Insert(e, index);
  return index;
}

void Presentation::Activate(uint32_t index) {
  if (tracks_[index].active) return;
  tracks_[index].active = true;
  active_.push_back(index);
}

void Presentation::Sample(EntityId e, const CrdtStore& store, int64_t stamp_us, bool immediate) {
  const protocol::Transform* t = store.FindTransform(e);
  if (e == protocol::kRootEntity) {
    // Stored and ignored by the graph (ADR-219): nothing to interpolate.
    if (t != nullptr) system_.SetTransform(e, *t);
    return;
  }
  const uint32_t index = TrackOf(e);
  Track& track = tracks_[index];
  if (!immediate) {
    if (track.last_batch == batch_) return;  // listed twice in one batch: same register
    track.last_batch = batch_;
  }
  TrackSample s;
  s.stamp_us = stamp_us;
  s.present = t != nullptr;
  if (t != nullptr) s.value = *t;
  s.immediate = immediate;
  if (immediate) {
    // Samples not shown yet were merged before this change: it supersedes them.
    track.samples.DropAfter(stamp_us);
  } else if (track.samples.count() > 0) {
    const TrackSample& last = track.samples.newest();
    if (last.present && s.present && !last.immediate && stamp_us > last.stamp_us) {
      gaps_us_.push_back(stamp_us - last.stamp_us);
    }
  }
  if (track.samples.Push(s, options_.snap_distance)) ++counters_.dropped_samples;
  Activate(index);
}

void Presentation::OnBatch(const BatchTime& time, std::span<const EntityId> changed,
                           const CrdtStore& store) {
  const int64_t stamp_us = timeline_.OnBatch(time);
  ++batch_;
  gaps_us_.clear();
  for (EntityId e : changed) Sample(e, store, stamp_us, /*immediate=*/false);
  timeline_.ObserveUpdateGaps(gaps_us_);
}

void Presentation::OnImmediate(std::span<const EntityId> changed, const CrdtStore& store) {
  for (EntityId e : changed) Sample(e, store, playback_us_, /*immediate=*/true);
}

void Presentation::Show(Track& track, const Pose& pose) {
  if (pose.kind == PoseKind::kAbsent) {
    if (track.shown) {
      system_.RemoveTransform(track.entity);
      track.shown = false;
      removed_.push_back(track.entity);
      ++counters_.entities_removed;
    }
    return;
  }
  if (!track.shown) {
    track.shown = true;
    added_.push_back(track.entity);
    ++counters_.entities_added;
  } else if (protocol::BitwiseEqual(track.shown_value, pose.value)) {
    return;  // unchanged: the presentation system does no work for it
  }
  track.shown_value = pose.value;
  system_.SetTransform(track.entity, pose.value);
}

void Presentation::Update(int64_t render_time_us, const UpdateOptions& options) {
  added_.clear();
  removed_.clear();
  playback_us_ = timeline_.Advance(render_time_us);
  ++counters_.frames;
  if (timeline_.stalled()) ++counters_.stalled_frames;
  PoseParams params;
  params.playback_us = playback_us_;
  params.stalled = timeline_.stalled();
  params.newest_batch_us = timeline_.newest_stamp_us();
  params.interval_us = timeline_.interval_us();
  params.max_span_us = params.interval_us > 0 ? kMaxSpanIntervals * params.interval_us
                                              : 2 * timeline_.target_delay_us();
  params.max_extrapolation_us = options_.max_extrapolation_us;
  params.snap_distance = options_.snap_distance;
  counters_.active_entities = static_cast<uint32_t>(active_.size());
  bool extrapolated = false;
  // Tracks are visited in no particular order and a large scene's do not fit in cache: ask
  // for one a few iterations ahead (its header and first samples).
  constexpr std::size_t kPrefetchAhead = 4;
  for (std::size_t n = 0; n < active_.size();) {
    if (n + kPrefetchAhead < active_.size()) {
      const Track& ahead = tracks_[active_[n + kPrefetchAhead]];
      const char* bytes = reinterpret_cast<const char*>(&ahead);
      for (int line = 0; line < 4; ++line) PrefetchForWrite(bytes + 64 * line);
    }
    const uint32_t index = active_[n];
    Track& track = tracks_[index];
    counters_.snaps += static_cast<uint64_t>(track.samples.CrossSteps(playback_us_));
    track.samples.Prune(playback_us_);
    const Pose pose = track.samples.Evaluate(params);
    Show(track, pose);
    extrapolated = extrapolated || pose.kind == PoseKind::kExtrapolated;
    if (!pose.settled) {
      ++n;
      continue;
    }
    track.active = false;
    active_[n] = active_.back();
    active_.pop_back();
    if (pose.kind == PoseKind::kAbsent) {  // removed for good: forget the entity
      track_of_.Erase(track.entity);
      track = Track{};
      free_tracks_.push_back(index);
    }
  }
  if (extrapolated) ++counters_.extrapolated_frames;
  system_.Update(options);
}

InterpolationStats Presentation::stats() const {
  InterpolationStats s = counters_;
  s.playback_time_us = timeline_.playback_time_us();
  s.delay_us = timeline_.delay_us();
  s.target_delay_us = timeline_.target_delay_us();
  s.interval_us = timeline_.interval_us();
  s.jitter_us = timeline_.jitter_us();
  s.buffer_depth = timeline_.buffer_depth();
  s.tracked_entities = static_cast<uint32_t>(track_of_.size());
  s.late_batches = timeline_.late_batches();
  s.resets = timeline_.resets();
  s.time_regressions = timeline_.time_regressions();
  return s;
}

}  // namespace scenecrdt::runtime::internal
