// SPDX-License-Identifier: Apache-2.0
// Tests the Runtime's component reads and per-Update component lists (docs/COMPONENTS.md):
// LWW payloads, grow-only sets, the Transform's wire bytes, the changed / added / removed
// pairs across puts, deletes, entity deletion and version retirement; on random streams, the
// lists against an oracle that diffs the store's state between Updates; and the golden stream
// of a real @dcl/ecs 7.28 Engine (tests/data/components/), bytes and lists as it says.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "scenecrdt/runtime/runtime.h"
#include "tests/runtime/ecs_components_golden.h"

namespace scenecrdt::runtime {
namespace {

using protocol::MakeEntityId;
using protocol::MessageType;
using Bytes = std::vector<uint8_t>;
using Refs = std::vector<ComponentRef>;

constexpr ComponentId kMesh = 1018;
constexpr ComponentId kMaterial = 1017;
constexpr ComponentId kPointerResults = 1063;

Bytes Msg(MessageType type, EntityId e, ComponentId c, uint32_t ts, Bytes data = {}) {
  Bytes out;
  protocol::AppendMessage({type, e, c, ts, 0, data}, out);
  return out;
}

void Apply(Runtime& rt, const Bytes& bytes) { ASSERT_TRUE(rt.ApplyCrdt(bytes).has_value()); }

Refs List(std::span<const ComponentRef> s) { return Refs(s.begin(), s.end()); }

Bytes ToBytes(std::span<const uint8_t> s) { return Bytes(s.begin(), s.end()); }

TEST(RuntimeComponentsTest, ReadsTheLwwPayloadAtOnce) {
  Runtime rt;
  EXPECT_EQ(rt.FindComponent(512, kMesh).kind, ComponentKind::kAbsent);
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMesh, 1, {1, 2, 3}));
  // Merged reads need no Update.
  ComponentView v = rt.FindComponent(512, kMesh);
  EXPECT_EQ(v.kind, ComponentKind::kValue);
  EXPECT_EQ(ToBytes(v.bytes()), (Bytes{1, 2, 3}));
  Bytes copy{9};
  EXPECT_TRUE(rt.CopyComponent(512, kMesh, copy));
  EXPECT_EQ(copy, (Bytes{1, 2, 3}));
  // An empty payload is a value, not an absence.
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMesh, 2, {}));
  v = rt.FindComponent(512, kMesh);
  EXPECT_EQ(v.kind, ComponentKind::kValue);
  EXPECT_TRUE(v.bytes().empty());
  // DELETE_COMPONENT wins: absent.
  Apply(rt, Msg(MessageType::kDeleteComponent, 512, kMesh, 3));
  EXPECT_EQ(rt.FindComponent(512, kMesh).kind, ComponentKind::kAbsent);
  EXPECT_FALSE(rt.CopyComponent(512, kMesh, copy));
  EXPECT_TRUE(copy.empty());
}

TEST(RuntimeComponentsTest, TheTransformReadsAsItsWireBytes) {
  Runtime rt;
  protocol::Transform t;
  t.position = {1.5f, -2.0f, 3.25f};
  t.rotation = {0.0f, 0.7071f, 0.0f, 0.7071f};
  t.parent = 600;
  Bytes put;
  protocol::AppendTransformPut(512, 4, t, put);
  Apply(rt, put);
  const ComponentView v = rt.FindComponent(512, protocol::kTransformComponentId);
  ASSERT_EQ(v.kind, ComponentKind::kValue);
  const protocol::TransformBytes wire = protocol::StoreTransform(t);
  EXPECT_EQ(ToBytes(v.bytes()), Bytes(wire.begin(), wire.end()));
  // The copy outlives the view's source.
  const ComponentView copy = v;
  Apply(rt, Msg(MessageType::kDeleteComponent, 512, protocol::kTransformComponentId, 5));
  EXPECT_EQ(ToBytes(copy.bytes()), Bytes(wire.begin(), wire.end()));
  EXPECT_EQ(rt.FindComponent(512, protocol::kTransformComponentId).kind, ComponentKind::kAbsent);
  // Transform changes are the entity lists, not the component lists.
  rt.Update();
  EXPECT_TRUE(rt.changed_components().empty());
}

