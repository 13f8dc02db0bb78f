// SPDX-License-Identifier: Apache-2.0
// Owns Propagation: the world matrices of the effective forest, kept by TransformSystem behind
// a pointer so that none of this reaches a renderer's build (docs/PROPAGATION.md). Between
// updates it records what changed (local TRS written through, dirty slots, stale LocalToParent
// caches); an update then (1) brings the preorder layout in line with the graph
// (preorder_layout.h), (2) picks the ranges to compute: one sweep, or the subtrees of the
// dirty roots sorted in sequence order with nested ones dropped, and (3) computes them
// (range_compute.h) on one thread or split across threads (parallel_compute.h).
// World matrices are column-major glm::mat4 (affine), exposed as they are; position 0 is the
// root: identity, never a node.
#pragma once

#include <cstdint>
#include <glm/mat4x4.hpp>
#include <span>
#include <utility>
#include <vector>

#include "scenecrdt/runtime/propagation_policy.h"
#include "scenecrdt/runtime/scene_graph.h"
#include "scenecrdt/runtime/transform/block_kernels.h"
#include "scenecrdt/runtime/transform/component_records.h"
#include "scenecrdt/runtime/transform/dirty_set.h"
#include "scenecrdt/runtime/transform/local_to_parent_cache.h"
#include "scenecrdt/runtime/transform/parallel_compute.h"
#include "scenecrdt/runtime/transform/preorder_layout.h"
#include "scenecrdt/runtime/transform/range_compute.h"

namespace scenecrdt::runtime::internal {

class Propagation {
 public:
  Propagation();

  // ---- Between updates ----
  // New local TRS of `slot` (written through when the slot is laid out); marks it dirty.
  void SetLocal(uint32_t slot, const LocalTrs& local);
  // Local components attached to or detached from `slot`: its record id, or kNoSlot.
  void SetRecord(uint32_t slot, uint32_t record_id);
  // The inputs of record `record_id` changed (its components or its entity's Transform): its
  // cached LocalToParent is rebuilt at the next Compute.
  void InvalidateRecord(uint32_t record_id) { caches_.Invalidate(record_id); }
  void MarkAllDirty() { dirty_.MarkAll(); }
  void SetPolicy(const LayoutPolicy& policy);

  // ---- Update ----
  // Brings the layout in line with the graph for every slot in `changes` (node status or
  // effective parent changed).
  void ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                      std::span<const uint32_t> record_of_slot);
  // Recomputes every dirty subtree on up to `threads` threads (<= 0: one per hardware thread;
  // at most 64).
  void Compute(const ComputeInputs& in, int threads);

  // ---- Reads (as of the last Compute) ----
  std::span<const glm::mat4> world() const { return layout_.arrays().world; }
  uint32_t pos_of_slot(uint32_t slot) const { return layout_.pos_of_slot(slot); }
  uint32_t slot_of_pos(uint32_t pos) const { return layout_.arrays().slot[pos]; }
  // Positions computed by the last Compute, as [begin, end) intervals of positions, and
  // whether the whole layout changed (compaction or rebuild): then every node counts as
  // changed.
  std::span<const std::pair<uint32_t, uint32_t>> computed_intervals() const { return intervals_; }
  bool all_changed() const { return layout_.all_changed(); }
  // Calls f(pos) for every live position in sequence (preorder) order.
  template <class F>
  void ForEachInSequence(F&& f) const;
  uint64_t layout_version() const { return layout_.layout_version(); }
  PropagationStats stats() const;
  // Checks every layout invariant against the graph (tests).
  bool CheckLayout(const SceneGraph& graph) const { return layout_.Check(graph); }

 private:
  // Few dirty roots: their subtrees as ranges in sequence order, nested ones dropped.
  void PlanDirtyRanges();

  PreorderLayout layout_;
  DirtySet dirty_;
  LocalToParentCaches caches_;
  ParallelCompute parallel_;
  AncestorRing ring_;  // the calling thread's streaming ring
  std::vector<Range> ranges_;
  std::vector<std::pair<SequenceKey, uint32_t>> roots_;  // dirty roots (key, position)
  Intervals intervals_;
  const BlockKernels* kernels_ = nullptr;
  LayoutPolicy policy_;
  PropagationStats stats_;
};

template <class F>
void Propagation::ForEachInSequence(F&& f) const {
  layout_.sequence().ForEachRun([&](uint32_t begin, uint32_t end) {
    for (uint32_t pos = begin; pos < end; ++pos) f(pos);
  });
}

}  // namespace scenecrdt::runtime::internal
