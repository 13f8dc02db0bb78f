// SPDX-License-Identifier: Apache-2.0
// Owns the incremental effective-parent algorithm. Invariant after every ApplyEdge: a node is
// parked iff it lies on a cycle of the applied declared-parent graph, its effective parent is
// root when parked and its declared parent otherwise. Changing the out-edge of x can only
// break cycles through x (old edge) and create cycles through x (new edge), so one edge change
// is: unpark x's old cycle, re-point the edge, walk up the effective tree from the new parent;
// meeting x means the new edge closed a loop, whose members are then parked. The effective
// tree is acyclic, so that walk ends in at most depth steps. The result does not depend on the
// order in which edges are applied (it is the cycle set of the final graph).
#include "scenecrdt/runtime/scene_graph.h"

#include <cstring>

#include "scenecrdt/protocol/check.h"

namespace scenecrdt::runtime {

uint32_t SceneGraph::Find(protocol::EntityId entity) const {
  const uint32_t* s = slot_of_entity_.Find(entity);
  return s == nullptr ? kNoSlot : *s;
}

uint32_t SceneGraph::FindOrCreate(protocol::EntityId entity) {
  SCENECRDT_DCHECK(entity != protocol::kRootEntity, "the root has no slot");
  if (const uint32_t* s = slot_of_entity_.Find(entity)) return *s;
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    entity_[slot] = entity;
    transform_[slot] = protocol::kIdentityTransform;
    flags_[slot] = 0;
    applied_[slot] = kNoSlot;
    effective_[slot] = kNoSlot;
    children_[slot] = 0;
  } else {
    slot = static_cast<uint32_t>(entity_.size());
    entity_.push_back(entity);
    transform_.push_back(protocol::kIdentityTransform);
    flags_.push_back(0);
    applied_.push_back(kNoSlot);
    effective_.push_back(kNoSlot);
    children_.push_back(0);
  }
  slot_of_entity_.Insert(entity, slot);
  ListRelease(slot);
  return slot;
}

bool SceneGraph::SetTransform(uint32_t slot, const protocol::Transform& t) {
  protocol::Transform& cur = transform_[slot];
  const bool had = has_transform(slot);
  const bool local_changed = !had ||
                             std::memcmp(&cur.position, &t.position, sizeof(t.position)) != 0 ||
                             std::memcmp(&cur.rotation, &t.rotation, sizeof(t.rotation)) != 0 ||
                             std::memcmp(&cur.scale, &t.scale, sizeof(t.scale)) != 0;
  if (!had || cur.parent != t.parent) MarkPending(slot);
  cur = t;
  flags_[slot] |= kHasTransform;
  return local_changed;
}

bool SceneGraph::RemoveTransform(uint32_t slot) {
  if (!has_transform(slot)) return false;
  transform_[slot] = protocol::kIdentityTransform;
  flags_[slot] = static_cast<uint8_t>(flags_[slot] & ~kHasTransform);
  MarkPending(slot);
  ListRelease(slot);
  return true;
}

void SceneGraph::MarkPending(uint32_t s) {
  if ((flags_[s] & kPending) != 0) return;
  flags_[s] |= kPending;
  pending_.push_back(s);
}

void SceneGraph::ListStructure(uint32_t s) {
  if ((flags_[s] & kStructureListed) != 0) return;
  flags_[s] |= kStructureListed;
  structure_changes_.push_back(s);
}

void SceneGraph::ListRelease(uint32_t s) {
  if ((flags_[s] & kReleaseListed) != 0) return;
  flags_[s] |= kReleaseListed;
  release_candidates_.push_back(s);
}

void SceneGraph::ClearStructureChanges() {
  for (uint32_t s : structure_changes_) {
    flags_[s] = static_cast<uint8_t>(flags_[s] & ~kStructureListed);
  }
  structure_changes_.clear();
}

void SceneGraph::SetEffective(uint32_t s, uint32_t parent) {
  effective_[s] = parent;
  ListStructure(s);
}

void SceneGraph::UpdateNodeStatus(uint32_t s) {
  const bool node = (flags_[s] & kAppliedTransform) != 0 || children_[s] != 0;
  if (node == is_node(s)) return;
  if (node) {
    flags_[s] |= kNode;
    ++num_nodes_;
  } else {
    flags_[s] = static_cast<uint8_t>(flags_[s] & ~kNode);
    --num_nodes_;
    ListRelease(s);
  }
  ListStructure(s);
}

