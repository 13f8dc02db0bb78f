// SPDX-License-Identifier: Apache-2.0
// Owns how an interest member's view is brought up to the index (docs/INTEREST.md "Server
// work and bounds"): the view's closure (ancestors, parked loops), and the incremental update
// that looks only at the entities the index's journal names in the member's cells, falling
// back to a recomputation from the grid when the centre, the interest or the effective tree
// changed, or when the journal no longer reaches back to the view's version.
#include <algorithm>

#include "scenecrdt/server/scene/interest/member_view.h"

namespace scenecrdt::server {

std::size_t MemberView::AddClosure(const InterestIndex& index,
                                   std::span<const protocol::EntityId> core, View& view,
                                   std::vector<protocol::EntityId>* added) {
  // Effective ancestors, and the members of a loop a held entity is parked in. A chain stops
  // at an entity already in the view: its own chain is (or will be) walked.
  const runtime::TransformSystem& ts = index.transforms();
  const std::size_t max_steps = index.size() + 1;
  std::size_t count = 0;
  const auto add = [&](protocol::EntityId e) {
    if (!view.Insert(e, false)) return false;
    ++count;
    if (added) added->push_back(e);
    return true;
  };
  const auto add_loop = [&](protocol::EntityId x) {
    std::size_t steps = 0;
    const protocol::Transform* t = ts.GetTransform(x);
    for (protocol::EntityId d = t ? t->parent : 0; d != x && d != 0 && steps < max_steps; ++steps) {
      if (!index.HasTransform(d)) break;
      add(d);
      d = ts.GetTransform(d)->parent;
    }
  };
  for (const protocol::EntityId e : core) {
    protocol::EntityId x = e;
    for (std::size_t steps = 0; steps < max_steps; ++steps) {
      if (ts.IsParked(x)) add_loop(x);
      const protocol::EntityId p = ts.EffectiveParent(x);
      if (p == 0 || !index.HasTransform(p)) break;  // root, or a placeholder (sent to all)
      if (!add(p)) break;
      x = p;
    }
  }
  return count;
}

void MemberView::Refresh(const InterestIndex& index, ViewChange& change) {
  if (Advance(index, change)) {
    ++incremental_updates_;
  } else {
    change.added.clear();
    change.removed.clear();
    View& next = next_;
    next.clear();
    next.reserve(view_.size());  // about the size it was: no rehash while it fills
    Recompute(index, next);
    if (!holds_all_) {
      view_.ForEach([&](protocol::EntityId e, bool) {
        if (!next.contains(e)) change.removed.push_back(e);
      });
      next.ForEach([&](protocol::EntityId e, bool) {
        if (!view_.contains(e)) change.added.push_back(e);
      });
    }
    view_.swap(next);
    Settle(index);
    ++full_updates_;
  }
  std::sort(change.added.begin(), change.added.end());
  std::sort(change.removed.begin(), change.removed.end());
}

bool MemberView::Advance(const InterestIndex& index, ViewChange& change) {
  // The core of a view is a function of the centre and of the positions (and, through the
  // hysteresis, of the core before); its closure a function of the core and of the effective
  // tree. With the centre, the interest and the tree as they were, only the entities the
  // journal names can change it, and only those in the cells around the centre: an entity in
  // the core was within the outer radius, so its cell before its first move is in the rect.
  if (!incremental_ || holds_all_ || spec_changed_ || !center_) return false;
  if (index.structure_version() > seen_version_) return false;
  const std::optional<glm::vec3> center = CenterNow(index);
  if (!center || *center != *center_) return false;
  const double outer = spec_.radius + spec_.hysteresis;
  const InterestIndex::CellRect rect = index.RectNear(*center, outer);
  std::vector<protocol::EntityId>& candidates = advance_.candidates;
  std::vector<protocol::EntityId>& enter_core = advance_.enter_core;
  std::vector<protocol::EntityId>& leave_core = advance_.leave_core;
  candidates.clear();
  enter_core.clear();
  leave_core.clear();
  if (!index.MovedNear(seen_version_, rect,
                       [&](protocol::EntityId e) { candidates.push_back(e); })) {
    return false;
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (const protocol::EntityId e : candidates) {
    const std::optional<glm::vec3> p = index.Position(e);
    const bool core = view_.Get(e) == View::kCore;
    const bool in = p && (WithinRadius(*center, *p, spec_.radius) ||
                          (spec_.hysteresis > 0 && core && WithinRadius(*center, *p, outer)));
    if (in == core) continue;
    if (in) {
      enter_core.push_back(e);
      continue;
    }
    // Leaving the core: without a parent or children nothing else in the view needs it (an
    // ancestor or a loop member has one or the other); else the closure is recomputed.
    const protocol::Transform* t = index.transforms().GetTransform(e);
    if ((t != nullptr && t->parent != protocol::kRootEntity) || index.ChildCount(e) != 0) {
      return false;
    }
    leave_core.push_back(e);
  }
  for (const protocol::EntityId e : leave_core) {
    view_.Erase(e);
    change.removed.push_back(e);
  }
  for (const protocol::EntityId e : enter_core) {
    if (view_.Insert(e, true)) {
      change.added.push_back(e);
    } else {
      view_.SetCore(e);  // an ancestor already held, now in the core
      --far_;
    }
  }
  far_ += AddClosure(index, enter_core, view_, &change.added);
  if (!enter_core.empty()) far_list_valid_ = false;  // an ancestor in the core, or new ones
  seen_version_ = index.version();
  return true;
}

}  // namespace scenecrdt::server
