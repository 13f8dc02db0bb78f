// SPDX-License-Identifier: Apache-2.0
// Owns the per-entity sample buffer, the blend and the step/extrapolation rules of
// EntityTrack.
#include "scenecrdt/runtime/transform/interpolation/interpolation_track.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace scenecrdt::runtime::internal {
namespace {

// Below this cosine between the rotations, slerp; above, the normalised lerp is as exact and
// avoids dividing by a vanishing sine.
constexpr double kNlerpCosine = 0.9995;
// Extrapolation needs a pair at least this far apart (and a quarter of the update interval):
// a pair squeezed together (a backlog delivered at once) gives no usable velocity.
constexpr int64_t kMinExtrapolationSpanUs = 1000;

float Lerp(float a, float b, float t) { return a == b ? a : a + (b - a) * t; }

double SquaredNorm(const protocol::Quatf& q) {
  const double x = q.x, y = q.y, z = q.z, w = q.w;
  return x * x + y * y + z * z + w * w;
}

double SquaredDistance(const protocol::Vec3f& a, const protocol::Vec3f& b) {
  const double dx = double{b.x} - a.x, dy = double{b.y} - a.y, dz = double{b.z} - a.z;
  return dx * dx + dy * dy + dz * dz;
}

bool SameBits(const protocol::Quatf& a, const protocol::Quatf& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

bool SameBits(const protocol::Vec3f& a, const protocol::Vec3f& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

// Shortest-path slerp of the directions, lerp of the lengths (the pipeline uses quaternions as
// given, so a non-unit rotation keeps its scaling effect). Both norms are > 0 (Continuous).
protocol::Quatf Slerp(const protocol::Quatf& a, const protocol::Quatf& b, double t) {
  const double la = std::sqrt(SquaredNorm(a)), lb = std::sqrt(SquaredNorm(b));
  double na[4] = {a.x / la, a.y / la, a.z / la, a.w / la};
  double nb[4] = {b.x / lb, b.y / lb, b.z / lb, b.w / lb};
  double cosine = na[0] * nb[0] + na[1] * nb[1] + na[2] * nb[2] + na[3] * nb[3];
  if (cosine < 0.0) {  // q and -q are the same rotation: take the short way
    for (double& c : nb) c = -c;
    cosine = -cosine;
  }
  double wa = 1.0 - t, wb = t;
  if (cosine < kNlerpCosine) {
    const double theta = std::acos(std::min(cosine, 1.0));
    const double sine = std::sin(theta);
    wa = std::sin((1.0 - t) * theta) / sine;
    wb = std::sin(t * theta) / sine;
  }
  double q[4];
  double norm = 0.0;
  for (int i = 0; i < 4; ++i) {
    q[i] = wa * na[i] + wb * nb[i];
    norm += q[i] * q[i];
  }
  // Lengths are not extrapolated: past b the length stays b's.
  const double length = (t >= 1.0 ? lb : la + (lb - la) * t) / std::sqrt(norm);
  return protocol::Quatf{static_cast<float>(q[0] * length), static_cast<float>(q[1] * length),
                         static_cast<float>(q[2] * length), static_cast<float>(q[3] * length)};
}

}  // namespace

bool Continuous(const TrackSample& a, const TrackSample& b, float snap_distance) {
  if (!a.present || !b.present || b.immediate) return false;
  if (a.value.parent != b.value.parent) return false;
  if (!protocol::IsFinite(a.value) || !protocol::IsFinite(b.value)) return false;
  if (!(SquaredNorm(a.value.rotation) > 0.0) || !(SquaredNorm(b.value.rotation) > 0.0)) {
    return false;
  }
  const double snap = snap_distance;
  return SquaredDistance(a.value.position, b.value.position) <= snap * snap;
}

protocol::Transform Blend(const protocol::Transform& a, const protocol::Transform& b, float t) {
  protocol::Transform r = a;
  r.position = {Lerp(a.position.x, b.position.x, t), Lerp(a.position.y, b.position.y, t),
                Lerp(a.position.z, b.position.z, t)};
  if (t >= 1.0f) {
    r.scale = b.scale;
  } else {
    r.scale = {Lerp(a.scale.x, b.scale.x, t), Lerp(a.scale.y, b.scale.y, t),
               Lerp(a.scale.z, b.scale.z, t)};
  }
  if (!SameBits(a.rotation, b.rotation)) r.rotation = Slerp(a.rotation, b.rotation, t);
  return r;
}

bool EntityTrack::Push(TrackSample s, float snap_distance) {
  // Continuity is decided once per pair, here, not on every frame that shows it.
  auto link = [&](int i) {
    TrackSample& b = samples_[static_cast<std::size_t>(i)];
    b.blends = i > 0 && Continuous(samples_[static_cast<std::size_t>(i - 1)], b, snap_distance);
  };
  if (count_ > 0) {
    TrackSample& last = samples_[static_cast<std::size_t>(count_ - 1)];
    if (s.stamp_us <= last.stamp_us) {
      s.stamp_us = last.stamp_us;
      last = s;
      link(count_ - 1);
      return false;
    }
  }
  bool dropped = false;
  if (count_ == kSamplesPerEntity) {
    // Thin evenly: drop the middle sample whose neighbours are closest in time. The first
    // (being shown, or the first appearance) and the newest always stay, so the presentation
    // still converges to the replica.
    int victim = 1;
    int64_t best_span = INT64_MAX;
    for (int i = 1; i + 1 < count_; ++i) {
      const int64_t span = samples_[static_cast<std::size_t>(i + 1)].stamp_us -
                           samples_[static_cast<std::size_t>(i - 1)].stamp_us;
      if (span < best_span) {
        best_span = span;
        victim = i;
      }
    }
    std::move(samples_.begin() + victim + 1, samples_.begin() + count_, samples_.begin() + victim);
    --count_;
    link(victim);
    dropped = true;
  }
  samples_[static_cast<std::size_t>(count_++)] = s;
  link(count_ - 1);
  return dropped;
}

void EntityTrack::DropAfter(int64_t stamp_us) {
  while (count_ > 0 && newest().stamp_us > stamp_us) --count_;
}

int EntityTrack::CrossSteps(int64_t playback_us) {
  int steps = 0;
  for (int i = 1; i < count_; ++i) {
    const TrackSample& a = samples_[static_cast<std::size_t>(i - 1)];
    const TrackSample& b = samples_[static_cast<std::size_t>(i)];
    if (b.stamp_us <= reached_us_ || b.stamp_us > playback_us) continue;
    if (a.present && b.present && !b.immediate && !b.blends) ++steps;
  }
  reached_us_ = std::max(reached_us_, playback_us);
  return steps;
}

void EntityTrack::Prune(int64_t playback_us) {
  int k = -1;
  while (k + 1 < count_ && samples_[static_cast<std::size_t>(k + 1)].stamp_us <= playback_us) ++k;
  // Keep the sample being left; at the end of the buffer, the pair that gives a velocity.
  const int first = k == count_ - 1 ? k - 1 : k;
  if (first <= 0) return;
  std::move(samples_.begin() + first, samples_.begin() + count_, samples_.begin());
  count_ -= first;
}

Pose EntityTrack::Evaluate(const PoseParams& params) const {
  Pose pose;
  int k = -1;
  while (k + 1 < count_ && samples_[static_cast<std::size_t>(k + 1)].stamp_us <= params.playback_us)
    ++k;
  if (k < 0) {
    pose.settled = count_ == 0;  // otherwise: appears when playback reaches its first sample
    return pose;
  }
  const TrackSample& a = samples_[static_cast<std::size_t>(k)];
  const bool newest = k == count_ - 1;
  if (!a.present) {
    pose.settled = newest;
    return pose;
  }
  pose.kind = PoseKind::kSample;
  pose.value = a.value;
  if (!newest) {
    const TrackSample& b = samples_[static_cast<std::size_t>(k + 1)];
    if (!b.blends) return pose;  // a step at b's time
    // An entity idle for long holds, then moves over at most max_span (no slow slide).
    const int64_t start_us =
        b.stamp_us - a.stamp_us > params.max_span_us ? b.stamp_us - params.max_span_us : a.stamp_us;
    if (params.playback_us <= start_us) return pose;
    const double t = static_cast<double>(params.playback_us - start_us) /
                     static_cast<double>(b.stamp_us - start_us);
    pose.kind = PoseKind::kInterpolated;
    pose.value = Blend(a.value, b.value, static_cast<float>(t));
    return pose;
  }
  pose.settled = true;
  // Past the newest sample: extrapolate only while the whole stream is stalled, and only an
  // entity that moved continuously up to the end of the stream (one that stopped earlier,
  // while batches kept coming, holds: it would otherwise overshoot).
  if (!params.stalled || k == 0) return pose;
  const TrackSample& prev = samples_[static_cast<std::size_t>(k - 1)];
  if (!a.blends) return pose;
  if (a.stamp_us + params.interval_us < params.newest_batch_us) return pose;
  if (SameBits(prev.value.position, a.value.position) &&
      SameBits(prev.value.rotation, a.value.rotation)) {
    return pose;
  }
  const int64_t start_us = a.stamp_us - prev.stamp_us > params.max_span_us
                               ? a.stamp_us - params.max_span_us
                               : prev.stamp_us;
  const int64_t span_us = a.stamp_us - start_us;
  if (span_us < std::max(kMinExtrapolationSpanUs, params.interval_us / 4)) return pose;
  // Out for max_extrapolation, held there as long again (a late batch continues from there),
  // then back to the newest sample over the same time: a stream that went quiet because the
  // entity stopped (no heartbeats) ends where the entity was last seen (docs/INTERPOLATION.md).
  const int64_t window_us = params.max_extrapolation_us;
  const int64_t past_us = params.playback_us - a.stamp_us;
  int64_t ahead_us = 0;
  if (past_us <= window_us) {
    ahead_us = past_us;
  } else if (past_us <= 2 * window_us) {
    ahead_us = window_us;
  } else if (past_us < 3 * window_us) {
    ahead_us = 3 * window_us - past_us;
  }
  if (ahead_us <= 0) return pose;
  double f = static_cast<double>(ahead_us) / static_cast<double>(span_us);
  // Never carried further than a jump that would snap.
  const double step = std::sqrt(SquaredDistance(prev.value.position, a.value.position));
  if (step * f > params.snap_distance) f = params.snap_distance / step;
  pose.kind = PoseKind::kExtrapolated;
  pose.value = Blend(prev.value, a.value, static_cast<float>(1.0 + f));
  pose.settled = false;
  return pose;
}

}  // namespace scenecrdt::runtime::internal
