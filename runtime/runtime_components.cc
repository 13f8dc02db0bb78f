// SPDX-License-Identifier: Apache-2.0
// Owns the Runtime's component reads and its per-Update component lists (docs/COMPONENTS.md):
// the store's component feed (every state change, with whether the key had a value before it)
// becomes, once per Update, the changed / added / removed (entity, component) pairs.
#include <algorithm>

#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::runtime {

ComponentView Runtime::FindComponent(EntityId e, ComponentId c) const {
  ComponentView view;
  if (c == protocol::kTransformComponentId) {
    if (const protocol::Transform* t = store_.FindTransform(e)) {
      view.kind = ComponentKind::kValue;
      view.is_transform = true;
      view.transform_bytes = protocol::StoreTransform(*t);
      return view;
    }
  } else if (const std::optional<RegisterView> r = store_.FindRegister(c, e);
             r.has_value() && r->has_data) {
    view.kind = ComponentKind::kValue;
    view.data = r->data;
    return view;
  }
  const std::span<const AppendElement> values = store_.FindAppendSet(c, e);
  if (!values.empty()) {
    view.kind = ComponentKind::kGrowOnly;
    view.values = values;
  }
  return view;
}

bool Runtime::CopyComponent(EntityId e, ComponentId c, std::vector<uint8_t>& out) const {
  const ComponentView view = FindComponent(e, c);
  const std::span<const uint8_t> bytes = view.bytes();
  out.assign(bytes.begin(), bytes.end());
  return view.kind == ComponentKind::kValue;
}

void Runtime::UpdateComponentLists() {
  changed_components_.clear();
  added_components_.clear();
  removed_components_.clear();
  // Grouped by key, each group in feed order: its first entry says what the key held at the
  // previous Update (every change since then is in the feed), the store what it holds now.
  component_feed_.assign(store_.component_changes().begin(), store_.component_changes().end());
  store_.ClearComponentChanges();
  std::stable_sort(component_feed_.begin(), component_feed_.end(),
                   [](const ComponentChange& a, const ComponentChange& b) {
                     return a.entity != b.entity ? a.entity < b.entity : a.component < b.component;
                   });
  for (std::size_t i = 0; i < component_feed_.size();) {
    const ComponentChange& first = component_feed_[i];
    const ComponentRef key{first.entity, first.component};
    while (i < component_feed_.size() && component_feed_[i].entity == key.entity &&
           component_feed_[i].component == key.component) {
      ++i;
    }
    const bool has_value = store_.HasComponentValue(key.component, key.entity);
    if (has_value) {
      changed_components_.push_back(key);
      if (!first.had_value) added_components_.push_back(key);
    } else if (first.had_value) {
      removed_components_.push_back(key);
    }
  }
  component_feed_.clear();
}

}  // namespace scenecrdt::runtime