TEST(RuntimeComponentsTest, GrowOnlySetsReadAsTheirValues) {
  Runtime rt;
  Apply(rt, Msg(MessageType::kAppendValue, 512, kPointerResults, 0, {7}));
  Apply(rt, Msg(MessageType::kAppendValue, 512, kPointerResults, 0, {5}));
  ComponentView v = rt.FindComponent(512, kPointerResults);
  ASSERT_EQ(v.kind, ComponentKind::kGrowOnly);
  ASSERT_EQ(v.values.size(), 2u);
  EXPECT_EQ(v.values[0].data, Bytes{5});  // ascending (timestamp, bytes)
  EXPECT_EQ(v.values[1].data, Bytes{7});
  Bytes copy;
  EXPECT_FALSE(rt.CopyComponent(512, kPointerResults, copy));
  // An LWW value of the same key wins the read.
  Apply(rt, Msg(MessageType::kPutComponent, 512, kPointerResults, 1, {42}));
  v = rt.FindComponent(512, kPointerResults);
  EXPECT_EQ(v.kind, ComponentKind::kValue);
  EXPECT_EQ(ToBytes(v.bytes()), Bytes{42});
}

TEST(RuntimeComponentsTest, ListsSayWhatEachUpdateChangedAddedRemoved) {
  Runtime rt;
  Apply(rt, Msg(MessageType::kPutComponent, 513, kMesh, 1, {1}));
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMaterial, 1, {2}));
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMesh, 1, {3}));
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMesh, 2, {4}));  // twice: listed once
  rt.Update();
  const Refs first{{512, kMaterial}, {512, kMesh}, {513, kMesh}};  // sorted by (entity, id)
  EXPECT_EQ(List(rt.changed_components()), first);
  EXPECT_EQ(List(rt.added_components()), first);
  EXPECT_TRUE(rt.removed_components().empty());

  // A new value: changed only. An outdated message: nothing. A delete: removed.
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMesh, 3, {5}));
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMaterial, 0, {9}));
  Apply(rt, Msg(MessageType::kDeleteComponent, 513, kMesh, 2));
  rt.Update();
  EXPECT_EQ(List(rt.changed_components()), (Refs{{512, kMesh}}));
  EXPECT_TRUE(rt.added_components().empty());
  EXPECT_EQ(List(rt.removed_components()), (Refs{{513, kMesh}}));

  // An Update with nothing merged empties the lists.
  rt.Update();
  EXPECT_TRUE(rt.changed_components().empty());
  EXPECT_TRUE(rt.removed_components().empty());

  // Put then deleted between two Updates: in no list. Deleted then put again: changed.
  Apply(rt, Msg(MessageType::kPutComponent, 514, kMesh, 1, {1}));
  Apply(rt, Msg(MessageType::kDeleteComponent, 514, kMesh, 2));
  Apply(rt, Msg(MessageType::kDeleteComponent, 512, kMaterial, 2));
  Apply(rt, Msg(MessageType::kPutComponent, 512, kMaterial, 3, {2}));
  rt.Update();
  EXPECT_EQ(List(rt.changed_components()), (Refs{{512, kMaterial}}));
  EXPECT_TRUE(rt.added_components().empty());
  EXPECT_TRUE(rt.removed_components().empty());

  // A removed key put again: added.
  Apply(rt, Msg(MessageType::kPutComponent, 513, kMesh, 3, {8}));
  rt.Update();
  EXPECT_EQ(List(rt.added_components()), (Refs{{513, kMesh}}));
}

