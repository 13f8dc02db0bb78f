// SPDX-License-Identifier: Apache-2.0
// Owns the bookkeeping of EntityComponentIndex (dense entries, swap-remove).
#include "scenecrdt/runtime/crdt/entity_component_index.h"

#include <utility>

namespace scenecrdt::runtime::internal {

EntityComponentIndex::Components& EntityComponentIndex::For(protocol::EntityId entity) {
  if (const uint32_t* index = slot_.Find(entity)) return entries_[*index];
  slot_.Insert(entity, static_cast<uint32_t>(entries_.size()));
  entries_.push_back(Components{entity, {}, {}});
  return entries_.back();
}

std::optional<EntityComponentIndex::Components> EntityComponentIndex::Take(
    protocol::EntityId entity) {
  const uint32_t* found = slot_.Find(entity);
  if (!found) return std::nullopt;
  const uint32_t index = *found;
  Components taken = std::move(entries_[index]);
  slot_.Erase(entity);
  const uint32_t last = static_cast<uint32_t>(entries_.size() - 1);
  if (index != last) {
    entries_[index] = std::move(entries_[last]);
    slot_.Insert(entries_[index].entity, index);
  }
  entries_.pop_back();
  return taken;
}

}  // namespace scenecrdt::runtime::internal
