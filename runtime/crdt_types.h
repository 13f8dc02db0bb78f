// SPDX-License-Identifier: Apache-2.0
// Owns the value types of the CRDT side (docs/CRDT.md): what a merge did (MergeOutcome,
// MergeResult, MergeStats), an entity's state (EntityState), and the read-only forms of the
// state CrdtStore hands out (RegisterView, TransformRegister, AppendElement), and the entries of
// its component change feed (ComponentChange).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::runtime {

using protocol::ComponentId;
using protocol::EntityId;

// What a merge did. Values 1..7 are @dcl/ecs's ProcessMessageResultType.
enum class MergeOutcome : uint8_t {
  kUpdatedTimestamp = 1,   // newer timestamp (or first message for the key): state changed
  kOutdatedTimestamp = 2,  // older timestamp: state unchanged
  kNoChange = 3,           // equal timestamp and equal data (or DELETE over DELETE)
  kOutdatedData = 4,       // equal timestamp, current data wins the tie
  kUpdatedData = 5,        // equal timestamp, incoming data wins the tie: state changed
  kEntityWasDeleted = 6,   // dropped: the entity (number, <= version) is deleted
  kEntityDeleted = 7,      // DELETE_ENTITY applied: a new tombstone, components purged
  kRefused = 8,            // refused (MergeResult::reason says why): state unchanged
};
inline constexpr int kMergeOutcomeCount = 9;  // index = value
const char* MergeOutcomeName(MergeOutcome outcome);
// True when the merge changed the state (the message should be forwarded to other peers).
constexpr bool ChangedState(MergeOutcome o) {
  return o == MergeOutcome::kUpdatedTimestamp || o == MergeOutcome::kUpdatedData ||
         o == MergeOutcome::kEntityDeleted;
}

struct MergeResult {
  MergeOutcome outcome = MergeOutcome::kNoChange;
  ErrorCode reason = ErrorCode::kOk;  // set when outcome == kRefused
};

struct MergeStats {
  uint64_t messages = 0;
  uint64_t by_outcome[kMergeOutcomeCount] = {};
  uint64_t changed() const {
    return by_outcome[static_cast<int>(MergeOutcome::kUpdatedTimestamp)] +
           by_outcome[static_cast<int>(MergeOutcome::kUpdatedData)] +
           by_outcome[static_cast<int>(MergeOutcome::kEntityDeleted)];
  }
};

// @dcl/ecs EntityState, as getEntityState reports it.
enum class EntityState : uint8_t { kUnknown = 0, kUsedEntity = 1, kRemoved = 2, kReserved = 3 };
const char* EntityStateName(EntityState state);  // "Unknown", "UsedEntity", ...

// A read-only view of one register.
struct RegisterView {
  ComponentId component = 0;
  EntityId entity = 0;
  uint32_t timestamp = 0;
  bool has_data = false;                           // false: the remove-set (DELETE_COMPONENT won)
  uint64_t sequence = 0;                           // store sequence of the last change
  std::span<const uint8_t> data;                   // opaque components (empty for Transforms)
  const protocol::Transform* transform = nullptr;  // Transforms with data (decoded)
};

// One Transform register, decoded: exactly one cache line, so a merge touches one line.
struct alignas(64) TransformRegister {
  protocol::Transform value;  // identity while has_data == 0
  EntityId entity;
  uint32_t timestamp;
  uint32_t has_data;  // 0: the remove-set (DELETE_COMPONENT won)
  uint64_t sequence;  // store sequence of the last change
};
static_assert(sizeof(TransformRegister) == 64, "one cache line per Transform register");

// One entry of CrdtStore's component change feed (docs/COMPONENTS.md): (entity, component) had
// a state change, and whether it had a value (an LWW register with data, or an APPEND_VALUE
// set) just before that change.
struct ComponentChange {
  EntityId entity = 0;
  ComponentId component = 0;
  bool had_value = false;
};

// One element of an APPEND_VALUE set.
struct AppendElement {
  uint32_t timestamp = 0;
  std::vector<uint8_t> data;
  // Ordered by (timestamp, data bytes). Spelled out instead of a defaulted <=>: the libc++ 13
  // of the WebAssembly build (docs/WEB.md) has no <=> for std::vector.
  friend bool operator==(const AppendElement&, const AppendElement&) = default;
  friend bool operator<(const AppendElement& a, const AppendElement& b) {
    if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
    return std::lexicographical_compare(a.data.begin(), a.data.end(), b.data.begin(), b.data.end());
  }
};

}  // namespace scenecrdt::runtime