TEST(RuntimeComponentsTest, EntityDeletionAndNewVersionsRemoveEveryComponent) {
  Runtime rt;
  Apply(rt, Msg(MessageType::kPutComponent, 600, kMesh, 1, {1}));
  Apply(rt, Msg(MessageType::kPutComponent, 600, kMaterial, 1, {2}));
  Apply(rt, Msg(MessageType::kAppendValue, 600, kPointerResults, 0, {3}));
  Apply(rt, Msg(MessageType::kPutComponent, 601, kMesh, 1, {4}));
  Apply(rt, Msg(MessageType::kDeleteComponent, 601, kMaterial, 1));  // the remove-set only
  rt.Update();
  EXPECT_EQ(rt.added_components().size(), 4u);
  Apply(rt, Msg(MessageType::kDeleteEntity, 600, 0, 0));
  // A message for version 1 of 601 retires version 0 and purges its components.
  const EntityId v1 = MakeEntityId(601, 1);
  Apply(rt, Msg(MessageType::kPutComponent, v1, kMesh, 1, {5}));
  rt.Update();
  EXPECT_EQ(List(rt.removed_components()),
            (Refs{{600, kMaterial}, {600, kMesh}, {600, kPointerResults}, {601, kMesh}}));
  EXPECT_EQ(List(rt.added_components()), (Refs{{v1, kMesh}}));
  EXPECT_EQ(List(rt.changed_components()), (Refs{{v1, kMesh}}));
  EXPECT_EQ(rt.FindComponent(600, kMesh).kind, ComponentKind::kAbsent);
  // Later messages for the deleted entity change nothing.
  Apply(rt, Msg(MessageType::kPutComponent, 600, kMesh, 9, {1}));
  rt.Update();
  EXPECT_TRUE(rt.changed_components().empty());
}

TEST(RuntimeComponentsTest, LocalWritesAreListedToo) {
  Runtime rt;
  Bytes out;
  const Bytes payload{1, 2};
  ASSERT_TRUE(rt.WriteComponent(700, kMesh, payload, out).has_value());
  rt.Update();
  EXPECT_EQ(List(rt.added_components()), (Refs{{700, kMesh}}));
  ASSERT_TRUE(rt.WriteDeleteComponent(700, kMesh, out).has_value());
  rt.Update();
  EXPECT_EQ(List(rt.removed_components()), (Refs{{700, kMesh}}));
}

// The store's state of every key except the Transform, for the oracle.
struct KeyState {
  bool present = false;
  uint64_t register_sequence = 0;
  std::vector<AppendElement> values;
};
std::map<std::pair<EntityId, ComponentId>, KeyState> Snapshot(const Runtime& rt) {
  std::map<std::pair<EntityId, ComponentId>, KeyState> out;
  for (const RegisterView& r : rt.store().SortedRegisters()) {
    if (r.component == protocol::kTransformComponentId) continue;
    KeyState& k = out[{r.entity, r.component}];
    k.register_sequence = r.sequence;
    k.present = k.present || r.has_data;
  }
  for (const CrdtStore::AppendSetView& s : rt.store().SortedAppendSets()) {
    if (s.component == protocol::kTransformComponentId) continue;
    KeyState& k = out[{s.entity, s.component}];
    k.values.assign(s.elements.begin(), s.elements.end());
    k.present = true;
  }
  return out;
}

