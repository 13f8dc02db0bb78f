// SPDX-License-Identifier: Apache-2.0
// Tests CrdtStore against the @dcl/ecs 7.28 rules of docs/reference/DCL-CRDT.md section 4 (the
// conflict table), DELETE_ENTITY and versions, append sets, local Lamport writes, limits,
// exports and the reference conflict case (tests/data/conflicts.*.json).
#include "scenecrdt/runtime/crdt_store.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/hex.h"
#include "tests/runtime/crdt_reference.h"

namespace scenecrdt::runtime {
namespace {

using protocol::CrdtMessage;
using protocol::MakeEntityId;
using protocol::MessageType;
using protocol::Transform;
using testing::OwnedMessage;

Transform MakeTransform(float x, EntityId parent = 0) {
  Transform t;
  t.position = {x, 0, 0};
  t.parent = parent;
  return t;
}

OwnedMessage Put(EntityId e, uint32_t ts, const Transform& t) {
  const auto bytes = protocol::StoreTransform(t);
  return {MessageType::kPutComponent, e, protocol::kTransformComponentId, ts,
          std::vector<uint8_t>(bytes.begin(), bytes.end())};
}
OwnedMessage PutOpaque(EntityId e, ComponentId c, uint32_t ts, std::vector<uint8_t> data) {
  return {MessageType::kPutComponent, e, c, ts, std::move(data)};
}
OwnedMessage Delete(EntityId e, uint32_t ts, ComponentId c = protocol::kTransformComponentId) {
  return {MessageType::kDeleteComponent, e, c, ts, {}};
}
OwnedMessage DeleteEntity(EntityId e) { return {MessageType::kDeleteEntity, e, 0, 0, {}}; }
OwnedMessage Append(EntityId e, ComponentId c, uint32_t ts, std::vector<uint8_t> data) {
  return {MessageType::kAppendValue, e, c, ts, std::move(data)};
}

MergeOutcome Apply(CrdtStore& store, const OwnedMessage& m) {
  return store.Merge(m.View()).outcome;
}

float PositionX(const CrdtStore& store, EntityId e) {
  const Transform* t = store.FindTransform(e);
  return t ? t->position.x : -1.0f;
}

// ---- The conflict table (docs/reference/DCL-CRDT.md section 4) ----

TEST(CrdtStoreTest, HigherTimestampWinsInBothOrders) {
  for (bool newer_first : {false, true}) {
    CrdtStore store;
    const auto older = Put(512, 4, MakeTransform(9));
    const auto newer = Put(512, 5, MakeTransform(1));
    if (newer_first) {
      EXPECT_EQ(Apply(store, newer), MergeOutcome::kUpdatedTimestamp);
      EXPECT_EQ(Apply(store, older), MergeOutcome::kOutdatedTimestamp);
    } else {
      EXPECT_EQ(Apply(store, older), MergeOutcome::kUpdatedTimestamp);
      EXPECT_EQ(Apply(store, newer), MergeOutcome::kUpdatedTimestamp);
    }
    EXPECT_EQ(PositionX(store, 512), 1.0f);
    EXPECT_EQ(store.FindRegister(1, 512)->timestamp, 5u);
  }
}

TEST(CrdtStoreTest, EqualTimestampPutsCompareRawBytesNotFloats) {
  // x = 1.0 (00 00 80 3f) beats x = 2.0 (00 00 00 40): byte 2 is 0x80 against 0x00.
  for (bool one_first : {false, true}) {
    CrdtStore store;
    const auto one = Put(600, 5, MakeTransform(1));
    const auto two = Put(600, 5, MakeTransform(2));
    Apply(store, one_first ? one : two);
    EXPECT_EQ(Apply(store, one_first ? two : one),
              one_first ? MergeOutcome::kOutdatedData : MergeOutcome::kUpdatedData);
    EXPECT_EQ(PositionX(store, 600), 1.0f);
  }
}

TEST(CrdtStoreTest, EqualTimestampPutBeatsDeleteInBothOrders) {
  CrdtStore a;
  EXPECT_EQ(Apply(a, Put(601, 3, MakeTransform(1))), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(Apply(a, Delete(601, 3)), MergeOutcome::kOutdatedData);
  EXPECT_EQ(PositionX(a, 601), 1.0f);
  CrdtStore b;
  EXPECT_EQ(Apply(b, Delete(601, 3)), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(Apply(b, Put(601, 3, MakeTransform(1))), MergeOutcome::kUpdatedData);
  EXPECT_EQ(PositionX(b, 601), 1.0f);
  EXPECT_EQ(a.StateHash(), b.StateHash());
}

TEST(CrdtStoreTest, EqualTimestampDeleteOverDeleteAndIdenticalPutChangeNothing) {
  CrdtStore store;
  Apply(store, Delete(602, 7));
  const uint64_t seq = store.sequence();
  EXPECT_EQ(Apply(store, Delete(602, 7)), MergeOutcome::kNoChange);
  Apply(store, Put(603, 2, MakeTransform(3)));
  EXPECT_EQ(Apply(store, Put(603, 2, MakeTransform(3))), MergeOutcome::kNoChange);
  EXPECT_EQ(store.sequence(), seq + 1);
}

TEST(CrdtStoreTest, NewerDeleteRemovesAndOlderPutIsOutdated) {
  CrdtStore store;
  Apply(store, Delete(602, 7));
  EXPECT_EQ(Apply(store, Put(602, 6, MakeTransform(5))), MergeOutcome::kOutdatedTimestamp);
  EXPECT_EQ(store.FindTransform(602), nullptr);
  auto r = store.FindRegister(1, 602);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_data);
  EXPECT_EQ(r->timestamp, 7u);
  EXPECT_EQ(store.GetEntityState(602), EntityState::kUsedEntity);
}

TEST(CrdtStoreTest, FreshReplicaAcceptsTimestampZeroAndDeleteOfUnknown) {
  CrdtStore store;
  EXPECT_EQ(Apply(store, Put(700, 0, MakeTransform(1))), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(Apply(store, Delete(701, 0)), MergeOutcome::kUpdatedTimestamp);
  EXPECT_TRUE(store.FindRegister(1, 701).has_value());
}

TEST(CrdtStoreTest, LongerPayloadWinsTiesThenBytes) {
  // @dcl/ecs compares length first: PUT "b"@1 then PUT "aa"@1 ends as "aa".
  const ComponentId c = 2000;
  CrdtStore store;
  Apply(store, PutOpaque(512, c, 1, {'b'}));
  EXPECT_EQ(Apply(store, PutOpaque(512, c, 1, {'a', 'a'})), MergeOutcome::kUpdatedData);
  EXPECT_EQ(protocol::ToHex(store.FindRegister(c, 512)->data), "6161");
  EXPECT_EQ(Apply(store, PutOpaque(512, c, 1, {'b'})), MergeOutcome::kOutdatedData);
  // Unsigned byte comparison: 0xff beats 0x01.
  EXPECT_EQ(Apply(store, PutOpaque(513, c, 1, {0x01, 0x00})), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(Apply(store, PutOpaque(513, c, 1, {0xff, 0x00})), MergeOutcome::kUpdatedData);
  // Empty payload at an equal timestamp loses to existing data, but beats a DELETE.
  EXPECT_EQ(Apply(store, PutOpaque(513, c, 1, {})), MergeOutcome::kOutdatedData);
  Apply(store, Delete(514, 1, c));
  EXPECT_EQ(Apply(store, PutOpaque(514, c, 1, {})), MergeOutcome::kUpdatedData);
  EXPECT_TRUE(store.FindRegister(c, 514)->has_data);
}

TEST(CrdtStoreTest, TimestampsCompareAsUnsigned32) {
  CrdtStore store;
  Apply(store, Put(512, 0x7FFFFFFF, MakeTransform(1)));
  EXPECT_EQ(Apply(store, Put(512, 0x80000000u, MakeTransform(2))), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(Apply(store, Put(512, 0xFFFFFFFFu, MakeTransform(3))), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(PositionX(store, 512), 3.0f);
}

// ---- DELETE_ENTITY, versions, reserved numbers ----

TEST(CrdtStoreTest, DeleteEntityDropsLaterMessagesForThatVersionAndOlder) {
  CrdtStore store;
  Apply(store, Put(600, 1, MakeTransform(1)));
  Apply(store, PutOpaque(600, 2000, 1, {1}));
  EXPECT_EQ(Apply(store, DeleteEntity(600)), MergeOutcome::kEntityDeleted);
  EXPECT_EQ(store.FindTransform(600), nullptr);
  EXPECT_FALSE(store.FindRegister(2000, 600).has_value());
  EXPECT_EQ(Apply(store, Put(600, 7, MakeTransform(2))), MergeOutcome::kEntityWasDeleted);
  EXPECT_EQ(store.GetEntityState(600), EntityState::kRemoved);
  EXPECT_EQ(Apply(store, DeleteEntity(600)), MergeOutcome::kNoChange);
  // The next version is a new entity.
  EXPECT_EQ(Apply(store, Put(MakeEntityId(600, 1), 1, MakeTransform(3))),
            MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(store.GetEntityState(MakeEntityId(600, 1)), EntityState::kUsedEntity);
  EXPECT_EQ(store.num_entities(), 1u);
}

TEST(CrdtStoreTest, NewerVersionRetiresAndPurgesOlderVersions) {
  CrdtStore store;
  Apply(store, Put(600, 5, MakeTransform(1)));
  Apply(store, Append(600, 3000, 1, {9}));
  EXPECT_EQ(store.GetEntityState(600), EntityState::kUsedEntity);
  Apply(store, Put(MakeEntityId(600, 2), 1, MakeTransform(2)));
  // @dcl/ecs keeps 600v0's data (a leak); we purge it (docs/CRDT.md).
  EXPECT_EQ(store.FindTransform(600), nullptr);
  EXPECT_TRUE(store.FindAppendSet(3000, 600).empty());
  EXPECT_EQ(store.DeletedVersion(600), std::optional<uint32_t>(1));
  EXPECT_EQ(store.GetEntityState(600), EntityState::kRemoved);
  EXPECT_EQ(store.GetEntityState(MakeEntityId(600, 1)), EntityState::kRemoved);
  EXPECT_EQ(Apply(store, Put(MakeEntityId(600, 1), 9, MakeTransform(3))),
            MergeOutcome::kEntityWasDeleted);
  EXPECT_EQ(store.num_entities(), 1u);
}

TEST(CrdtStoreTest, ReservedNumbersRefuseDeleteEntityAndKeepVersionsApart) {
  CrdtStore store;
  Apply(store, Put(5, 1, MakeTransform(1)));
  const MergeResult r = store.Merge(DeleteEntity(5).View());
  EXPECT_EQ(r.outcome, MergeOutcome::kRefused);
  EXPECT_EQ(r.reason, ErrorCode::kReservedEntity);
  EXPECT_EQ(PositionX(store, 5), 1.0f);
  Apply(store, Put(MakeEntityId(5, 1), 1, MakeTransform(2)));
  EXPECT_EQ(PositionX(store, 5), 1.0f);  // no retirement below 512
  EXPECT_EQ(store.GetEntityState(5), EntityState::kReserved);
  EXPECT_EQ(store.num_tombstones(), 0u);
}

TEST(CrdtStoreTest, NetworkVariantsMergeAsPlainFormsKeyedByTheirEntity) {
  CrdtStore store;
  const auto bytes = protocol::StoreTransform(MakeTransform(4));
  CrdtMessage put{MessageType::kPutComponentNetwork, 520, 1, 3, 77, bytes};
  EXPECT_EQ(store.Merge(put).outcome, MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(PositionX(store, 520), 4.0f);
  CrdtMessage del{MessageType::kDeleteComponentNetwork, 520, 1, 4, 77, {}};
  EXPECT_EQ(store.Merge(del).outcome, MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(store.FindTransform(520), nullptr);
  CrdtMessage del_entity{MessageType::kDeleteEntityNetwork, 520, 0, 0, 77, {}};
  EXPECT_EQ(store.Merge(del_entity).outcome, MergeOutcome::kEntityDeleted);
  EXPECT_EQ(store.GetEntityState(520), EntityState::kRemoved);
}

TEST(CrdtStoreTest, RefusalsLeaveTheStateUntouched) {
  StoreLimits limits;
  limits.max_entities = 2;
  limits.max_tombstones = 1;
  limits.max_payload_bytes = 44;
  limits.refuse_non_finite_transforms = true;
  CrdtStore store(limits);
  Apply(store, Put(512, 1, MakeTransform(1)));
  Apply(store, Put(513, 1, MakeTransform(1)));
  const std::string before = testing::DumpStore(store);
  auto reason = [&](const OwnedMessage& m) {
    const MergeResult r = store.Merge(m.View());
    EXPECT_EQ(r.outcome, MergeOutcome::kRefused);
    return r.reason;
  };
  EXPECT_EQ(reason(Put(514, 1, MakeTransform(1))), ErrorCode::kTooManyEntities);
  EXPECT_EQ(reason(PutOpaque(512, 2000, 1, std::vector<uint8_t>(45))), ErrorCode::kPayloadTooLarge);
  EXPECT_EQ(reason(PutOpaque(512, 1, 1, std::vector<uint8_t>(4))), ErrorCode::kBadTransformSize);
  Transform nan = MakeTransform(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(reason(Put(512, 9, nan)), ErrorCode::kNonFiniteTransform);
  Transform inf = MakeTransform(1);
  inf.scale.y = std::numeric_limits<float>::infinity();
  EXPECT_EQ(reason(Put(512, 9, inf)), ErrorCode::kNonFiniteTransform);
  EXPECT_EQ(reason({static_cast<MessageType>(99), 512, 0, 0, {}}), ErrorCode::kUnknownMessageType);
  EXPECT_EQ(testing::DumpStore(store), before);
  // A newer version replacing a live entity is not a new entity.
  EXPECT_EQ(Apply(store, Put(MakeEntityId(512, 1), 1, MakeTransform(2))),
            MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(reason(DeleteEntity(600)), ErrorCode::kTooManyTombstones);
  EXPECT_EQ(store.num_entities(), 2u);
}

// ---- Append sets ----

TEST(CrdtStoreTest, AppendSetsAreBoundedGrowOnlySetsKeepingTheGreatest) {
  StoreLimits limits;
  limits.max_append_values = 3;
  CrdtStore store(limits);
  const ComponentId c = 1209;
  EXPECT_EQ(Apply(store, Append(512, c, 5, {1})), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(Apply(store, Append(512, c, 5, {1})), MergeOutcome::kNoChange);
  EXPECT_EQ(Apply(store, Append(512, c, 2, {7})), MergeOutcome::kUpdatedData);
  EXPECT_EQ(Apply(store, Append(512, c, 9, {0})), MergeOutcome::kUpdatedData);
  EXPECT_EQ(Apply(store, Append(512, c, 1, {0})), MergeOutcome::kOutdatedData);  // below all
  EXPECT_EQ(Apply(store, Append(512, c, 6, {0})), MergeOutcome::kUpdatedData);   // evicts ts 2
  auto set = store.FindAppendSet(c, 512);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set[0].timestamp, 5u);
  EXPECT_EQ(set[1].timestamp, 6u);
  EXPECT_EQ(set[2].timestamp, 9u);
}

// ---- Local writes ----

TEST(CrdtStoreTest, LocalWritesFollowThePerKeyLamportRule) {
  CrdtStore store;
  std::vector<uint8_t> out;
  Transform t = MakeTransform(1);
  t.position = {1, 2, 3};
  ASSERT_TRUE(store.WriteTransform(512, t, out).has_value());
  // Golden message (a) of docs/reference/DCL-CRDT.md: the first local write of entity 512 has
  // timestamp 1.
  EXPECT_EQ(protocol::ToHex(out),
            "44000000010000000002000001000000010000002c0000000000803f0000004000004040000000000000"
            "0000000000000000803f0000803f0000803f0000803f00000000");
  // Unchanged data is not echoed.
  out.clear();
  EXPECT_EQ(store.WriteTransform(512, t, out).value(), MergeOutcome::kNoChange);
  EXPECT_TRUE(out.empty());
  // After receiving ts=10, the next local write emits 11.
  Apply(store, Put(512, 10, MakeTransform(7)));
  ASSERT_TRUE(store.WriteTransform(512, MakeTransform(8), out).has_value());
  EXPECT_EQ(store.FindRegister(1, 512)->timestamp, 11u);
  // Delete: stored + 1; deleting again sends nothing.
  out.clear();
  EXPECT_EQ(store.WriteDeleteComponent(512, 1, out).value(), MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(protocol::ToHex(out),
            "14000000020000000002000001000000"
            "0c000000");
  out.clear();
  EXPECT_EQ(store.WriteDeleteComponent(512, 1, out).value(), MergeOutcome::kNoChange);
  EXPECT_TRUE(out.empty());
  // Delete entity: a DELETE_ENTITY; reserved numbers are an error; later writes are errors.
  EXPECT_EQ(store.WriteDeleteEntity(512, out).value(), MergeOutcome::kEntityDeleted);
  EXPECT_EQ(protocol::ToHex(out), "0c0000000300000000020000");
  EXPECT_EQ(store.WriteDeleteEntity(2, out).error().code, ErrorCode::kReservedEntity);
  EXPECT_EQ(store.WriteTransform(512, t, out).error().code, ErrorCode::kInvalidArgument);
}

TEST(CrdtStoreTest, LocalWriteRefusalsAreErrorsAndExhaustedClocksAreRefused) {
  StoreLimits limits;
  limits.refuse_non_finite_transforms = true;
  CrdtStore store(limits);
  std::vector<uint8_t> out;
  Transform nan = MakeTransform(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(store.WriteTransform(512, nan, out).error().code, ErrorCode::kNonFiniteTransform);
  Apply(store, Put(513, 0xFFFFFFFFu, MakeTransform(1)));
  EXPECT_EQ(store.WriteTransform(513, MakeTransform(2), out).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(store.WriteAppend(514, 1209, std::vector<uint8_t>{1}, out).has_value());
  ASSERT_TRUE(store.WriteAppend(514, 1209, std::vector<uint8_t>{1}, out).has_value());
  EXPECT_EQ(store.FindAppendSet(1209, 514).size(), 2u);  // distinct timestamps 1 and 2
}

// ---- Change feed, exports ----

TEST(CrdtStoreTest, TransformChangeFeedReportsPutsDeletesAndPurges) {
  CrdtStore store;
  store.set_track_transform_changes(true);
  Apply(store, Put(512, 1, MakeTransform(1)));
  Apply(store, Put(512, 0, MakeTransform(1)));                   // outdated: no change
  Apply(store, PutOpaque(513, 2000, 1, {1}));                    // not a transform
  Apply(store, Put(MakeEntityId(512, 1), 1, MakeTransform(2)));  // purges 512v0
  std::vector<EntityId> got(store.transform_changes().begin(), store.transform_changes().end());
  EXPECT_EQ(got, (std::vector<EntityId>{512, 512, MakeEntityId(512, 1)}));
  store.ClearTransformChanges();
  EXPECT_TRUE(store.transform_changes().empty());
}

TEST(CrdtStoreTest, SnapshotRebuildsTheStateAndDeltaCoversLaterChanges) {
  CrdtStore store;
  Apply(store, Put(512, 3, MakeTransform(1)));
  Apply(store, Delete(513, 4));
  Apply(store, PutOpaque(514, 2000, 2, {1, 2, 3}));
  Apply(store, Append(515, 1209, 1, {4}));
  Apply(store, DeleteEntity(MakeEntityId(516, 2)));
  CrdtStore at_mark = store;
  const uint64_t mark = store.sequence();
  Apply(store, Put(512, 4, MakeTransform(2)));
  Apply(store, DeleteEntity(514));
  Apply(store, Append(515, 1209, 2, {5}));

  std::vector<uint8_t> snapshot;
  EXPECT_GT(store.ExportSnapshot(snapshot), 0u);
  CrdtStore rebuilt;
  ASSERT_TRUE(rebuilt.MergeStream(snapshot).has_value());
  EXPECT_EQ(testing::DumpStore(rebuilt), testing::DumpStore(store));
  EXPECT_EQ(rebuilt.StateHashHex(), store.StateHashHex());

  std::vector<uint8_t> delta;
  store.ExportChangesSince(mark, delta);
  EXPECT_LT(delta.size(), snapshot.size());
  ASSERT_TRUE(at_mark.MergeStream(delta).has_value());
  EXPECT_EQ(at_mark.StateHashHex(), store.StateHashHex());

  std::vector<uint8_t> nothing;
  EXPECT_EQ(store.ExportChangesSince(store.sequence(), nothing), 0u);
  EXPECT_TRUE(nothing.empty());
}

TEST(CrdtStoreTest, DeltaStaysExactAcrossLogCompaction) {
  CrdtStore store;
  for (uint32_t e = 512; e < 532; ++e) Apply(store, Put(e, 1, MakeTransform(0)));
  CrdtStore at_mark = store;
  const uint64_t mark = store.sequence();
  // Thousands of updates to few keys force the change log to compact several times.
  for (uint32_t ts = 2; ts < 400; ++ts) {
    for (uint32_t e = 512; e < 522; ++e) Apply(store, Put(e, ts, MakeTransform(float(ts))));
  }
  std::vector<uint8_t> delta;
  EXPECT_EQ(store.ExportChangesSince(mark, delta), 10u);  // coalesced to the latest per key
  ASSERT_TRUE(at_mark.MergeStream(delta).has_value());
  EXPECT_EQ(at_mark.StateHashHex(), store.StateHashHex());
}

TEST(CrdtStoreTest, StateHashDependsOnEveryPartOfTheState) {
  std::vector<std::vector<OwnedMessage>> variants = {
      {Put(512, 1, MakeTransform(1))},
      {Put(512, 2, MakeTransform(1))},
      {Put(512, 1, MakeTransform(2))},
      {Put(513, 1, MakeTransform(1))},
      {Delete(512, 1)},
      {PutOpaque(512, 2000, 1, {1})},
      {PutOpaque(512, 2000, 1, {1, 0})},
      {Append(512, 2000, 1, {1})},
      {DeleteEntity(600)},
      {DeleteEntity(MakeEntityId(600, 1))},
      {},
  };
  std::set<std::string> hashes;
  for (const auto& messages : variants) {
    CrdtStore store;
    for (const auto& m : messages) Apply(store, m);
    hashes.insert(store.StateHashHex());
  }
  EXPECT_EQ(hashes.size(), variants.size());
}

// ---- The reference conflict case, with @dcl/ecs's own final state ----

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using json::AsU32;
using json::Member;

EntityId JsonEntity(const json::Json& v) {
  if (auto id = AsU32(v)) return *id;
  return MakeEntityId(*AsU32(*Member(v, "number")), *AsU32(*Member(v, "version")));
}

TEST(CrdtStoreTest, ReferenceConflictCaseMatchesDclEcs) {
  auto ops = json::ReadJson(ReadFile(SCENECRDT_TEST_DATA_DIR "/conflicts.ops.json"));
  auto expected = json::ReadJson(ReadFile(SCENECRDT_TEST_DATA_DIR "/conflicts.expected.json"));
  ASSERT_TRUE(ops.has_value());
  ASSERT_TRUE(expected.has_value());
  CrdtStore store;
  for (const json::Json& op : *Member(*ops, "ops")) {
    const std::string& kind = Member(op, "op")->get<std::string>();
    const EntityId e = JsonEntity(*Member(op, "entity"));
    if (kind == "delete_entity") {
      Apply(store, DeleteEntity(e));
      continue;
    }
    const uint32_t ts = *AsU32(*Member(op, "timestamp"));
    if (kind == "delete") {
      Apply(store, Delete(e, ts));
      continue;
    }
    ASSERT_EQ(kind, "put");
    Transform t;
    auto floats = [&](const char* key, float* out, std::size_t n) {
      if (const json::Json* v = Member(op, key)) {
        for (std::size_t i = 0; i < n; ++i) out[i] = *json::AsFloat((*v)[i]);
      }
    };
    float p[3] = {0, 0, 0}, r[4] = {0, 0, 0, 1}, s[3] = {1, 1, 1};
    floats("position", p, 3);
    floats("rotation", r, 4);
    floats("scale", s, 3);
    t.position = {p[0], p[1], p[2]};
    t.rotation = {r[0], r[1], r[2], r[3]};
    t.scale = {s[0], s[1], s[2]};
    if (const json::Json* parent = Member(op, "parent")) t.parent = JsonEntity(*parent);
    Apply(store, Put(e, ts, t));
  }
  std::map<EntityId, std::pair<uint32_t, std::string>> want;
  for (const auto& t : *Member(*expected, "transforms")) {
    want[*AsU32(*Member(t, "entity"))] = {*AsU32(*Member(t, "timestamp")),
                                          Member(t, "dataHex")->get<std::string>()};
  }
  std::map<EntityId, std::pair<uint32_t, std::string>> got;
  for (const RegisterView& r : store.SortedRegisters()) {
    if (r.transform) {
      got[r.entity] = {r.timestamp, protocol::ToHex(protocol::StoreTransform(*r.transform))};
    }
  }
  EXPECT_EQ(got, want);
  for (const auto& e : *Member(*expected, "entities")) {
    EXPECT_STREQ(EntityStateName(store.GetEntityState(*AsU32(*Member(e, "entity")))),
                 Member(e, "state")->get<std::string>().c_str())
        << "entity " << Member(e, "entity")->dump();
  }
}

}  // namespace
}  // namespace scenecrdt::runtime
