// SPDX-License-Identifier: Apache-2.0
// Tests the Runtime facade end to end: CRDT bytes in, world matrices out, including deletes,
// entity deletion, loops formed and broken by messages, and order independence of the
// resulting matrices.
#include "scenecrdt/runtime/runtime.h"

#include <gtest/gtest.h>

#include <cstring>

namespace scenecrdt::runtime {
namespace {

using protocol::MakeEntityId;
using protocol::Transform;

std::vector<uint8_t> Put(EntityId e, uint32_t ts, float x, EntityId parent) {
  Transform t;
  t.position = {x, 0, 0};
  t.parent = parent;
  std::vector<uint8_t> out;
  protocol::AppendTransformPut(e, ts, t, out);
  return out;
}

std::vector<uint8_t> Message(protocol::MessageType type, EntityId e, uint32_t ts) {
  std::vector<uint8_t> out;
  protocol::AppendMessage({type, e, protocol::kTransformComponentId, ts, 0, {}}, out);
  return out;
}

float WorldX(const Runtime& rt, EntityId e) {
  auto index = rt.IndexOf(e);
  return index ? rt.world_matrices()[*index][3][0] : -1000.0f;
}

TEST(RuntimeTest, CrdtBytesBecomeWorldMatrices) {
  Runtime rt;
  ASSERT_TRUE(rt.ApplyCrdt(Put(512, 1, 1, 0)).has_value());
  ASSERT_TRUE(rt.ApplyCrdt(Put(513, 1, 2, 512)).has_value());
  rt.Update();
  EXPECT_EQ(WorldX(rt, 512), 1.0f);
  EXPECT_EQ(WorldX(rt, 513), 3.0f);
  EXPECT_EQ(rt.EffectiveParent(513), 512u);
  // An outdated message changes nothing; a newer one moves the subtree.
  ASSERT_TRUE(rt.ApplyCrdt(Put(512, 0, 50, 0)).has_value());
  ASSERT_TRUE(rt.ApplyCrdt(Put(512, 2, 10, 0)).has_value());
  rt.Update();
  EXPECT_EQ(WorldX(rt, 513), 12.0f);
  const auto changed = rt.changed_entities();
  EXPECT_NE(std::find(changed.begin(), changed.end(), 513u), changed.end());
}

TEST(RuntimeTest, DeletesRerootAndPlaceholdersFollowTheStore) {
  Runtime rt;
  ASSERT_TRUE(rt.ApplyCrdt(Put(512, 1, 1, 0)).has_value());
  ASSERT_TRUE(rt.ApplyCrdt(Put(513, 1, 2, 512)).has_value());
  rt.Update();
  // Deleting the parent's Transform: it becomes an identity placeholder at root.
  ASSERT_TRUE(rt.ApplyCrdt(Message(protocol::MessageType::kDeleteComponent, 512, 2)).has_value());
  rt.Update();
  EXPECT_TRUE(rt.IsPlaceholder(512));
  EXPECT_EQ(WorldX(rt, 513), 2.0f);
  // A newer version of the child's number retires (and purges) the old one.
  ASSERT_TRUE(rt.ApplyCrdt(Put(MakeEntityId(513, 1), 1, 7, 0)).has_value());
  rt.Update();
  EXPECT_FALSE(rt.IndexOf(513).has_value());
  EXPECT_FALSE(rt.IndexOf(512).has_value());  // no children left: no placeholder
  EXPECT_EQ(WorldX(rt, MakeEntityId(513, 1)), 7.0f);
}

TEST(RuntimeTest, LoopsFromMessagesAreParkedAndRecover) {
  Runtime rt;
  ASSERT_TRUE(rt.ApplyCrdt(Put(603, 1, 1, 604)).has_value());
  ASSERT_TRUE(rt.ApplyCrdt(Put(604, 1, 2, 603)).has_value());
  rt.Update();
  EXPECT_TRUE(rt.IsParked(603));
  EXPECT_TRUE(rt.IsParked(604));
  EXPECT_EQ(WorldX(rt, 603), 1.0f);
  ASSERT_TRUE(rt.ApplyCrdt(Put(604, 2, 2, 0)).has_value());
  rt.Update();
  EXPECT_FALSE(rt.IsParked(603));
  EXPECT_EQ(rt.EffectiveParent(603), 604u);
  EXPECT_EQ(WorldX(rt, 603), 3.0f);
}

TEST(RuntimeTest, WorldMatricesAreBitwiseEqualWhateverTheMessageOrder) {
  std::vector<std::vector<uint8_t>> messages;
  for (uint32_t i = 0; i < 40; ++i) {
    const EntityId parent = i % 5 == 0 ? 0 : 512 + (i * 7) % 40;
    messages.push_back(Put(512 + i, 1 + i % 3, 0.1f * static_cast<float>(i), parent));
    messages.push_back(Put(512 + i, 2 + i % 2, 0.3f * static_cast<float>(i), 512 + (i * 3) % 40));
  }
  messages.push_back(Message(protocol::MessageType::kDeleteEntity, 530, 0));
  auto world_of = [&](uint64_t seed) {
    std::vector<std::size_t> order(messages.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    uint64_t s = seed;
    for (std::size_t i = order.size(); i > 1; --i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(order[i - 1], order[(s >> 33) % i]);
    }
    Runtime rt;
    for (std::size_t k = 0; k < order.size(); ++k) {
      (void)rt.ApplyCrdt(messages[order[k]]);
      if (k % 13 == 0) rt.Update();  // intermediate frames must not leave traces
    }
    rt.Update();
    std::vector<std::pair<EntityId, glm::mat4>> out;
    for (const NodeInfo& n : rt.transforms().Nodes()) {
      out.emplace_back(n.entity, rt.world_matrices()[n.index]);
    }
    return out;
  };
  const auto reference = world_of(0);
  ASSERT_FALSE(reference.empty());
  for (uint64_t seed = 1; seed < 20; ++seed) {
    const auto got = world_of(seed);
    ASSERT_EQ(got.size(), reference.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].first, reference[i].first);
      EXPECT_EQ(std::memcmp(&got[i].second, &reference[i].second, sizeof(glm::mat4)), 0)
          << "entity " << got[i].first << " seed " << seed;
    }
  }
}

// A partial replica drops entities that left its view (docs/INTEREST.md): no tombstone, listed
// as removed at the next Update, and they may come back with their state.
TEST(RuntimeTest, ForgetEntitiesRemovesWithoutATombstoneAndTheyMayComeBack) {
  Runtime rt;
  ASSERT_TRUE(rt.ApplyCrdt(Put(512, 1, 1, 0)).has_value());
  ASSERT_TRUE(rt.ApplyCrdt(Put(513, 1, 2, 512)).has_value());
  ASSERT_TRUE(rt.ApplyCrdt(Put(514, 1, 3, 0)).has_value());
  rt.Update();
  EXPECT_EQ(WorldX(rt, 513), 3.0f);
  const EntityId gone[] = {512, 9999};
  EXPECT_EQ(rt.ForgetEntities(gone), 1u);  // 9999 was not held
  rt.Update();
  EXPECT_EQ(std::vector<EntityId>(rt.removed_entities().begin(), rt.removed_entities().end()),
            std::vector<EntityId>{512});
  EXPECT_FALSE(rt.store().HoldsEntity(512));
  EXPECT_EQ(rt.store().num_tombstones(), 0u);
  EXPECT_EQ(WorldX(rt, 513), 2.0f);  // its child hangs under a placeholder (identity)
  EXPECT_EQ(WorldX(rt, 514), 3.0f);  // untouched
  // It comes back: listed as added, its child under it again.
  ASSERT_TRUE(rt.ApplyCrdt(Put(512, 1, 1, 0)).has_value());
  rt.Update();
  EXPECT_EQ(std::vector<EntityId>(rt.added_entities().begin(), rt.added_entities().end()),
            std::vector<EntityId>{512});
  EXPECT_EQ(WorldX(rt, 513), 3.0f);
}

}  // namespace
}  // namespace scenecrdt::runtime
