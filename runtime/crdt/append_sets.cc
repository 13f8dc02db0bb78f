// SPDX-License-Identifier: Apache-2.0
// Owns the bounded insertion into an APPEND_VALUE set and the bookkeeping of AppendSets.
#include "scenecrdt/runtime/crdt/append_sets.h"

#include <algorithm>

#include "scenecrdt/protocol/check.h"

namespace scenecrdt::runtime::internal {

MergeOutcome InsertBounded(std::vector<AppendElement>& elements, AppendElement element,
                           uint32_t max_values) {
  auto it = std::lower_bound(elements.begin(), elements.end(), element);
  if (it != elements.end() && *it == element) return MergeOutcome::kNoChange;
  if (max_values == 0 || (elements.size() >= max_values && it == elements.begin())) {
    // Smaller than every kept element of a full set: the bounded set keeps the greatest.
    return MergeOutcome::kOutdatedData;
  }
  elements.insert(it, std::move(element));
  if (elements.size() > max_values) elements.erase(elements.begin());
  return MergeOutcome::kUpdatedData;
}

AppendSet& AppendSets::Add(ComponentId component, EntityId entity) {
  index_.Insert(ComponentKey(component, entity), static_cast<uint32_t>(sets_.size()));
  sets_.push_back(AppendSet{component, entity, 0, {}});
  return sets_.back();
}

void AppendSets::Erase(ComponentId component, EntityId entity) {
  const uint64_t key = ComponentKey(component, entity);
  const uint32_t* found = index_.Find(key);
  SCENECRDT_CHECK(found != nullptr, "AppendSets::Erase of a set that does not exist");
  const uint32_t at = *found;
  index_.Erase(key);
  const uint32_t last = static_cast<uint32_t>(sets_.size() - 1);
  if (at != last) {
    sets_[at] = std::move(sets_[last]);
    index_.Insert(ComponentKey(sets_[at].component, sets_[at].entity), at);
  }
  sets_.pop_back();
}

}  // namespace scenecrdt::runtime::internal
