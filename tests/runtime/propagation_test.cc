// SPDX-License-Identifier: Apache-2.0
// Tests propagation on generated scenes: dirty subtrees only, incremental layout under
// reparent churn (checked against the invariants and a fresh system), the split across 1..8
// threads (bit-identical to one thread), changed_entities, and index stability.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/runtime/transform_system.h"
#include "scenecrdt/testing/scene_shapes.h"
#include "tests/runtime/transform_test_util.h"

namespace scenecrdt::runtime {
namespace {

using protocol::EntityId;
using protocol::Transform;
using namespace scenecrdt::testing;

EntityId Id(uint32_t index) { return index + 1; }

void BuildShape(TransformSystem& ts, SceneShape shape, uint32_t n, uint64_t seed,
                bool features = false) {
  const std::vector<uint32_t> parents = GenerateParents(shape, n, seed);
  for (uint32_t i = 0; i < n; ++i) {
    Transform t = ShapeLocalTransform(i, seed, i % 3 != 0);
    t.parent = parents[i] == kShapeRoot ? 0 : Id(parents[i]);
    ts.SetTransform(Id(i), t);
    if (features && i % 10 == 0) {
      ts.SetRotationEuler(Id(i), static_cast<EulerOrder>(i % 6), {0.1f, 0.2f, 0.3f});
      ts.SetRotationPivot(Id(i), {0.5f, 0, 0});
      if (i % 20 == 0) ts.SetParentScaleInverse(Id(i), true);
    }
  }
}

std::vector<glm::mat4> WorldsByEntity(const TransformSystem& ts, uint32_t n) {
  std::vector<glm::mat4> w(n);
  for (uint32_t i = 0; i < n; ++i) w[i] = *ts.WorldMatrix(Id(i));
  return w;
}

void ExpectBitwiseEqual(const std::vector<glm::mat4>& a, const std::vector<glm::mat4>& b) {
  ASSERT_EQ(a.size(), b.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differ += testing::BitwiseEqual(a[i], b[i]) ? 0 : 1;
  EXPECT_EQ(differ, 0u);
}

// Any thread count gives the bits of one thread, for every shape, through a full sweep and
// a dirty update through subtree ranges. Splits land inside subtrees (one giant root, wide,
// chains, humanoids, balanced, random); the deep chain drops its splits (computing a split
// point's ancestors first would be serial work) and runs on one thread.
TEST(PropagationTest, AnyThreadCountIsBitIdentical) {
  for (SceneShape shape :
       {SceneShape::kRandomForest, SceneShape::kDeepChain, SceneShape::kWide,
        SceneShape::kChains1000, SceneShape::kHumanoids67, SceneShape::kBalanced}) {
    SCOPED_TRACE(SceneShapeName(shape));
    const uint32_t n = 24000;
    LayoutPolicy policy;
    policy.min_parallel_entities = 1024;  // up to 8 parts of 3 000 entities
    TransformSystem one;
    one.SetLayoutPolicy(policy);
    BuildShape(one, shape, n, 7, true);
    one.Update({1});
    std::vector<uint32_t> dirty;
    for (uint32_t i = 0; i < n; i += 97) dirty.push_back(i);
    const std::vector<glm::mat4> one_full = WorldsByEntity(one, n);
    for (uint32_t i : dirty) {
      Transform t = *one.GetTransform(Id(i));
      t.position.x += 0.25f;
      one.SetTransform(Id(i), t);
    }
    one.Update({1});
    EXPECT_FALSE(one.stats().last_parallel);
    const std::vector<glm::mat4> one_dirty = WorldsByEntity(one, n);
    for (int threads = 2; threads <= 8; ++threads) {
      SCOPED_TRACE(threads);
      TransformSystem many;
      many.SetLayoutPolicy(policy);
      BuildShape(many, shape, n, 7, true);
      many.Update({threads});
      if (shape == SceneShape::kDeepChain) {
        EXPECT_EQ(many.stats().last_parts, 1u);
      } else if (shape == SceneShape::kChains1000) {
        // A split up to 999 deep in a chain exceeds the budget of a 3 000-entity part (375)
        // unless it falls between chains.
        EXPECT_GE(many.stats().last_parts, 2u);
        EXPECT_LE(many.stats().last_parts, static_cast<std::size_t>(threads));
      } else {
        EXPECT_EQ(many.stats().last_parts, static_cast<std::size_t>(threads));
      }
      ExpectBitwiseEqual(WorldsByEntity(many, n), one_full);
      for (uint32_t i : dirty) {
        Transform t = *many.GetTransform(Id(i));
        t.position.x += 0.25f;
        many.SetTransform(Id(i), t);
      }
      many.Update({threads});
      ExpectBitwiseEqual(WorldsByEntity(many, n), one_dirty);
      EXPECT_TRUE(many.CheckLayout());
    }
  }
}

TEST(PropagationTest, DefaultThreadsUseTheHardwareAndStayBitIdentical) {
  const uint32_t n = 40000;
  TransformSystem one, dflt;
  BuildShape(one, SceneShape::kRandomForest, n, 11);
  BuildShape(dflt, SceneShape::kRandomForest, n, 11);
  one.Update({1});
  dflt.Update();
  const unsigned hw = std::thread::hardware_concurrency();
  EXPECT_EQ(dflt.stats().last_parts, std::clamp<std::size_t>(hw, 1, 4));  // 4: n * 2 / 16384
  ExpectBitwiseEqual(WorldsByEntity(dflt, n), WorldsByEntity(one, n));
}

// Every kernel variant (instruction set, cached or streaming with a deep or shallow ancestor
// stack, one to eight threads) gives the same bits, through full sweeps, dirty subtrees (few,
// small and large, before and after the sequence is split into pieces) and reparents (which
// refresh depths before the next streaming sweep).
TEST(PropagationTest, KernelVariantsAreBitIdentical) {
  struct Variant {
    KernelIsa isa;
    uint32_t min_streaming;
    uint32_t stack_depth;
    int threads;
  };
  const Variant variants[] = {
      {KernelIsa::kSse2, 0xFFFFFFFFu, 1024, 1},  // reference: baseline, cached
      {KernelIsa::kAuto, 0xFFFFFFFFu, 1024, 1},  // best ISA, cached
      {KernelIsa::kSse2, 1, 1024, 1},            // baseline, streaming
      {KernelIsa::kAuto, 1, 1024, 1},            // best ISA, streaming
      {KernelIsa::kAuto, 1, 3, 1},               // streaming, mostly deeper than stack
      {KernelIsa::kAuto, 1, 2, 2},               // same, two threads
      {KernelIsa::kSse2, 1, 7, 2},
      {KernelIsa::kAuto, 1, 5, 3},  // three to eight threads, streaming and cached
      {KernelIsa::kAuto, 0xFFFFFFFFu, 1024, 5},
      {KernelIsa::kSse2, 1, 1024, 8},
  };
  // Local components on every tenth entity everywhere, and none on the shapes whose dirty
  // subtrees are mostly small (those then take the small-subtree path of the streaming pass).
  const std::pair<SceneShape, bool> cases[] = {
      {SceneShape::kRandomForest, true},  {SceneShape::kDeepChain, true},
      {SceneShape::kChains1000, true},    {SceneShape::kHumanoids67, true},
      {SceneShape::kBalanced, true},      {SceneShape::kWide, true},
      {SceneShape::kRandomForest, false}, {SceneShape::kHumanoids67, false},
      {SceneShape::kBalanced, false}};
  for (const auto& [shape, features] : cases) {
    SCOPED_TRACE(std::string(SceneShapeName(shape)) + (features ? " with local components" : ""));
    const uint32_t n = 12000;
    std::vector<std::vector<glm::mat4>> frames[std::size(variants)];
    for (std::size_t v = 0; v < std::size(variants); ++v) {
      TransformSystem ts;
      LayoutPolicy policy;
      policy.kernel_isa = variants[v].isa;
      policy.min_streaming_entities = variants[v].min_streaming;
      policy.stream_stack_depth = variants[v].stack_depth;
      policy.min_parallel_entities = 1;
      ts.SetLayoutPolicy(policy);
      const int threads = variants[v].threads;
      BuildShape(ts, shape, n, 5, features);
      ts.Update({threads});
      frames[v].push_back(WorldsByEntity(ts, n));
      ts.MarkAllDirty();  // depths are current: a streaming sweep where enabled
      ts.Update({threads});
      EXPECT_EQ(ts.stats().last_streaming, variants[v].min_streaming == 1);
      frames[v].push_back(WorldsByEntity(ts, n));
      // A few dirty subtrees (small ones, within a block, and larger ones): streaming where
      // enabled, in one piece here and in many pieces after the reparents below.
      auto few_dirty = [&](uint64_t seed) {
        uint64_t g = seed;
        for (uint32_t k = 0; k < 40; ++k) {
          g = ShapeHash(g);
          const auto e = static_cast<uint32_t>(k < 4 ? k * 37 : g % n);
          Transform t = *ts.GetTransform(Id(e));
          t.position.x += 0.25f;
          ts.SetTransform(Id(e), t);
        }
        ts.Update({threads});
        EXPECT_FALSE(ts.stats().last_full_sweep);
        EXPECT_EQ(ts.stats().last_streaming, variants[v].min_streaming == 1);
        EXPECT_TRUE(ts.CheckLayout());
        frames[v].push_back(WorldsByEntity(ts, n));
      };
      few_dirty(17);
      uint64_t h = 3;
      for (uint32_t k = 0; k < 300; ++k) {  // reparents (random forest stays acyclic)
        h = ShapeHash(h);
        const auto c = static_cast<uint32_t>(1 + h % (n - 1));
        Transform t = *ts.GetTransform(Id(c));
        t.parent = k % 3 == 0 ? 0 : Id(static_cast<uint32_t>((h >> 32) % c));
        t.position.y += 0.5f;
        ts.SetTransform(Id(c), t);
      }
      ts.Update({threads});
      if (!ts.stats().last_rebuild) {
        EXPECT_FALSE(ts.stats().last_streaming);  // moved positions: depths refreshed instead
      }
      EXPECT_TRUE(ts.CheckLayout());
      frames[v].push_back(WorldsByEntity(ts, n));
      few_dirty(29);
      ts.MarkAllDirty();
      ts.Update({threads});
      EXPECT_TRUE(ts.CheckLayout());
      frames[v].push_back(WorldsByEntity(ts, n));
      if (variants[v].isa == KernelIsa::kSse2) {
        EXPECT_STREQ(ts.stats().kernel, "sse2");
      }
    }
    for (std::size_t v = 1; v < std::size(variants); ++v) {
      SCOPED_TRACE(v);
      for (std::size_t f = 0; f < frames[0].size(); ++f) {
        ExpectBitwiseEqual(frames[v][f], frames[0][f]);
      }
    }
  }
}

// A comb: a chain of 300 with a leaf on every link, the leaves after the whole chain in
// preorder. Streaming puts only the tail of each chain run on the ancestor ring, so most
// leaves find their parent's entry invalidated and read the world array: same bits as cached.
TEST(PropagationTest, BranchesOffLongChainRunsStreamBitIdentical) {
  const uint32_t links = 300;
  auto build = [&](TransformSystem& ts) {
    for (uint32_t i = 0; i < links; ++i) {
      Transform t = ShapeLocalTransform(i, 9, i % 2 == 0);
      t.parent = i == 0 ? 0 : Id(i - 1);
      ts.SetTransform(Id(i), t);
    }
    for (uint32_t i = 0; i < links; ++i) {
      Transform t = ShapeLocalTransform(links + i, 9);
      t.parent = Id(i);
      ts.SetTransform(Id(links + i), t);
    }
  };
  std::vector<std::vector<glm::mat4>> frames[3];
  const uint32_t rings[3] = {1024, 1024, 4};
  for (int v = 0; v < 3; ++v) {
    TransformSystem ts;
    LayoutPolicy policy;
    policy.min_streaming_entities = v == 0 ? 0xFFFFFFFFu : 1;
    policy.stream_stack_depth = rings[v];
    ts.SetLayoutPolicy(policy);
    build(ts);
    ts.Update({1});
    ts.MarkAllDirty();
    ts.Update({1});
    EXPECT_EQ(ts.stats().last_streaming, v != 0);
    frames[v].push_back(WorldsByEntity(ts, 2 * links));
    for (uint32_t e : {0u, 5u, 150u}) {  // dirty chain links: their rest of the comb
      Transform t = *ts.GetTransform(Id(e));
      t.position.z -= 0.5f;
      ts.SetTransform(Id(e), t);
    }
    ts.Update({1});
    frames[v].push_back(WorldsByEntity(ts, 2 * links));
  }
  for (int v = 1; v < 3; ++v) {
    for (std::size_t f = 0; f < frames[0].size(); ++f)
      ExpectBitwiseEqual(frames[v][f], frames[0][f]);
  }
}

TEST(PropagationTest, FewDirtyComputesOnlyDirtySubtrees) {
  TransformSystem ts;
  const uint32_t n = 100000;
  BuildShape(ts, SceneShape::kHumanoids67, n, 3);
  ts.Update();
  const std::vector<glm::mat4> before = WorldsByEntity(ts, n);
  // Move the hips (joint 0) of rig 10 and a hand (joint 20) of rig 20.
  const uint32_t hips = 67 * 10, hand = 67 * 20 + 20;
  for (uint32_t e : {hips, hand}) {
    Transform t = *ts.GetTransform(Id(e));
    t.position.y += 1.0f;
    ts.SetTransform(Id(e), t);
  }
  ts.Update();
  EXPECT_FALSE(ts.stats().last_full_sweep);
  const std::size_t hand_subtree = 1 + 5 * 4;
  EXPECT_EQ(ts.stats().computed, 67 + hand_subtree);
  const auto changed = ts.changed_entities();
  EXPECT_EQ(changed.size(), 67 + hand_subtree);
  const std::set<EntityId> changed_set(changed.begin(), changed.end());
  const std::vector<glm::mat4> after = WorldsByEntity(ts, n);
  for (uint32_t i = 0; i < n; ++i) {
    const bool in_rig10 = i / 67 == 10;
    const bool in_hand = i / 67 == 20 && (i % 67 == 20 || (i % 67 >= 21 && i % 67 <= 40));
    EXPECT_EQ(changed_set.count(Id(i)) == 1, in_rig10 || in_hand) << i;
    if (!in_rig10 && !in_hand) {
      EXPECT_TRUE(testing::BitwiseEqual(before[i], after[i])) << i;
    }
  }
  // Nothing dirty: nothing computed.
  ts.Update();
  EXPECT_EQ(ts.stats().computed, 0u);
  EXPECT_TRUE(ts.changed_entities().empty());
}

TEST(PropagationTest, ReparentChurnMatchesFreshBuild) {
  const uint32_t n = 20000;
  TransformSystem ts;
  BuildShape(ts, SceneShape::kRandomForest, n, 11, true);
  ts.Update();
  std::vector<uint32_t> parent = GenerateParents(SceneShape::kRandomForest, n, 11);
  uint64_t h = 99;
  for (int frame = 0; frame < 30; ++frame) {
    for (int k = 0; k < 200; ++k) {
      h = ShapeHash(h);
      const auto c = static_cast<uint32_t>(1 + h % (n - 1));
      const auto p = static_cast<uint32_t>((h >> 32) % (c + 1));  // == c: to root
      parent[c] = p == c ? kShapeRoot : p;
      Transform t = *ts.GetTransform(Id(c));
      t.parent = parent[c] == kShapeRoot ? 0 : Id(parent[c]);
      ts.SetTransform(Id(c), t);
    }
    ts.Update({frame % 2 + 1});
    ASSERT_TRUE(ts.CheckLayout()) << "frame " << frame;
  }
  EXPECT_LE(ts.stats().rebuilds, 2u);  // defragmentation compacts, it does not rebuild
  EXPECT_GT(ts.stats().compactions, 0u);
  // Same final state built from scratch.
  TransformSystem fresh;
  for (uint32_t i = 0; i < n; ++i) {
    Transform t = *ts.GetTransform(Id(i));
    fresh.SetTransform(Id(i), t);
    if (const LocalComponents* c = ts.GetLocalComponents(Id(i))) {
      for (int o = 0; o < kNumEulerOrders; ++o) {
        if (c->Has(LocalComponents::kRotationEuler0 << o)) {
          fresh.SetRotationEuler(Id(i), static_cast<EulerOrder>(o), c->rotation_euler[o]);
        }
      }
      if (c->Has(LocalComponents::kRotationPivot)) fresh.SetRotationPivot(Id(i), c->rotation_pivot);
      if (c->Has(LocalComponents::kParentScaleInverse)) fresh.SetParentScaleInverse(Id(i), true);
    }
  }
  fresh.Update();
  ExpectBitwiseEqual(WorldsByEntity(ts, n), WorldsByEntity(fresh, n));
}

// Children toggling between two parents (Bevy's reparent churn): every move links a piece
// right after the same two anchors, which exhausts the order labels there again and again.
TEST(PropagationTest, ChurnUnderTwoParentsKeepsSequenceOrder) {
  const uint32_t n = 4002;
  TransformSystem ts;
  LayoutPolicy policy;
  policy.min_pieces = 1u << 20;  // no compaction: the labels alone keep the order
  policy.min_piece_length = 1;
  policy.compact_debt_divisor = 1;
  ts.SetLayoutPolicy(policy);
  ts.SetTransform(Id(0), ShapeLocalTransform(0, 9));
  ts.SetTransform(Id(1), ShapeLocalTransform(1, 9));
  for (uint32_t i = 2; i < n; ++i) {
    Transform t = ShapeLocalTransform(i, 9);
    t.parent = Id(i % 2);
    ts.SetTransform(Id(i), t);
  }
  ts.Update();
  uint64_t h = 17;
  for (int frame = 0; frame < 40; ++frame) {
    for (int k = 0; k < 300; ++k) {
      h = ShapeHash(h);
      const auto c = static_cast<uint32_t>(2 + h % (n - 2));
      Transform t = *ts.GetTransform(Id(c));
      t.parent = t.parent == Id(0) ? Id(1) : Id(0);
      ts.SetTransform(Id(c), t);
    }
    ts.Update({frame % 2 + 1});
    ASSERT_TRUE(ts.CheckLayout()) << "frame " << frame;
  }
  EXPECT_EQ(ts.stats().compactions, 0u);
  EXPECT_GT(ts.stats().pieces, 1000u);
  TransformSystem fresh;
  for (uint32_t i = 0; i < n; ++i) fresh.SetTransform(Id(i), *ts.GetTransform(Id(i)));
  fresh.Update();
  ExpectBitwiseEqual(WorldsByEntity(ts, n), WorldsByEntity(fresh, n));
}

TEST(PropagationTest, IndicesAreStableAcrossReparents) {
  TransformSystem ts;
  const uint32_t n = 5000;
  BuildShape(ts, SceneShape::kRandomForest, n, 5);
  ts.Update();
  const uint64_t version = ts.layout_version();
  std::vector<uint32_t> index(n);
  for (uint32_t i = 0; i < n; ++i) index[i] = *ts.IndexOf(Id(i));
  Transform t = *ts.GetTransform(Id(n - 1));
  t.parent = Id(3);
  ts.SetTransform(Id(n - 1), t);
  ts.Update();
  EXPECT_EQ(ts.layout_version(), version);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(*ts.IndexOf(Id(i)), index[i]);
  const auto changed = ts.changed_entities();
  EXPECT_NE(std::find(changed.begin(), changed.end(), Id(n - 1)), changed.end());
  // world_matrices() is contiguous and indexed by IndexOf.
  const auto worlds = ts.world_matrices();
  EXPECT_TRUE(testing::BitwiseEqual(worlds[index[7]], *ts.WorldMatrix(Id(7))));
}

TEST(PropagationTest, RemovalsAndRespawnsKeepLayoutValid) {
  TransformSystem ts;
  LayoutPolicy policy;
  policy.min_pieces = 16;
  policy.min_piece_length = 4;
  ts.SetLayoutPolicy(policy);
  const uint32_t n = 3000;
  BuildShape(ts, SceneShape::kBalanced, n, 1);
  ts.Update();
  for (int frame = 0; frame < 10; ++frame) {
    for (uint32_t i = static_cast<uint32_t>(frame); i < n; i += 37) ts.RemoveTransform(Id(i));
    ts.Update();
    ASSERT_TRUE(ts.CheckLayout());
    for (uint32_t i = static_cast<uint32_t>(frame); i < n; i += 37) {
      Transform t = ShapeLocalTransform(i, 1);
      t.parent = i == 0 ? 0 : Id((i - 1) / 8);
      ts.SetTransform(Id(i), t);
    }
    ts.Update();
    ASSERT_TRUE(ts.CheckLayout());
  }
  EXPECT_EQ(ts.num_nodes(), n);
}

}  // namespace
}  // namespace scenecrdt::runtime
