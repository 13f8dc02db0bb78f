// SPDX-License-Identifier: Apache-2.0
// Tests EntityTrack (runtime/transform/interpolation/interpolation_track.h): which pairs blend and
// which step, the blend itself (exact endpoints, shortest-path rotation, non-unit quaternions), the
// bounded buffer, idle holds and the extrapolation rules.
#include "scenecrdt/runtime/transform/interpolation/interpolation_track.h"

#include <gtest/gtest.h>

#include <cmath>
#include <glm/gtc/quaternion.hpp>

#include "scenecrdt/protocol/transform_glm.h"

namespace scenecrdt::runtime::internal {
namespace {

using protocol::Transform;

TrackSample At(int64_t stamp_us, float x, protocol::EntityId parent = 0) {
  TrackSample s;
  s.stamp_us = stamp_us;
  s.present = true;
  s.value.position.x = x;
  s.value.parent = parent;
  return s;
}

TrackSample Removed(int64_t stamp_us) {
  TrackSample s;
  s.stamp_us = stamp_us;
  return s;
}

PoseParams Params(int64_t playback_us) {
  PoseParams p;
  p.playback_us = playback_us;
  p.newest_batch_us = 1'000'000;
  p.max_span_us = 200'000;
  p.interval_us = 50'000;
  p.max_extrapolation_us = 250'000;
  p.snap_distance = 5.0f;
  return p;
}

TEST(InterpolationTrackTest, ContinuityRulesWalkEveryStepCase) {
  const TrackSample a = At(0, 0.0f);
  EXPECT_TRUE(Continuous(a, At(10, 1.0f), 5.0f));
  EXPECT_TRUE(Continuous(a, At(10, 5.0f), 5.0f));        // exactly the snap distance: still a move
  EXPECT_FALSE(Continuous(a, At(10, 5.01f), 5.0f));      // a teleport
  EXPECT_FALSE(Continuous(a, At(10, 1.0f, 600), 5.0f));  // a reparent
  EXPECT_FALSE(Continuous(a, Removed(10), 5.0f));        // a removal
  EXPECT_FALSE(Continuous(Removed(0), At(10, 1.0f), 5.0f));  // an appearance
  TrackSample immediate = At(10, 1.0f);
  immediate.immediate = true;
  EXPECT_FALSE(Continuous(a, immediate, 5.0f));  // an untimed value shows at once
  TrackSample nan = At(10, 1.0f);
  nan.value.position.y = std::nanf("");
  EXPECT_FALSE(Continuous(a, nan, 5.0f));
  TrackSample infinite = At(10, 1.0f);
  infinite.value.scale.z = INFINITY;
  EXPECT_FALSE(Continuous(a, infinite, 5.0f));
  TrackSample zero_rotation = At(10, 1.0f);
  zero_rotation.value.rotation = {0.0f, 0.0f, 0.0f, 0.0f};
  EXPECT_FALSE(Continuous(a, zero_rotation, 5.0f));
  EXPECT_TRUE(Continuous(a, At(10, 1e6f), INFINITY));  // infinity: never by distance
}

TEST(InterpolationTrackTest, BlendKeepsEndpointsAndEqualFieldsExact) {
  Transform a, b;
  a.position = {0.1f, 7.0f, -3.0f};
  b.position = {0.3f, 7.0f, 2.0f};
  a.scale = {1.0f, 2.0f, 3.0f};
  b.scale = {1.5f, 2.0f, 0.5f};
  a.rotation = protocol::FromGlm(glm::angleAxis(0.2f, glm::vec3(0, 1, 0)));
  b.rotation = protocol::FromGlm(glm::angleAxis(0.6f, glm::vec3(0, 1, 0)));
  a.parent = b.parent = 700;
  const Transform start = Blend(a, b, 0.0f);
  EXPECT_TRUE(protocol::BitwiseEqual(start, a));
  const Transform half = Blend(a, b, 0.5f);
  EXPECT_FLOAT_EQ(half.position.x, 0.2f);
  EXPECT_EQ(half.position.y, 7.0f);  // unchanged field: the same bits
  EXPECT_FLOAT_EQ(half.position.z, -0.5f);
  EXPECT_FLOAT_EQ(half.scale.x, 1.25f);
  EXPECT_EQ(half.scale.y, 2.0f);
  EXPECT_EQ(half.parent, 700u);
  const glm::quat q = protocol::ToGlm(half.rotation);
  EXPECT_NEAR(glm::angle(q), 0.4f, 1e-5f);
  EXPECT_NEAR(glm::length(q), 1.0f, 1e-6f);
}

TEST(InterpolationTrackTest, RotationTakesTheShortWayAndKeepsItsLength) {
  Transform a, b;
  const glm::quat qa = glm::angleAxis(glm::radians(170.0f), glm::vec3(0, 0, 1));
  const glm::quat qb = glm::angleAxis(glm::radians(-170.0f), glm::vec3(0, 0, 1));
  a.rotation = protocol::FromGlm(qa);
  b.rotation = protocol::FromGlm(-qb);  // the same rotation, the other sign
  // Halfway between 170 and -170 degrees the short way is 180 degrees, not 0.
  const glm::quat mid = protocol::ToGlm(Blend(a, b, 0.5f).rotation);
  const glm::vec3 x_axis = mid * glm::vec3(1, 0, 0);
  EXPECT_NEAR(x_axis.x, -1.0f, 1e-5f);
  // A quaternion of length 2 scales by 4 in the pipeline: blends keep the lengths' lerp.
  Transform c = a, d = b;
  c.rotation = protocol::FromGlm(2.0f * qa);
  d.rotation = protocol::FromGlm(2.0f * qb);
  EXPECT_NEAR(glm::length(protocol::ToGlm(Blend(c, d, 0.3f).rotation)), 2.0f, 1e-5f);
  // Past b (extrapolation) rotation keeps turning at the same rate; scale stops at b.
  Transform e, f;
  e.rotation = protocol::FromGlm(glm::angleAxis(0.1f, glm::vec3(1, 0, 0)));
  f.rotation = protocol::FromGlm(glm::angleAxis(0.2f, glm::vec3(1, 0, 0)));
  f.scale = {2.0f, 2.0f, 2.0f};
  const Transform g = Blend(e, f, 1.5f);
  EXPECT_NEAR(glm::angle(protocol::ToGlm(g.rotation)), 0.25f, 1e-5f);
  EXPECT_EQ(g.scale.x, 2.0f);
}

TEST(InterpolationTrackTest, InterpolatesBetweenTheSamplesAroundPlayback) {
  EntityTrack track;
  track.Push(At(100, 0.0f), 5.0f);
  track.Push(At(200, 1.0f), 5.0f);
  EXPECT_EQ(track.Evaluate(Params(50)).kind, PoseKind::kAbsent);  // before the first sample
  EXPECT_FALSE(track.Evaluate(Params(50)).settled);
  Pose p = track.Evaluate(Params(150));
  EXPECT_EQ(p.kind, PoseKind::kInterpolated);
  EXPECT_FLOAT_EQ(p.value.position.x, 0.5f);
  p = track.Evaluate(Params(200));
  EXPECT_EQ(p.kind, PoseKind::kSample);
  EXPECT_EQ(p.value.position.x, 1.0f);
  EXPECT_TRUE(p.settled);
}

TEST(InterpolationTrackTest, StepsHoldTheFirstSampleUntilTheSecondOnesTime) {
  EntityTrack track;
  track.Push(At(100, 0.0f), 5.0f);
  track.Push(At(200, 50.0f), 5.0f);  // a teleport
  Pose p = track.Evaluate(Params(199));
  EXPECT_EQ(p.kind, PoseKind::kSample);
  EXPECT_EQ(p.value.position.x, 0.0f);
  EXPECT_EQ(track.CrossSteps(199), 0);
  p = track.Evaluate(Params(200));
  EXPECT_EQ(p.value.position.x, 50.0f);
  EXPECT_EQ(track.CrossSteps(200), 1);
  EXPECT_EQ(track.CrossSteps(300), 0);  // counted once
}

TEST(InterpolationTrackTest, RemovalShowsAtItsTimeAndSettles) {
  EntityTrack track;
  track.Push(At(100, 1.0f), 5.0f);
  track.Push(Removed(200), 5.0f);
  EXPECT_EQ(track.Evaluate(Params(150)).kind, PoseKind::kSample);
  const Pose p = track.Evaluate(Params(200));
  EXPECT_EQ(p.kind, PoseKind::kAbsent);
  EXPECT_TRUE(p.settled);
}

TEST(InterpolationTrackTest, AnIdleEntityHoldsThenMovesOverAtMostTheSpan) {
  EntityTrack track;
  track.Push(At(0, 0.0f), 5.0f);
  track.Push(At(10'000'000, 1.0f), 5.0f);  // 10 s later
  PoseParams params = Params(9'000'000);
  EXPECT_EQ(track.Evaluate(params).value.position.x, 0.0f);
  params.playback_us = 10'000'000 - params.max_span_us / 2;
  EXPECT_FLOAT_EQ(track.Evaluate(params).value.position.x, 0.5f);
}

TEST(InterpolationTrackTest, SameStampReplacesAndFullBufferThinsEvenly) {
  EntityTrack track;
  track.Push(At(100, 0.0f), 5.0f);
  track.Push(At(100, 3.0f), 5.0f);
  ASSERT_EQ(track.count(), 1);
  EXPECT_EQ(track.newest().value.position.x, 3.0f);
  track.Push(At(90, 4.0f), 5.0f);  // older stamp: takes the newest's time and replaces it
  ASSERT_EQ(track.count(), 1);
  EXPECT_EQ(track.newest().stamp_us, 100);
  EXPECT_EQ(track.newest().value.position.x, 4.0f);
  int dropped = 0;
  for (int i = 1; i <= 20; ++i)
    dropped += track.Push(At(100 + 10 * i, static_cast<float>(i)), 5.0f);
  EXPECT_EQ(track.count(), kSamplesPerEntity);
  EXPECT_EQ(dropped, 20 + 1 - kSamplesPerEntity);
  EXPECT_EQ(track.sample(0).stamp_us, 100);  // the first stays
  EXPECT_EQ(track.newest().stamp_us, 300);   // the newest stays
  // Thinned evenly: no gap is more than twice the mean gap (the newest samples are denser:
  // they have not been thinned yet).
  const int64_t mean_gap =
      (track.newest().stamp_us - track.sample(0).stamp_us) / (track.count() - 1);
  for (int i = 1; i < track.count(); ++i) {
    EXPECT_LE(track.sample(i).stamp_us - track.sample(i - 1).stamp_us, 2 * mean_gap) << i;
  }
}

TEST(InterpolationTrackTest, PruneKeepsTheSampleBeingLeftAndTheLastPair) {
  EntityTrack track;
  for (int i = 0; i < 5; ++i) track.Push(At(100 * i, static_cast<float>(i)), 5.0f);
  track.Prune(250);
  ASSERT_EQ(track.count(), 3);  // 200 (being left), 300, 400
  EXPECT_EQ(track.sample(0).stamp_us, 200);
  track.Prune(1000);
  ASSERT_EQ(track.count(), 2);  // the pair that gives a velocity
  EXPECT_EQ(track.sample(0).stamp_us, 300);
  track.DropAfter(350);
  ASSERT_EQ(track.count(), 1);
  EXPECT_EQ(track.newest().stamp_us, 300);
}

TEST(InterpolationTrackTest, ExtrapolatesOnlyWhileStalledBoundedHoldsThenReturns) {
  EntityTrack track;
  track.Push(At(950'000, 0.0f), 5.0f);
  track.Push(At(1'000'000, 0.25f), 5.0f);  // 5 m/s
  PoseParams params = Params(1'100'000);
  // Batches keep coming (not stalled): the entity stopped; it holds, exactly.
  Pose p = track.Evaluate(params);
  EXPECT_EQ(p.kind, PoseKind::kSample);
  EXPECT_EQ(p.value.position.x, 0.25f);
  EXPECT_TRUE(p.settled);
  // Stalled: it keeps moving...
  params.stalled = true;
  p = track.Evaluate(params);
  EXPECT_EQ(p.kind, PoseKind::kExtrapolated);
  EXPECT_NEAR(p.value.position.x, 0.75f, 1e-6f);
  EXPECT_FALSE(p.settled);
  // ...for at most max_extrapolation, holds there as long again...
  params.playback_us = 1'000'000 + 250'000;
  const float bound = track.Evaluate(params).value.position.x;
  EXPECT_NEAR(bound, 0.25f + 5.0f * 0.25f, 1e-5f);
  params.playback_us = 1'000'000 + 450'000;
  EXPECT_EQ(track.Evaluate(params).value.position.x, bound);
  // Never further than the snap distance.
  params.snap_distance = 0.5f;
  EXPECT_NEAR(track.Evaluate(params).value.position.x, 0.75f, 1e-5f);
  params.snap_distance = 5.0f;
  // ...then goes back to the newest sample over the same time, and stays there for good.
  params.playback_us = 1'000'000 + 625'000;
  p = track.Evaluate(params);
  EXPECT_EQ(p.kind, PoseKind::kExtrapolated);
  EXPECT_NEAR(p.value.position.x, 0.25f + 5.0f * 0.125f, 1e-5f);
  EXPECT_FALSE(p.settled);
  for (int64_t t : {1'000'000 + 750'000, 5'000'000}) {
    params.playback_us = t;
    p = track.Evaluate(params);
    EXPECT_EQ(p.kind, PoseKind::kSample);
    EXPECT_EQ(p.value.position.x, 0.25f);
    EXPECT_TRUE(p.settled);
  }
  // An entity whose last update is older than one interval before the newest batch stopped.
  params = Params(1'100'000);
  params.stalled = true;
  params.newest_batch_us = 1'060'000;
  EXPECT_EQ(track.Evaluate(params).kind, PoseKind::kSample);
}

TEST(InterpolationTrackTest, NoExtrapolationFromStillOrSqueezedOrUntimedPairs) {
  PoseParams params = Params(1'100'000);
  params.stalled = true;
  EntityTrack still;
  still.Push(At(950'000, 1.0f), 5.0f);
  still.Push(At(1'000'000, 1.0f), 5.0f);
  EXPECT_TRUE(still.Evaluate(params).settled);
  EntityTrack squeezed;  // a backlog delivered at once: no velocity to trust
  squeezed.Push(At(999'999, 0.0f), 5.0f);
  squeezed.Push(At(1'000'000, 0.25f), 5.0f);
  EXPECT_EQ(squeezed.Evaluate(params).kind, PoseKind::kSample);
  EntityTrack untimed;
  untimed.Push(At(950'000, 0.0f), 5.0f);
  TrackSample local = At(1'000'000, 0.25f);
  local.immediate = true;
  untimed.Push(local, 5.0f);
  EXPECT_EQ(untimed.Evaluate(params).kind, PoseKind::kSample);
}

}  // namespace
}  // namespace scenecrdt::runtime::internal
