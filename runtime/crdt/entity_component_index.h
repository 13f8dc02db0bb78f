// SPDX-License-Identifier: Apache-2.0
// Owns EntityComponentIndex: for each entity, the opaque components and APPEND_VALUE sets it
// holds, so that deleting the entity (or retiring its version) purges them without a scan.
// Transforms are not listed: TransformRegisters finds them by entity directly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/runtime/internal/flat_map.h"

namespace scenecrdt::runtime::internal {

class EntityComponentIndex {
 public:
  struct Components {
    protocol::EntityId entity;
    std::vector<protocol::ComponentId> registers;    // opaque registers
    std::vector<protocol::ComponentId> append_sets;  // append sets
  };

  // True when `entity` holds an opaque register or an append set.
  bool Contains(protocol::EntityId entity) const { return slot_.Find(entity) != nullptr; }
  void AddRegister(protocol::EntityId entity, protocol::ComponentId component) {
    For(entity).registers.push_back(component);
  }
  void AddAppendSet(protocol::EntityId entity, protocol::ComponentId component) {
    For(entity).append_sets.push_back(component);
  }
  // What `entity` holds, or nullptr (valid until the next change of the index).
  const Components* Find(protocol::EntityId entity) const {
    const uint32_t* index = slot_.Find(entity);
    return index ? &entries_[*index] : nullptr;
  }
  // Removes and returns what `entity` holds; nullopt when it holds nothing.
  std::optional<Components> Take(protocol::EntityId entity);

 private:
  Components& For(protocol::EntityId entity);

  std::vector<Components> entries_;
  FlatMap<uint32_t, uint32_t> slot_;  // entity -> index into entries_
};

}  // namespace scenecrdt::runtime::internal
