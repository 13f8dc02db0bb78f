// SPDX-License-Identifier: Apache-2.0
// Tests the effective tree (DESIGN 5, ADR-153): identity for missing Transforms, placeholders,
// the A..F example, loop parking and recovery (the 24 hammurabi orderings), long chains and
// loops without recursion.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "scenecrdt/runtime/transform_system.h"
#include "tests/runtime/transform_test_util.h"

namespace scenecrdt::runtime {
namespace {

using protocol::EntityId;
using protocol::Transform;

using protocol::MakeEntityId;
using testing::MakeTransform;

constexpr EntityId kA = 512, kB = 513, kC = 514, kD = 515, kE = 516, kF = 517;

void ExpectTree(const TransformSystem& ts,
                const std::vector<std::pair<EntityId, EntityId>>& edges) {
  for (const auto& [child, parent] : edges) {
    EXPECT_EQ(ts.EffectiveParent(child), parent) << "entity " << child;
  }
  EXPECT_TRUE(ts.CheckLayout());
}

TEST(SceneGraphTest, MissingTransformIsIdentityAtRoot) {
  TransformSystem ts;
  ts.SetTransform(kA, MakeTransform(0, {1, 2, 3}));
  ts.Update();
  EXPECT_FALSE(ts.IsNode(kB));
  EXPECT_FALSE(ts.IndexOf(kB).has_value());
  EXPECT_EQ(ts.EffectiveParent(kB), 0u);
  EXPECT_EQ(ts.IndexOf(0), 0u);
  SCENECRDT_EXPECT_MAT_NEAR(ts.world_matrices()[0], glm::mat4(1.0f), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kA), glm::translate(glm::mat4(1.0f), {1, 2, 3}), 0.0f);
}

TEST(SceneGraphTest, ParentWithoutTransformIsIdentityPlaceholder) {
  TransformSystem ts;
  ts.SetTransform(kB, MakeTransform(kA, {1, 0, 0}));
  ts.Update();
  EXPECT_TRUE(ts.IsPlaceholder(kA));
  EXPECT_TRUE(ts.IsNode(kA));
  EXPECT_EQ(ts.EffectiveParent(kA), 0u);
  EXPECT_EQ(ts.EffectiveParent(kB), kA);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kA), glm::mat4(1.0f), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kB), glm::translate(glm::mat4(1.0f), {1, 0, 0}), 0.0f);
  // The placeholder receives a Transform: it stops being a placeholder, the child follows.
  ts.SetTransform(kA, MakeTransform(0, {0, 5, 0}));
  ts.Update();
  EXPECT_FALSE(ts.IsPlaceholder(kA));
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kB), glm::translate(glm::mat4(1.0f), {1, 5, 0}), 0.0f);
  // And when the child leaves, the former placeholder stays (it has a Transform now).
  ts.SetTransform(kB, MakeTransform(0));
  ts.Update();
  EXPECT_TRUE(ts.IsNode(kA));
  ExpectTree(ts, {{kA, 0}, {kB, 0}});
}

TEST(SceneGraphTest, PlaceholderDisappearsWithItsLastChild) {
  TransformSystem ts;
  ts.SetTransform(kB, MakeTransform(kA));
  ts.SetTransform(kC, MakeTransform(kA));
  ts.Update();
  EXPECT_TRUE(ts.IsPlaceholder(kA));
  ts.RemoveTransform(kB);
  ts.Update();
  EXPECT_TRUE(ts.IsPlaceholder(kA));
  ts.RemoveTransform(kC);
  ts.Update();
  EXPECT_FALSE(ts.IsNode(kA));
  EXPECT_EQ(ts.num_nodes(), 0u);
  EXPECT_TRUE(ts.CheckLayout());
}