// Random streams over a few entities, components and versions, merged in batches with an
// Update after each: the lists equal the difference of the store's state between Updates
// (a deleted key never comes back, so "its register or set changed" is exact).
TEST(RuntimeComponentsTest, ListsMatchTheStateDifferenceOnRandomStreams) {
  std::size_t listed = 0, removed = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 random(seed);
    auto pick = [&](uint32_t n) { return static_cast<uint32_t>(random() % n); };
    Runtime rt;
    auto before = Snapshot(rt);
    for (int batch = 0; batch < 12; ++batch) {
      Bytes stream;
      const uint32_t messages = 1 + pick(12);
      for (uint32_t i = 0; i < messages; ++i) {
        const EntityId e = MakeEntityId(512 + pick(4), pick(5) == 0 ? 1 : 0);
        const ComponentId c = 1017 + pick(3);
        const uint32_t ts = pick(6);
        const Bytes data{static_cast<uint8_t>(pick(3))};
        switch (pick(8)) {
          case 0:
            protocol::AppendMessage({MessageType::kDeleteComponent, e, c, ts, 0, {}}, stream);
            break;
          case 1:
            protocol::AppendMessage({MessageType::kAppendValue, e, c, ts, 0, data}, stream);
            break;
          case 2:
            if (pick(3) == 0) {
              protocol::AppendMessage({MessageType::kDeleteEntity, e, 0, 0, 0, {}}, stream);
              break;
            }
            [[fallthrough]];
          default:
            protocol::AppendMessage({MessageType::kPutComponent, e, c, ts, 0, data}, stream);
        }
      }
      Apply(rt, stream);
      rt.Update();
      const auto after = Snapshot(rt);
      Refs changed, added, gone;
      std::map<std::pair<EntityId, ComponentId>, bool> keys;
      for (const auto& [k, s] : before) keys[k] = true;
      for (const auto& [k, s] : after) keys[k] = true;
      for (const auto& [k, unused] : keys) {
        const auto b = before.find(k);
        const auto a = after.find(k);
        const bool was = b != before.end() && b->second.present;
        const bool is = a != after.end() && a->second.present;
        const bool same = b != before.end() && a != after.end() &&
                          b->second.register_sequence == a->second.register_sequence &&
                          b->second.values == a->second.values;
        if (is && (!was || !same)) changed.push_back({k.first, k.second});
        if (is && !was) added.push_back({k.first, k.second});
        if (was && !is) gone.push_back({k.first, k.second});
      }
      ASSERT_EQ(List(rt.changed_components()), changed) << "seed " << seed << " batch " << batch;
      ASSERT_EQ(List(rt.added_components()), added) << "seed " << seed << " batch " << batch;
      ASSERT_EQ(List(rt.removed_components()), gone) << "seed " << seed << " batch " << batch;
      for (const ComponentRef& r : rt.changed_components()) {
        EXPECT_NE(rt.FindComponent(r.entity, r.component).kind, ComponentKind::kAbsent);
      }
      listed += changed.size();
      removed += gone.size();
      before = after;
    }
  }
  EXPECT_GT(listed, 500u);  // the streams exercise the lists
  EXPECT_GT(removed, 50u);
}

Refs GoldenRefs(const std::vector<golden::Key>& keys) {
  Refs out;
  for (const auto& [e, c] : keys) out.push_back({e, c});
  return out;
}

// The frames a real @dcl/ecs Engine sent (tests/interop/gen_components.js): after each, the
// payloads are the bytes the Engine's schemas serialize, and the lists are the Engine's diff.
TEST(RuntimeComponentsTest, GoldenDclEcsStreamGivesTheEngineBytesAndLists) {
  const golden::EcsGolden g = golden::LoadEcsGolden();
  ASSERT_EQ(g.frames.size(), 4u);
  ASSERT_EQ(g.components.at("core::MeshRenderer"), kMesh);
  Runtime rt;
  for (std::size_t f = 0; f < g.frames.size(); ++f) {
    const golden::EcsFrame& frame = g.frames[f];
    ASSERT_LE(frame.offset + frame.length, g.stream.size());
    Apply(rt, Bytes(g.stream.begin() + static_cast<long>(frame.offset),
                    g.stream.begin() + static_cast<long>(frame.offset + frame.length)));
    rt.Update();
    for (const auto& [key, bytes] : frame.values) {
      const ComponentView v = rt.FindComponent(key.first, key.second);
      ASSERT_EQ(v.kind, ComponentKind::kValue)
          << "frame " << f << " " << key.first << ":" << key.second;
      EXPECT_EQ(ToBytes(v.bytes()), bytes)
          << "frame " << f << " " << key.first << ":" << key.second;
    }
    for (const auto& [key, values] : frame.grow_only) {
      const ComponentView v = rt.FindComponent(key.first, key.second);
      ASSERT_EQ(v.kind, ComponentKind::kGrowOnly) << "frame " << f;
      std::vector<Bytes> got;
      for (const AppendElement& e : v.values) got.push_back(e.data);
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, values) << "frame " << f;
    }
    EXPECT_EQ(List(rt.changed_components()), GoldenRefs(frame.changed)) << "frame " << f;
    EXPECT_EQ(List(rt.added_components()), GoldenRefs(frame.added)) << "frame " << f;
    EXPECT_EQ(List(rt.removed_components()), GoldenRefs(frame.removed)) << "frame " << f;
    // Every present key is in the golden dump: nothing extra.
    std::size_t present = 0;
    for (const RegisterView& r : rt.store().SortedRegisters()) {
      present += r.component != protocol::kTransformComponentId && r.has_data;
    }
    EXPECT_EQ(present, frame.values.size()) << "frame " << f;
  }
}

}  // namespace
}  // namespace scenecrdt::runtime
