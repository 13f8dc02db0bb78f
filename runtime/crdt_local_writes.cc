// SPDX-License-Identifier: Apache-2.0
// Owns CrdtStore's local writes: the per-key Lamport stamp, no echo of unchanged data, and the
// merged message appended for the peers (docs/CRDT.md "Local writes").
#include <algorithm>

#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime {

namespace {

// std::equal over two ranges: the libc++ 13 of the WebAssembly build (docs/WEB.md) has no
// std::ranges::equal.
template <class A, class B>
bool SameBytes(const A& a, const B& b) {
  return std::equal(std::begin(a), std::end(a), std::begin(b), std::end(b));
}

}  // namespace

using protocol::CrdtMessage;
using protocol::MessageType;
using protocol::Transform;

uint32_t CrdtStore::StoredTimestamp(ComponentId component, EntityId entity, bool* exists) const {
  auto r = FindRegister(component, entity);
  *exists = r.has_value();
  return r ? r->timestamp : 0;
}

Result<MergeOutcome> CrdtStore::WriteLocal(const CrdtMessage& m, std::vector<uint8_t>& out) {
  const MergeResult result = Merge(m);
  if (result.outcome == MergeOutcome::kRefused) {
    return MakeError(result.reason, "the local write was refused by the store limits");
  }
  if (result.outcome == MergeOutcome::kEntityWasDeleted) {
    return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted");
  }
  if (ChangedState(result.outcome)) protocol::AppendMessage(m, out);
  return result.outcome;
}

Result<MergeOutcome> CrdtStore::WriteComponent(EntityId entity, ComponentId component,
                                               std::span<const uint8_t> data,
                                               std::vector<uint8_t>& out) {
  if (GetEntityState(entity) == EntityState::kRemoved) {
    return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted");
  }
  bool exists = false;
  const uint32_t stored = StoredTimestamp(component, entity, &exists);
  if (exists) {
    // No echo for unchanged data (@dcl/ecs compares with the last sent bytes).
    if (component == protocol::kTransformComponentId) {
      const Transform* cur = FindTransform(entity);
      if (cur && data.size() == Transform::kSize &&
          SameBytes(protocol::StoreTransform(*cur), data)) {
        return MergeOutcome::kNoChange;
      }
    } else if (auto r = FindRegister(component, entity);
               r && r->has_data && SameBytes(r->data, data)) {
      return MergeOutcome::kNoChange;
    }
    if (stored == 0xFFFFFFFFu) {
      return MakeError(ErrorCode::kInvalidArgument, "the key's Lamport timestamp is exhausted");
    }
  }
  const CrdtMessage m{MessageType::kPutComponent, entity, component,
                      exists ? stored + 1 : 1,    0,      data};
  return WriteLocal(m, out);
}

Result<MergeOutcome> CrdtStore::WriteTransform(EntityId entity, const Transform& t,
                                               std::vector<uint8_t>& out) {
  const protocol::TransformBytes bytes = protocol::StoreTransform(t);
  return WriteComponent(entity, protocol::kTransformComponentId, bytes, out);
}

Result<MergeOutcome> CrdtStore::WriteDeleteComponent(EntityId entity, ComponentId component,
                                                     std::vector<uint8_t>& out) {
  auto r = FindRegister(component, entity);
  if (!r || !r->has_data) return MergeOutcome::kNoChange;
  if (r->timestamp == 0xFFFFFFFFu) {
    return MakeError(ErrorCode::kInvalidArgument, "the key's Lamport timestamp is exhausted");
  }
  const CrdtMessage m{MessageType::kDeleteComponent, entity, component, r->timestamp + 1, 0, {}};
  return WriteLocal(m, out);
}

Result<MergeOutcome> CrdtStore::WriteDeleteEntity(EntityId entity, std::vector<uint8_t>& out) {
  if (protocol::IsReservedEntity(entity)) {
    return MakeError(ErrorCode::kReservedEntity, "entities below 512 cannot be deleted");
  }
  const CrdtMessage m{MessageType::kDeleteEntity, entity, 0, 0, 0, {}};
  return WriteLocal(m, out);
}

Result<MergeOutcome> CrdtStore::WriteAppend(EntityId entity, ComponentId component,
                                            std::span<const uint8_t> data,
                                            std::vector<uint8_t>& out) {
  if (GetEntityState(entity) == EntityState::kRemoved) {
    return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted");
  }
  // Appends carry a timestamp too; use one above every element already in the set.
  std::span<const AppendElement> set = FindAppendSet(component, entity);
  if (!set.empty() && set.back().timestamp == 0xFFFFFFFFu) {
    return MakeError(ErrorCode::kInvalidArgument, "the set's Lamport timestamp is exhausted");
  }
  const uint32_t ts = set.empty() ? 1 : set.back().timestamp + 1;
  const CrdtMessage m{MessageType::kAppendValue, entity, component, ts, 0, data};
  return WriteLocal(m, out);
}

}  // namespace scenecrdt::runtime
