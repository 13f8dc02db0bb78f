// SPDX-License-Identifier: Apache-2.0
// CrdtStore's per-entity operations for partial replicas (docs/INTEREST.md "Entering and
// leaving"): ExportEntity (one entity's whole state: every register, deleted ones as
// DELETE_COMPONENT, every append element, with their timestamps) and ForgetEntity (drop an
// entity without a tombstone; it may come back), and HoldsEntity.
#include <gtest/gtest.h>

#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime {
namespace {

using protocol::EntityId;

constexpr EntityId kA = 600;
constexpr EntityId kB = 601;
constexpr protocol::ComponentId kName = 1090;
constexpr protocol::ComponentId kGone = 1091;
constexpr protocol::ComponentId kLog = 1092;

protocol::Transform At(float x, EntityId parent = 0) {
  protocol::Transform t;
  t.position = {x, 2.0f, 3.0f};
  t.parent = parent;
  return t;
}

// A store where kA has a Transform (written twice), a component, a deleted component and an
// append set of two elements, and kB has a Transform and a component.
CrdtStore Populated() {
  CrdtStore s;
  std::vector<uint8_t> out;
  const uint8_t name[] = {1, 2, 3};
  const uint8_t line1[] = {7};
  const uint8_t line2[] = {8, 9};
  EXPECT_TRUE(s.WriteTransform(kA, At(1), out).has_value());
  EXPECT_TRUE(s.WriteTransform(kA, At(5, kB), out).has_value());
  EXPECT_TRUE(s.WriteComponent(kA, kName, name, out).has_value());
  EXPECT_TRUE(s.WriteComponent(kA, kGone, name, out).has_value());
  EXPECT_TRUE(s.WriteDeleteComponent(kA, kGone, out).has_value());
  EXPECT_TRUE(s.WriteAppend(kA, kLog, line1, out).has_value());
  EXPECT_TRUE(s.WriteAppend(kA, kLog, line2, out).has_value());
  EXPECT_TRUE(s.WriteTransform(kB, At(9), out).has_value());
  EXPECT_TRUE(s.WriteComponent(kB, kName, name, out).has_value());
  return s;
}

// The messages of `s`'s snapshot about `e`, merged into an empty store: the reference of
// "this entity's whole state".
std::string RestrictedHash(const CrdtStore& s, EntityId e) {
  std::vector<uint8_t> all;
  s.ExportSnapshot(all);
  CrdtStore only;
  (void)protocol::DecodeStream(all, {}, [&](const protocol::CrdtMessage& m) {
    if (m.entity == e) (void)only.Merge(m);
  });
  return only.StateHashHex();
}

TEST(CrdtStoreEntityTest, ExportEntityIsTheWholeStateOfOneEntity) {
  const CrdtStore s = Populated();
  std::vector<uint8_t> out;
  // Transform, the component, the deleted component, two append elements.
  EXPECT_EQ(s.ExportEntity(kA, out), 5u);
  std::size_t messages = 0;
  bool deleted_component = false;
  ASSERT_TRUE(protocol::DecodeStream(out, {}, [&](const protocol::CrdtMessage& m) {
                EXPECT_EQ(m.entity, kA);
                ++messages;
                deleted_component |=
                    m.type == protocol::MessageType::kDeleteComponent && m.component == kGone;
              }).has_value());
  EXPECT_EQ(messages, 5u);
  EXPECT_TRUE(deleted_component);
  CrdtStore replica;
  ASSERT_TRUE(replica.MergeStream(out).has_value());
  EXPECT_EQ(replica.StateHashHex(), RestrictedHash(s, kA));
  EXPECT_EQ(replica.FindTransform(kA)->position.x, 5.0f);  // the newest value
  EXPECT_EQ(replica.FindTransform(kA)->parent, kB);
  EXPECT_EQ(replica.FindAppendSet(kLog, kA).size(), 2u);
  EXPECT_FALSE(replica.HoldsEntity(kB));
}

TEST(CrdtStoreEntityTest, ExportEntityAppendsAndNamesNothingForAnUnknownEntity) {
  const CrdtStore s = Populated();
  std::vector<uint8_t> out = {0xAB};
  EXPECT_EQ(s.ExportEntity(4242, out), 0u);
  EXPECT_EQ(out, std::vector<uint8_t>{0xAB});
  // It appends after what `out` holds.
  EXPECT_EQ(s.ExportEntity(kB, out), 2u);
  EXPECT_EQ(out.front(), 0xAB);
  EXPECT_GT(out.size(), 1u);
}

TEST(CrdtStoreEntityTest, AStaleReplicaTakesTheExportAsTheNewestState) {
  const CrdtStore s = Populated();
  // A replica that saw only the first Transform of kA.
  CrdtStore stale;
  std::vector<uint8_t> first;
  protocol::AppendTransformPut(kA, 1, At(1), first);
  ASSERT_TRUE(stale.MergeStream(first).has_value());
  std::vector<uint8_t> out;
  s.ExportEntity(kA, out);
  ASSERT_TRUE(stale.MergeStream(out).has_value());
  EXPECT_EQ(stale.StateHashHex(), RestrictedHash(s, kA));
}

TEST(CrdtStoreEntityTest, ForgetEntityDropsItWithoutATombstoneAndItMayComeBack) {
  CrdtStore s = Populated();
  const std::string before = s.StateHashHex();
  std::vector<uint8_t> a;
  s.ExportEntity(kA, a);
  EXPECT_FALSE(s.ForgetEntity(4242));  // not held
  EXPECT_TRUE(s.HoldsEntity(kA));
  EXPECT_TRUE(s.ForgetEntity(kA));
  EXPECT_FALSE(s.HoldsEntity(kA));
  EXPECT_FALSE(s.ForgetEntity(kA));  // held nothing any more
  EXPECT_EQ(s.FindTransform(kA), nullptr);
  EXPECT_FALSE(s.FindRegister(kName, kA).has_value());
  EXPECT_TRUE(s.FindAppendSet(kLog, kA).empty());
  EXPECT_EQ(s.num_tombstones(), 0u);
  EXPECT_NE(s.GetEntityState(kA), EntityState::kRemoved);
  // kB is untouched.
  EXPECT_EQ(s.FindTransform(kB)->position.x, 9.0f);
  EXPECT_EQ(s.StateHashHex(), RestrictedHash(s, kB));
  // Coming back: its whole state merges again (no tombstone refuses it), the same state.
  ASSERT_TRUE(s.MergeStream(a).has_value());
  EXPECT_EQ(s.StateHashHex(), before);
}

TEST(CrdtStoreEntityTest, ForgetEntityFeedsTheTransformChangeFeed) {
  CrdtStore s = Populated();
  s.set_track_transform_changes(true);
  s.ClearTransformChanges();
  ASSERT_TRUE(s.ForgetEntity(kA));
  bool noted = false;
  for (const EntityId e : s.transform_changes()) noted |= e == kA;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace scenecrdt::runtime