void SceneGraph::ApplyPending() {
  walk_steps_ = 0;
  // Incremental edges cost O(depth) each; a bulk load (or an adversarial batch of reparents
  // deep in a long chain) switches to one O(slots) recomputation of every loop, so an update
  // never costs more than O(slots + pending) walk steps.
  const uint64_t budget = 2 * static_cast<uint64_t>(entity_.size()) + 65536;
  const bool bulk = pending_.size() > min_bulk_changes_ && pending_.size() * 8 > num_nodes_;
  // Index loops: edges may create slots (new parents) but never append to pending_.
  std::size_t i = 0;
  if (!bulk) {
    for (; i < pending_.size() && walk_steps_ <= budget; ++i) {
      const uint32_t x = pending_[i];
      flags_[x] = static_cast<uint8_t>(flags_[x] & ~kPending);
      ApplyEdge(x);
    }
  }
  if (i < pending_.size()) {
    for (; i < pending_.size(); ++i) {
      const uint32_t x = pending_[i];
      flags_[x] = static_cast<uint8_t>(flags_[x] & ~kPending);
      Repoint(x);
    }
    RecomputeLoops();
  }
  pending_.clear();
}

void SceneGraph::RecomputeLoops() {
  // Functional graph cycle search: follow applied edges from every unvisited node, marking
  // the current path; reaching a node of the current path closes a loop.
  enum : uint8_t { kUnseen = 0, kOnPath = 1, kDone = 2, kOnLoop = 3 };
  std::vector<uint8_t> state(entity_.size(), kUnseen);
  std::vector<uint32_t> path;
  for (uint32_t s = 0; s < entity_.size(); ++s) {
    if (!is_node(s) || state[s] != kUnseen) continue;
    path.clear();
    uint32_t y = s;
    while (y != kNoSlot && state[y] == kUnseen) {
      state[y] = kOnPath;
      path.push_back(y);
      y = applied_[y];
      ++walk_steps_;
    }
    if (y != kNoSlot && state[y] == kOnPath) {
      uint32_t z = y;
      do {
        state[z] = kOnLoop;
        z = applied_[z];
        ++walk_steps_;
      } while (z != y);
    }
    for (uint32_t p : path) {
      if (state[p] == kOnPath) state[p] = kDone;
    }
  }
  for (uint32_t s = 0; s < entity_.size(); ++s) {
    const bool parked = state[s] == kOnLoop;
    const uint32_t eff = parked ? kNoSlot : applied_[s];
    if (parked != is_parked(s)) {
      flags_[s] = static_cast<uint8_t>(parked ? flags_[s] | kParked : flags_[s] & ~kParked);
      ListStructure(s);
    }
    if (eff != effective_[s]) SetEffective(s, eff);
  }
}

uint32_t SceneGraph::Repoint(uint32_t x) {
  const bool has_t = has_transform(x);
  uint32_t target = kNoSlot;
  if (has_t && transform_[x].parent != protocol::kRootEntity) {
    target = FindOrCreate(transform_[x].parent);
  }
  const uint32_t old = applied_[x];
  if (has_t) {
    flags_[x] |= kAppliedTransform;
  } else {
    flags_[x] = static_cast<uint8_t>(flags_[x] & ~kAppliedTransform);
  }
  if (old != target) {
    applied_[x] = target;
    if (old != kNoSlot) {
      --children_[old];
      UpdateNodeStatus(old);
    }
    if (target != kNoSlot) {
      ++children_[target];
      UpdateNodeStatus(target);
    }
  }
  UpdateNodeStatus(x);
  return target;
}

void SceneGraph::ApplyEdge(uint32_t x) {
  // 1. Breaking x's out-edge breaks the loop x was on: every member returns to its declared
  //    parent (x's own effective parent is decided in step 3).
  if (is_parked(x)) {
    uint32_t y = x;
    do {
      flags_[y] = static_cast<uint8_t>(flags_[y] & ~kParked);
      SetEffective(y, applied_[y]);
      y = applied_[y];
      ++walk_steps_;
    } while (y != x);
  }

  // 2. Re-point the edge and update node status (placeholders appear and disappear here).
  const uint32_t target = Repoint(x);

  // 3. Effective parent of x: the new edge closes a loop iff x is an effective ancestor of
  //    the new parent (effective parents equal declared ones up to x: nothing on the way is
  //    parked, or the walk would have stopped at root).
  if (target == kNoSlot) {
    SetEffective(x, kNoSlot);
    return;
  }
  uint32_t y = target;
  while (y != kNoSlot && y != x) {
    y = effective_[y];
    ++walk_steps_;
  }
  if (y != x) {
    SetEffective(x, target);
    return;
  }
  y = x;
  do {
    flags_[y] |= kParked;
    SetEffective(y, kNoSlot);
    y = applied_[y];
    ++walk_steps_;
  } while (y != x);
}

}  // namespace scenecrdt::runtime
