// SPDX-License-Identifier: Apache-2.0
// Owns AppendSets: the APPEND_VALUE sets of a CrdtStore keyed by (component, entity), and the
// bounded grow-only set rule (docs/CRDT.md): a set keeps its greatest `max_values` elements by
// (timestamp, bytes), so it still merges order-independently. Dense (swap-remove) with a hash
// index.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/runtime/crdt/component_key.h"
#include "scenecrdt/runtime/crdt_types.h"
#include "scenecrdt/runtime/internal/flat_map.h"

namespace scenecrdt::runtime::internal {

struct AppendSet {
  ComponentId component;
  EntityId entity;
  uint64_t sequence;                    // store sequence of the last change
  std::vector<AppendElement> elements;  // ascending
};

// Inserts `element` into the ascending `elements` of a set bounded to `max_values`:
// kUpdatedData when inserted (the smallest element dropped when the set overflows), kNoChange
// when already there, kOutdatedData when smaller than every element of a full set.
MergeOutcome InsertBounded(std::vector<AppendElement>& elements, AppendElement element,
                           uint32_t max_values);

class AppendSets {
 public:
  // The set of (component, entity), or nullptr. Invalidated by Add and Erase.
  AppendSet* Find(ComponentId component, EntityId entity) {
    const uint32_t* index = index_.Find(ComponentKey(component, entity));
    return index ? &sets_[*index] : nullptr;
  }
  const AppendSet* Find(ComponentId component, EntityId entity) const {
    const uint32_t* index = index_.Find(ComponentKey(component, entity));
    return index ? &sets_[*index] : nullptr;
  }
  // Adds an empty set for (component, entity), which has none.
  AppendSet& Add(ComponentId component, EntityId entity);
  // Removes the set of (component, entity), which exists (the last one takes its place).
  void Erase(ComponentId component, EntityId entity);

  std::span<const AppendSet> all() const { return sets_; }
  std::size_t size() const { return sets_.size(); }

 private:
  std::vector<AppendSet> sets_;
  FlatMap<uint64_t, uint32_t> index_;  // ComponentKey -> index into sets_
};

}  // namespace scenecrdt::runtime::internal