TEST(SceneGraphTest, VersionsAreDistinctEntities) {
  TransformSystem ts;
  const EntityId v0 = MakeEntityId(600, 0), v1 = MakeEntityId(600, 1);
  ts.SetTransform(v0, MakeTransform(0, {1, 0, 0}));
  ts.SetTransform(kB, MakeTransform(v1, {0, 1, 0}));
  ts.Update();
  EXPECT_TRUE(ts.IsPlaceholder(v1));
  EXPECT_FALSE(ts.IsPlaceholder(v0));
  EXPECT_EQ(ts.EffectiveParent(kB), v1);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kB), glm::translate(glm::mat4(1.0f), {0, 1, 0}), 0.0f);
}

TEST(SceneGraphTest, RootTransformIsStoredAndIgnored) {
  TransformSystem ts;
  ts.SetTransform(0, MakeTransform(0, {9, 9, 9}));
  ts.SetTransform(kA, MakeTransform(0, {1, 0, 0}));
  ts.Update();
  ASSERT_NE(ts.GetTransform(0), nullptr);
  EXPECT_EQ(ts.GetTransform(0)->position.x, 9.0f);
  EXPECT_FALSE(ts.IsNode(0));
  EXPECT_EQ(ts.num_nodes(), 1u);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kA), glm::translate(glm::mat4(1.0f), {1, 0, 0}), 0.0f);
}

// ADR-153: ROOT > A > B > C > D > E > F; removing D's Transform re-roots D's subtree.
TEST(SceneGraphTest, RemovingMidChainTransformReRootsSubtree) {
  TransformSystem ts;
  const EntityId chain[] = {kA, kB, kC, kD, kE, kF};
  EntityId parent = 0;
  for (EntityId e : chain) {
    ts.SetTransform(e, MakeTransform(parent, {1, 0, 0}));
    parent = e;
  }
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kF), glm::translate(glm::mat4(1.0f), {6, 0, 0}), 1e-6f);
  ts.RemoveTransform(kD);
  ts.Update();
  ExpectTree(ts, {{kA, 0}, {kB, kA}, {kC, kB}, {kD, 0}, {kE, kD}, {kF, kE}});
  EXPECT_TRUE(ts.IsPlaceholder(kD));
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kD), glm::mat4(1.0f), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kE), glm::translate(glm::mat4(1.0f), {1, 0, 0}), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kF), glm::translate(glm::mat4(1.0f), {2, 0, 0}), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kC), glm::translate(glm::mat4(1.0f), {3, 0, 0}), 1e-6f);
}

// The hammurabi vector: {e3 parent 1 @t1, e1 parent 2 @t2, e2 parent 3 @t3, e3 parent 0 @t4}.
// The final declared state is 3 -> 0, 1 -> 2, 2 -> 3 whatever the arrival order (e3's last
// write wins by timestamp): root > 3 > 2 > 1.
struct Message {
  EntityId entity;
  EntityId parent;
  uint32_t timestamp;
};

void ApplyHammurabi(const std::array<Message, 4>& order, bool update_each) {
  TransformSystem ts;
  std::map<EntityId, uint32_t> stamp;  // LWW per entity, as the CRDT store does
  for (const Message& m : order) {
    if (stamp[m.entity] > m.timestamp) continue;
    stamp[m.entity] = m.timestamp;
    ts.SetTransform(m.entity, MakeTransform(m.parent, {float(m.entity), 0, 0}));
    if (update_each) {
      ts.Update();
      EXPECT_TRUE(ts.CheckLayout());
    }
  }
  ts.Update();
  EXPECT_EQ(ts.EffectiveParent(3), 0u);
  EXPECT_EQ(ts.EffectiveParent(2), 3u);
  EXPECT_EQ(ts.EffectiveParent(1), 2u);
  for (EntityId e : {1u, 2u, 3u}) EXPECT_FALSE(ts.IsParked(e));
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(1), glm::translate(glm::mat4(1.0f), {6, 0, 0}), 1e-6f);
  EXPECT_TRUE(ts.CheckLayout());
}

