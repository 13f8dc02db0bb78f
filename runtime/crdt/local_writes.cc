// SPDX-License-Identifier: Apache-2.0
// Owns the Lamport stamping of local writes: the per-key stamp, no echo of unchanged data
// (docs/CRDT.md "Local writes").
#include "scenecrdt/runtime/crdt/local_writes.h"

#include <algorithm>

#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime::internal {

namespace {

using protocol::CrdtMessage;
using protocol::MessageType;
using protocol::Transform;

constexpr uint32_t kLastTimestamp = 0xFFFFFFFFu;

// std::equal over two ranges: the libc++ 13 of the WebAssembly build (docs/WEB.md) has no
// std::ranges::equal.
template <class A, class B>
bool SameBytes(const A& a, const B& b) {
  return std::equal(std::begin(a), std::end(a), std::begin(b), std::end(b));
}

// True when `data` is what the register of (component, entity) already holds.
bool HoldsSameData(const CrdtStore& store, const RegisterView& r, EntityId entity,
                   ComponentId component, std::span<const uint8_t> data) {
  if (component == protocol::kTransformComponentId) {
    const Transform* cur = store.FindTransform(entity);
    return cur && data.size() == Transform::kSize &&
           SameBytes(protocol::StoreTransform(*cur), data);
  }
  return r.has_data && SameBytes(r.data, data);
}

}  // namespace

Result<Stamped> StampPut(const CrdtStore& store, EntityId entity, ComponentId component,
                         std::span<const uint8_t> data) {
  if (store.GetEntityState(entity) == EntityState::kRemoved) {
    return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted");
  }
  const std::optional<RegisterView> r = store.FindRegister(component, entity);
  if (r) {
    if (HoldsSameData(store, *r, entity, component, data)) return Stamped{};
    if (r->timestamp == kLastTimestamp) {
      return MakeError(ErrorCode::kInvalidArgument, "the key's Lamport timestamp is exhausted");
    }
  }
  return Stamped{CrdtMessage{MessageType::kPutComponent, entity, component,
                             r ? r->timestamp + 1 : 1, 0, data}};
}

Result<Stamped> StampDeleteComponent(const CrdtStore& store, EntityId entity,
                                     ComponentId component) {
  const std::optional<RegisterView> r = store.FindRegister(component, entity);
  if (!r || !r->has_data) return Stamped{};
  if (r->timestamp == kLastTimestamp) {
    return MakeError(ErrorCode::kInvalidArgument, "the key's Lamport timestamp is exhausted");
  }
  return Stamped{
      CrdtMessage{MessageType::kDeleteComponent, entity, component, r->timestamp + 1, 0, {}}};
}

Result<CrdtMessage> StampDeleteEntity(EntityId entity) {
  if (protocol::IsReservedEntity(entity)) {
    return MakeError(ErrorCode::kReservedEntity, "entities below 512 cannot be deleted");
  }
  return CrdtMessage{MessageType::kDeleteEntity, entity, 0, 0, 0, {}};
}

Result<CrdtMessage> StampAppend(const CrdtStore& store, EntityId entity, ComponentId component,
                                std::span<const uint8_t> data) {
  if (store.GetEntityState(entity) == EntityState::kRemoved) {
    return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted");
  }
  // Appends carry a timestamp too; use one above every element already in the set.
  const std::span<const AppendElement> set = store.FindAppendSet(component, entity);
  if (!set.empty() && set.back().timestamp == kLastTimestamp) {
    return MakeError(ErrorCode::kInvalidArgument, "the set's Lamport timestamp is exhausted");
  }
  const uint32_t ts = set.empty() ? 1 : set.back().timestamp + 1;
  return CrdtMessage{MessageType::kAppendValue, entity, component, ts, 0, data};
}

}  // namespace scenecrdt::runtime::internal
