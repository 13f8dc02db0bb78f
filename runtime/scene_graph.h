// SPDX-License-Identifier: Apache-2.0
// Owns SceneGraph: the effective parent of every entity as a pure function of the current set
// of (entity -> Transform) (docs/PROPAGATION.md "Effective tree", ADR-153):
//   - parent 0 -> root; a parent without a Transform is an identity placeholder node at root;
//   - members of a declared parenting loop (self-parenting included) are parked at root while
//     the loop exists; entities hanging under loop members keep their declared parents;
//   - entity 0 is the root and is never a node (ADR-219).
// Entities are dense slots (EntityId -> slot at the boundary only). Changes are recorded as
// pending and applied in ApplyPending(): each changed edge costs O(depth) (one walk up the
// effective tree to detect a new loop) plus the length of a loop it creates or breaks; bulk
// batches fall back to one O(slots) loop search. No recursion. Single-threaded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/runtime/internal/flat_map.h"

namespace scenecrdt::runtime {

inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

class SceneGraph {
 public:
  // ---- Slots ----
  // The slot of `entity`, or kNoSlot.
  uint32_t Find(protocol::EntityId entity) const;
  // The slot of `entity`, created on first use (entity != 0).
  uint32_t FindOrCreate(protocol::EntityId entity);
  std::size_t num_slots() const { return entity_.size(); }

  // ---- Replicated state (takes effect at ApplyPending) ----
  // Stores `t` for `slot`. Returns true when position, rotation or scale changed bitwise (or
  // the slot had no Transform).
  bool SetTransform(uint32_t slot, const protocol::Transform& t);
  // Removes the Transform of `slot` (it reads as identity). Returns true when it had one.
  bool RemoveTransform(uint32_t slot);

  // Applies every pending change. Every slot whose node status or effective parent was
  // (re)assigned is appended once to structure_changes().
  void ApplyPending();
  std::span<const uint32_t> structure_changes() const { return structure_changes_; }
  // Batches above this many edges (and above nodes / 8) use one O(slots) loop search.
  void set_min_bulk_changes(std::size_t n) { min_bulk_changes_ = n; }
  void ClearStructureChanges();

  // Frees every slot touched since the last call that is no longer used (no Transform, no
  // declared child, no local components, not a node). `in_use(slot)` lets the caller keep a
  // slot alive for its own reasons.
  template <class InUse>
  void ReleaseUnused(InUse&& in_use);

  // ---- Reads (state as of the last ApplyPending) ----
  protocol::EntityId entity(uint32_t slot) const { return entity_[slot]; }
  bool has_transform(uint32_t slot) const { return (flags_[slot] & kHasTransform) != 0; }
  bool is_node(uint32_t slot) const { return (flags_[slot] & kNode) != 0; }
  bool is_parked(uint32_t slot) const { return (flags_[slot] & kParked) != 0; }
  bool is_placeholder(uint32_t slot) const {
    return is_node(slot) && (flags_[slot] & kAppliedTransform) == 0;
  }
  // Effective parent slot (kNoSlot = root).
  uint32_t effective_parent(uint32_t slot) const { return effective_[slot]; }
  // The replicated Transform (identity when the slot has none).
  const protocol::Transform& transform(uint32_t slot) const { return transform_[slot]; }
  // Number of nodes (entities with a Transform + placeholders).
  std::size_t num_nodes() const { return num_nodes_; }
  // Walk steps spent by the last ApplyPending (cost accounting for tests and benchmarks).
  uint64_t last_walk_steps() const { return walk_steps_; }

 private:
  enum Flag : uint8_t {
    kHasTransform = 1,      // replicated state
    kAppliedTransform = 2,  // what the graph reflects
    kNode = 4,
    kParked = 8,
    kPending = 16,
    kStructureListed = 32,
    kReleaseListed = 64,
  };

  void ApplyEdge(uint32_t x);
  // Re-points x's applied edge to its current Transform's parent and updates node status;
  // returns the new parent slot. Loops are not looked at.
  uint32_t Repoint(uint32_t x);
  // Recomputes parked flags and effective parents of every slot from the applied edges.
  void RecomputeLoops();
  void UpdateNodeStatus(uint32_t s);
  void SetEffective(uint32_t s, uint32_t parent);
  void ListStructure(uint32_t s);
  void ListRelease(uint32_t s);
  void MarkPending(uint32_t s);

  internal::FlatMap<uint32_t, uint32_t> slot_of_entity_;
  std::vector<protocol::EntityId> entity_;
  std::vector<protocol::Transform> transform_;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> applied_;    // declared parent slot reflected by the graph
  std::vector<uint32_t> effective_;  // effective parent slot
  std::vector<uint32_t> children_;   // declared children with an applied Transform
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> pending_;
  std::vector<uint32_t> structure_changes_;
  std::vector<uint32_t> release_candidates_;
  std::size_t num_nodes_ = 0;
  std::size_t min_bulk_changes_ = 1024;
  uint64_t walk_steps_ = 0;
};

template <class InUse>
void SceneGraph::ReleaseUnused(InUse&& in_use) {
  for (uint32_t s : release_candidates_) {
    flags_[s] = static_cast<uint8_t>(flags_[s] & ~kReleaseListed);
    if (entity_[s] == protocol::kRootEntity) continue;  // already free
    const bool used = (flags_[s] & (kHasTransform | kAppliedTransform | kNode | kPending)) != 0 ||
                      children_[s] != 0 || in_use(s);
    if (used) continue;
    slot_of_entity_.Erase(entity_[s]);
    entity_[s] = protocol::kRootEntity;  // marks a free slot
    free_slots_.push_back(s);
  }
  release_candidates_.clear();
}

}  // namespace scenecrdt::runtime