TEST(SceneGraphTest, HammurabiAllOrderingsConverge) {
  std::array<Message, 4> msgs = {{{3, 1, 1}, {1, 2, 2}, {2, 3, 3}, {3, 0, 4}}};
  std::sort(msgs.begin(), msgs.end(),
            [](const Message& a, const Message& b) { return a.timestamp < b.timestamp; });
  int permutations = 0;
  do {
    SCOPED_TRACE("permutation " + std::to_string(permutations));
    ApplyHammurabi(msgs, /*update_each=*/false);
    ApplyHammurabi(msgs, /*update_each=*/true);
    ++permutations;
  } while (std::next_permutation(msgs.begin(), msgs.end(), [](const Message& a, const Message& b) {
    return a.timestamp < b.timestamp;
  }));
  EXPECT_EQ(permutations, 24);
}

TEST(SceneGraphTest, HammurabiIntermediateLoopIsParked) {
  TransformSystem ts;
  ts.SetTransform(3, MakeTransform(1));
  ts.SetTransform(1, MakeTransform(2));
  ts.SetTransform(2, MakeTransform(3));
  ts.Update();
  for (EntityId e : {1u, 2u, 3u}) {
    EXPECT_TRUE(ts.IsParked(e));
    EXPECT_EQ(ts.EffectiveParent(e), 0u);
  }
  ts.SetTransform(3, MakeTransform(0));
  ts.Update();
  ExpectTree(ts, {{3, 0}, {2, 3}, {1, 2}});
}

TEST(SceneGraphTest, SelfParentIsLoopOfOne) {
  TransformSystem ts;
  ts.SetTransform(kA, MakeTransform(kA, {1, 0, 0}));
  ts.SetTransform(kB, MakeTransform(kA, {0, 1, 0}));
  ts.Update();
  EXPECT_TRUE(ts.IsParked(kA));
  EXPECT_EQ(ts.EffectiveParent(kA), 0u);
  EXPECT_EQ(ts.EffectiveParent(kB), kA);  // descendants keep their declared parent
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kB), glm::translate(glm::mat4(1.0f), {1, 1, 0}), 0.0f);
  ts.SetTransform(kA, MakeTransform(0, {1, 0, 0}));
  ts.Update();
  EXPECT_FALSE(ts.IsParked(kA));
}

TEST(SceneGraphTest, LoopOfTwoAndThreeWithDescendants) {
  TransformSystem ts;
  ts.SetTransform(kA, MakeTransform(kB, {1, 0, 0}));
  ts.SetTransform(kB, MakeTransform(kA, {0, 1, 0}));
  ts.SetTransform(kC, MakeTransform(kD, {1, 0, 0}));
  ts.SetTransform(kD, MakeTransform(kE, {1, 0, 0}));
  ts.SetTransform(kE, MakeTransform(kC, {1, 0, 0}));
  ts.SetTransform(kF, MakeTransform(kE, {0, 0, 1}));  // hangs under a loop member
  ts.Update();
  for (EntityId e : {kA, kB, kC, kD, kE}) EXPECT_TRUE(ts.IsParked(e)) << e;
  EXPECT_FALSE(ts.IsParked(kF));
  ExpectTree(ts, {{kA, 0}, {kB, 0}, {kC, 0}, {kD, 0}, {kE, 0}, {kF, kE}});
  // Parked members apply their local transform relative to root.
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kF), glm::translate(glm::mat4(1.0f), {1, 0, 1}), 0.0f);
  // Break the 3-loop by a later write: every former member returns to its declared parent.
  ts.SetTransform(kE, MakeTransform(0, {1, 0, 0}));
  ts.Update();
  ExpectTree(ts, {{kE, 0}, {kC, kD}, {kD, kE}, {kF, kE}});
  for (EntityId e : {kC, kD, kE}) EXPECT_FALSE(ts.IsParked(e));
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kC), glm::translate(glm::mat4(1.0f), {3, 0, 0}), 0.0f);
}

