// SPDX-License-Identifier: Apache-2.0
// rapidcheck properties of CrdtStore over random message multisets (shared entities,
// timestamp ties, deletes, DELETE_ENTITY, versions, reserved numbers, append sets):
// the state equals a closed-form reference, any permutation with duplicates gives the same
// state hash, state merge is commutative, associative and idempotent, and snapshot / delta
// exports reproduce the state.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "scenecrdt/runtime/crdt_store.h"
#include "tests/runtime/crdt_reference.h"

namespace scenecrdt::runtime {
namespace {

using protocol::MessageType;
using testing::OwnedMessage;

constexpr uint32_t kOpaqueComponent = 1085432040;
constexpr uint32_t kAppendComponent = 1209;

// A few distinct Transforms so that equal timestamps meet different bytes.
std::vector<uint8_t> TransformPayload(int which, uint32_t parent) {
  protocol::Transform t;
  t.position = {static_cast<float>(which % 3), which == 4 ? -0.0f : 0.0f, 1.0f};
  t.scale = {1.0f, static_cast<float>(1 + which % 2), 1.0f};
  t.parent = parent;
  const auto bytes = protocol::StoreTransform(t);
  return {bytes.begin(), bytes.end()};
}

rc::Gen<OwnedMessage> GenMessage() {
  return rc::gen::exec([] {
    OwnedMessage m;
    // Shared entities: four scene numbers and one reserved, versions 0..2.
    const uint32_t number = *rc::gen::element(512u, 513u, 514u, 515u, 7u);
    const uint32_t version = *rc::gen::weightedElement<uint32_t>({{6, 0}, {2, 1}, {1, 2}});
    m.entity = protocol::MakeEntityId(number, version);
    m.timestamp = *rc::gen::inRange<uint32_t>(0, 4);
    const int kind = *rc::gen::weightedElement<int>(
        {{8, 0}, {3, 1}, {1, 2}, {2, 3}, {2, 4}, {1, 5}, {1, 6}, {1, 7}});
    switch (kind) {
      case 0:  // Transform PUT (parent among the pool, cycles included)
      case 5:  // ... as PUT_COMPONENT_NETWORK
        m.type = kind == 0 ? MessageType::kPutComponent : MessageType::kPutComponentNetwork;
        m.component = protocol::kTransformComponentId;
        m.data = TransformPayload(*rc::gen::inRange(0, 5), *rc::gen::element(0u, 512u, 513u, 514u));
        break;
      case 1:
      case 6:
        m.type = kind == 1 ? MessageType::kDeleteComponent : MessageType::kDeleteComponentNetwork;
        m.component = *rc::gen::element(protocol::kTransformComponentId, kOpaqueComponent);
        break;
      case 2:
        m.type = *rc::gen::element(MessageType::kDeleteEntity, MessageType::kDeleteEntityNetwork);
        break;
      case 3:
        m.type = MessageType::kPutComponent;
        m.component = kOpaqueComponent;
        m.data = *rc::gen::container<std::vector<uint8_t>>(
            *rc::gen::inRange<std::size_t>(0, 3), rc::gen::element<uint8_t>(0, 1, 0x80, 0xff));
        break;
      case 4:
        m.type = MessageType::kAppendValue;
        m.component = kAppendComponent;
        m.data = *rc::gen::container<std::vector<uint8_t>>(*rc::gen::inRange<std::size_t>(0, 2),
                                                           rc::gen::element<uint8_t>(1, 2));
        break;
      default:  // a wrong-size Transform: refused by the store, ignored by the reference
        m.type = MessageType::kPutComponent;
        m.component = protocol::kTransformComponentId;
        m.data = std::vector<uint8_t>(*rc::gen::element<std::size_t>(0, 40, 48), 0);
        break;
    }
    return m;
  });
}

rc::Gen<std::vector<OwnedMessage>> GenMessages() {
  return rc::gen::container<std::vector<OwnedMessage>>(GenMessage());
}

CrdtStore ApplyAll(const std::vector<OwnedMessage>& messages, StoreLimits limits = {}) {
  CrdtStore store(limits);
  for (const OwnedMessage& m : messages) (void)store.Merge(m.View());
  return store;
}

// State-based merge: import `from`'s snapshot into `into`.
CrdtStore MergeStates(CrdtStore into, const CrdtStore& from) {
  std::vector<uint8_t> snapshot;
  from.ExportSnapshot(snapshot);
  RC_ASSERT(into.MergeStream(snapshot).has_value());
  return into;
}

RC_GTEST_PROP(CrdtStorePropertyTest, StateEqualsClosedFormReference, ()) {
  const auto messages = *GenMessages();
  const std::size_t max_append = *rc::gen::element<std::size_t>(1, 2, 100);
  StoreLimits limits;
  limits.max_append_values = static_cast<uint32_t>(max_append);
  RC_ASSERT(testing::DumpStore(ApplyAll(messages, limits)) ==
            testing::ReferenceDump(messages, max_append));
}

RC_GTEST_PROP(CrdtStorePropertyTest, AnyPermutationWithDuplicatesGivesTheSameHash, ()) {
  const auto messages = *GenMessages();
  std::vector<OwnedMessage> schedule = messages;
  const auto duplicates = *rc::gen::container<std::vector<std::size_t>>(
      rc::gen::inRange<std::size_t>(0, std::max<std::size_t>(messages.size(), 1)));
  for (std::size_t i : duplicates) {
    if (i < messages.size()) schedule.push_back(messages[i]);
  }
  for (std::size_t i = schedule.size(); i > 1; --i) {
    std::swap(schedule[i - 1], schedule[*rc::gen::inRange<std::size_t>(0, i)]);
  }
  const CrdtStore a = ApplyAll(messages);
  const CrdtStore b = ApplyAll(schedule);
  RC_ASSERT(a.StateHashHex() == b.StateHashHex());
  RC_ASSERT(testing::DumpStore(a) == testing::DumpStore(b));
}

RC_GTEST_PROP(CrdtStorePropertyTest, StateMergeIsCommutativeAssociativeAndIdempotent, ()) {
  const CrdtStore s1 = ApplyAll(*GenMessages());
  const CrdtStore s2 = ApplyAll(*GenMessages());
  const CrdtStore s3 = ApplyAll(*GenMessages());
  RC_ASSERT(MergeStates(s1, s2).StateHashHex() == MergeStates(s2, s1).StateHashHex());
  RC_ASSERT(MergeStates(MergeStates(s1, s2), s3).StateHashHex() ==
            MergeStates(s1, MergeStates(s2, s3)).StateHashHex());
  RC_ASSERT(MergeStates(s1, s1).StateHashHex() == s1.StateHashHex());
}

RC_GTEST_PROP(CrdtStorePropertyTest, SnapshotAndDeltaReproduceTheFinalHash, ()) {
  const auto messages = *GenMessages();
  const std::size_t cut = *rc::gen::inRange<std::size_t>(0, messages.size() + 1);
  CrdtStore store;
  for (std::size_t i = 0; i < cut; ++i) (void)store.Merge(messages[i].View());
  CrdtStore at_cut = store;
  const uint64_t mark = store.sequence();
  for (std::size_t i = cut; i < messages.size(); ++i) (void)store.Merge(messages[i].View());

  std::vector<uint8_t> snapshot;
  store.ExportSnapshot(snapshot);
  CrdtStore imported;
  RC_ASSERT(imported.MergeStream(snapshot).has_value());
  RC_ASSERT(imported.StateHashHex() == store.StateHashHex());

  std::vector<uint8_t> delta;
  store.ExportChangesSince(mark, delta);
  RC_ASSERT(at_cut.MergeStream(delta).has_value());
  RC_ASSERT(at_cut.StateHashHex() == store.StateHashHex());
}

}  // namespace
}  // namespace scenecrdt::runtime
