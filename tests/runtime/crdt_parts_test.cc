// SPDX-License-Identifier: Apache-2.0
// Tests the one-job parts CrdtStore composes (runtime/crdt/README.md) on their own: the
// Transform register table and its swap-remove, the bounded append-set rule, the change log,
// the entity component index and the entity versions. The merge rules over them are tested
// through CrdtStore (crdt_store_test.cc, crdt_store_property_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "scenecrdt/runtime/crdt/append_sets.h"
#include "scenecrdt/runtime/crdt/change_log.h"
#include "scenecrdt/runtime/crdt/entity_component_index.h"
#include "scenecrdt/runtime/crdt/entity_versions.h"
#include "scenecrdt/runtime/crdt/lww_rule.h"
#include "scenecrdt/runtime/crdt/opaque_registers.h"
#include "scenecrdt/runtime/crdt/transform_registers.h"

namespace scenecrdt::runtime::internal {
namespace {

constexpr EntityId kReserved = 7;
const EntityId kScene = protocol::MakeEntityId(600, 0);
const EntityId kOther = protocol::MakeEntityId(2000, 3);

TEST(TransformRegistersTest, FindsAddsAndSwapRemoves) {
  TransformRegisters t;
  EXPECT_EQ(t.Find(kScene), TransformRegisters::kNone);
  EXPECT_FALSE(t.Erase(kScene));
  const uint32_t a = t.Add(kScene);
  const uint32_t b = t.Add(kReserved);
  const uint32_t c = t.Add(kOther);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.Find(kScene), a);
  EXPECT_EQ(t.Find(kReserved), b);
  EXPECT_EQ(t.Find(kOther), c);
  // Another version of a number is another entity.
  EXPECT_EQ(t.Find(protocol::MakeEntityId(600, 1)), TransformRegisters::kNone);
  EXPECT_EQ(t[a].timestamp, 0u);
  EXPECT_EQ(t[a].has_data, 0u);
  t[c].timestamp = 9;

  // The last register takes the erased one's slot and stays findable.
  EXPECT_TRUE(t.Erase(kScene));
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.Find(kScene), TransformRegisters::kNone);
  EXPECT_EQ(t.Find(kOther), a);
  EXPECT_EQ(t[a].timestamp, 9u);
  EXPECT_EQ(t.Find(kReserved), b);
  EXPECT_TRUE(t.Erase(kReserved));
  EXPECT_TRUE(t.Erase(kOther));
  EXPECT_EQ(t.size(), 0u);
}

TEST(OpaqueRegistersTest, KeysByComponentAndEntity) {
  OpaqueRegisters r;
  r.Add(1001, kScene).data = {1, 2};
  r.Add(1002, kScene).data = {3};
  r.Add(1001, kOther).data = {4};
  ASSERT_NE(r.Find(1002, kScene), nullptr);
  EXPECT_EQ(r.Find(1002, kScene)->data, std::vector<uint8_t>{3});
  EXPECT_EQ(r.Find(1002, kOther), nullptr);
  r.Erase(1001, kScene);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.Find(1001, kScene), nullptr);
  ASSERT_NE(r.Find(1001, kOther), nullptr);
  EXPECT_EQ(r.Find(1001, kOther)->data, std::vector<uint8_t>{4});
}

TEST(LwwRuleTest, TimestampThenPayloadBytes) {
  const std::vector<uint8_t> low{1, 2}, high{1, 3}, longer{0, 0, 0};
  EXPECT_EQ(LwwRule(1, true, low, 2, false, low), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(LwwRule(2, true, low, 1, false, high), MergeOutcome::kOutdatedTimestamp);
  EXPECT_EQ(LwwRule(1, true, low, 1, false, low), MergeOutcome::kNoChange);
  EXPECT_EQ(LwwRule(1, true, low, 1, false, high), MergeOutcome::kUpdatedData);
  EXPECT_EQ(LwwRule(1, true, high, 1, false, low), MergeOutcome::kOutdatedData);
  EXPECT_EQ(LwwRule(1, true, high, 1, false, longer), MergeOutcome::kUpdatedData);
  EXPECT_EQ(LwwRule(1, true, low, 1, true, {}), MergeOutcome::kOutdatedData);
  EXPECT_EQ(LwwRule(1, false, {}, 1, true, {}), MergeOutcome::kNoChange);
  EXPECT_EQ(LwwRule(1, false, {}, 1, false, low), MergeOutcome::kUpdatedData);
}

TEST(InsertBoundedTest, KeepsTheGreatestElements) {
  std::vector<AppendElement> set;
  EXPECT_EQ(InsertBounded(set, {2, {1}}, 2), MergeOutcome::kUpdatedData);
  EXPECT_EQ(InsertBounded(set, {2, {1}}, 2), MergeOutcome::kNoChange);
  EXPECT_EQ(InsertBounded(set, {1, {9}}, 2), MergeOutcome::kUpdatedData);
  // Full: smaller than every element is outdated, a greater one drops the smallest.
  EXPECT_EQ(InsertBounded(set, {0, {5}}, 2), MergeOutcome::kOutdatedData);
  EXPECT_EQ(InsertBounded(set, {3, {0}}, 2), MergeOutcome::kUpdatedData);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set[0], (AppendElement{2, {1}}));
  EXPECT_EQ(set[1], (AppendElement{3, {0}}));
  std::vector<AppendElement> none;
  EXPECT_EQ(InsertBounded(none, {1, {1}}, 0), MergeOutcome::kOutdatedData);
  EXPECT_TRUE(none.empty());
}