TEST(SceneGraphTest, DeletingLoopMemberBreaksLoop) {
  TransformSystem ts;
  ts.SetTransform(kA, MakeTransform(kB));
  ts.SetTransform(kB, MakeTransform(kC));
  ts.SetTransform(kC, MakeTransform(kA));
  ts.Update();
  EXPECT_TRUE(ts.IsParked(kB));
  ts.RemoveTransform(kC);  // entity deleted
  ts.Update();
  EXPECT_TRUE(ts.IsPlaceholder(kC));
  ExpectTree(ts, {{kC, 0}, {kB, kC}, {kA, kB}});
  for (EntityId e : {kA, kB, kC}) EXPECT_FALSE(ts.IsParked(e));
}

TEST(SceneGraphTest, LoopClosedAndReopenedWithinOneUpdate) {
  TransformSystem ts;
  ts.SetTransform(kA, MakeTransform(0));
  ts.SetTransform(kB, MakeTransform(kA));
  ts.Update();
  ts.SetTransform(kA, MakeTransform(kB));
  ts.SetTransform(kA, MakeTransform(0));
  ts.Update();
  ExpectTree(ts, {{kA, 0}, {kB, kA}});
  EXPECT_FALSE(ts.IsParked(kA));
}

// A long chain and a long loop closed by one write; iterative everywhere.
void ChainAndLoop(uint32_t n) {
  TransformSystem ts;
  for (uint32_t i = 1; i <= n; ++i) ts.SetTransform(i, MakeTransform(i - 1, {0.001f, 0, 0}));
  ts.Update();
  EXPECT_EQ(ts.EffectiveParent(n), n - 1);
  const float expected_x = 0.001f * static_cast<float>(n);
  EXPECT_NEAR((*ts.WorldMatrix(n))[3][0], expected_x, expected_x * 1e-2f);
  ts.SetTransform(1, MakeTransform(n));  // closes the loop: every entity is a member
  ts.Update();
  EXPECT_TRUE(ts.IsParked(1));
  EXPECT_TRUE(ts.IsParked(n / 2));
  EXPECT_TRUE(ts.IsParked(n));
  EXPECT_EQ(ts.EffectiveParent(n), 0u);
  ts.SetTransform(n / 2, MakeTransform(0));  // breaks it in the middle
  ts.Update();
  EXPECT_FALSE(ts.IsParked(1));
  EXPECT_EQ(ts.EffectiveParent(1), n);
  EXPECT_EQ(ts.EffectiveParent(n / 2), 0u);
  EXPECT_EQ(ts.EffectiveParent(n / 2 + 1), n / 2);
  ts.Update();
}

TEST(SceneGraphTest, LoopOfHundredThousand) { ChainAndLoop(100000); }
// The 1 000 000 case runs in tools/bench/propagation_bench.cc (BM_DeepChainLoop1M); here a
// size that keeps the ASan suite fast.
TEST(SceneGraphTest, DeepChainAndLoopTwoHundredThousand) { ChainAndLoop(200000); }

TEST(SceneGraphTest, ReparentCostIsDepthNotScene) {
  TransformSystem ts;
  const uint32_t n = 50000;
  for (uint32_t i = 1; i <= n; ++i) ts.SetTransform(i, MakeTransform(0));
  ts.SetTransform(n + 1, MakeTransform(1));
  ts.Update();
  ts.SetTransform(n + 1, MakeTransform(2));
  ts.Update();
  EXPECT_LE(ts.graph().last_walk_steps(), 4u);
  EXPECT_FALSE(ts.stats().last_rebuild);
  EXPECT_LE(ts.stats().computed, 2u);
  EXPECT_TRUE(ts.CheckLayout());
}

}  // namespace
}  // namespace scenecrdt::runtime