TEST(AppendSetsTest, SwapRemoveKeepsOthersFindable) {
  AppendSets s;
  s.Add(1001, kScene).sequence = 1;
  s.Add(1001, kOther).sequence = 2;
  s.Erase(1001, kScene);
  EXPECT_EQ(s.Find(1001, kScene), nullptr);
  ASSERT_NE(s.Find(1001, kOther), nullptr);
  EXPECT_EQ(s.Find(1001, kOther)->sequence, 2u);
}

TEST(ChangeLogTest, SequencesAfterAndCompaction) {
  ChangeLog log;
  EXPECT_EQ(log.sequence(), 0u);
  EXPECT_TRUE(log.After(0).empty());
  for (uint32_t i = 0; i < 1024; ++i) {
    EXPECT_EQ(log.Next(ChangeKind::kTransform, 1, 600 + i % 4), i + 1);
  }
  EXPECT_EQ(log.After(1020).size(), 4u);
  EXPECT_EQ(log.After(1020).front().sequence, 1021u);
  ASSERT_TRUE(log.NeedsCompaction());
  // Only the last change of each of the four entities is still the latest.
  log.Compact([](const Change& c) { return c.sequence > 1020; });
  EXPECT_FALSE(log.NeedsCompaction());
  EXPECT_EQ(log.After(0).size(), 4u);
  EXPECT_EQ(log.After(0).front().sequence, 1021u);
  EXPECT_EQ(log.Next(ChangeKind::kTombstone, 0, 600), 1025u);
}

TEST(EntityComponentIndexTest, TakesWhatAnEntityHolds) {
  EntityComponentIndex index;
  EXPECT_FALSE(index.Contains(kScene));
  EXPECT_FALSE(index.Take(kScene).has_value());
  index.AddRegister(kScene, 1001);
  index.AddAppendSet(kScene, 1002);
  index.AddRegister(kOther, 1003);
  EXPECT_TRUE(index.Contains(kScene));
  const auto held = index.Take(kScene);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->registers, std::vector<ComponentId>{1001});
  EXPECT_EQ(held->append_sets, std::vector<ComponentId>{1002});
  EXPECT_FALSE(index.Contains(kScene));
  ASSERT_TRUE(index.Contains(kOther));
  EXPECT_EQ(index.Take(kOther)->registers, std::vector<ComponentId>{1003});
}

TEST(EntityVersionsTest, CountsLiveEntitiesAndTheirVersions) {
  EntityVersions v;
  EXPECT_TRUE(v.no_deleted());
  v.NoteGained(kReserved);
  v.NoteGained(kOther);
  EXPECT_EQ(v.num_live(), 2u);
  EXPECT_EQ(v.LiveVersion(protocol::EntityNumber(kReserved)), nullptr);  // reserved: none kept
  ASSERT_NE(v.LiveVersion(2000), nullptr);
  EXPECT_EQ(*v.LiveVersion(2000), 3u);
  v.NoteLost(kOther);
  EXPECT_EQ(v.num_live(), 1u);
  EXPECT_EQ(v.LiveVersion(2000), nullptr);
  v.SetDeleted(2000, 3, 17);
  v.SetDeleted(2000, 5, 18);
  EXPECT_EQ(v.num_deleted(), 1u);
  ASSERT_NE(v.FindDeleted(2000), nullptr);
  EXPECT_EQ(v.FindDeleted(2000)->version, 5u);
  EXPECT_EQ(v.FindDeleted(2000)->sequence, 18u);
}

}  // namespace
}  // namespace scenecrdt::runtime::internal
