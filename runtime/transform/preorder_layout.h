// SPDX-License-Identifier: Apache-2.0
// Owns PreorderLayout: where every node of the effective forest lives in the flat
// per-position arrays (local TRS, parent position, depth, subtree size, world matrix) and its
// upkeep when the forest changes: moves of subtrees through the piece sequence, new and removed
// nodes, compaction (the sequence copied out in order) and rebuild (iterative DFS over the
// graph) (docs/PROPAGATION.md, "Layout"). It computes nothing: world matrices move with their
// entities and are written by the compute (range_compute.h).
#pragma once

#include <cstdint>
#include <glm/mat4x4.hpp>
#include <span>
#include <vector>

#include "scenecrdt/runtime/internal/aligned_allocator.h"
#include "scenecrdt/runtime/propagation_policy.h"
#include "scenecrdt/runtime/scene_graph.h"
#include "scenecrdt/runtime/transform/affine.h"
#include "scenecrdt/runtime/transform/dirty_set.h"
#include "scenecrdt/runtime/transform/piece_sequence.h"

namespace scenecrdt::runtime::internal {

inline constexpr uint32_t kNoPos = 0xFFFFFFFFu;

// World matrices, one 64-byte cache line each.
using WorldArray = AlignedVector<glm::mat4>;

// The per-position arrays. Position 0 is the root (identity, never a node); dead positions
// (removed nodes, until the next compaction or rebuild) have size 0 and slot kNoSlot.
struct PositionArrays {
  WorldArray world;                    // world matrix, column-major
  AlignedVector<LocalTrs> local;       // replicated local TRS (identity for placeholders)
  AlignedVector<uint32_t> parent;      // parent position (0: root)
  AlignedVector<uint32_t> depth;       // root 0, top level 1 (see PreorderLayout::depth_stale)
  AlignedVector<uint32_t> size;        // subtree size (entities, itself included)
  AlignedVector<uint32_t> slot;        // scene-graph slot
  AlignedVector<uint32_t> record_ref;  // 0: plain entity; else 1 + its ComponentRecord id

  // Every array gets n entries (contents unspecified beyond the old size) and position 0 the
  // root's values.
  void Resize(std::size_t n);
  void Swap(PositionArrays& other);
};

class PreorderLayout {
 public:
  PreorderLayout();

  void SetPolicy(const LayoutPolicy& policy) { policy_ = policy; }

  // ---- Between updates ----
  // Writes the local TRS of a laid-out slot through (no-op for other slots).
  void SetLocal(uint32_t slot, const LocalTrs& local);
  // Attaches ComponentRecord `record_id` (kNoSlot: none) to a laid-out slot.
  void SetRecord(uint32_t slot, uint32_t record_id);

  // ---- Update ----
  // Brings the layout in line with the graph for every slot in `changes` (node status or
  // effective parent changed), patching it or rebuilding it when cheaper, then compacts it when
  // fragmented. Marks moved and new slots dirty (everything after a rebuild).
  void ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                      std::span<const uint32_t> record_of_slot, DirtySet& dirty);
  // After a compute: depths are current again; `piece_changes` pieces were walked.
  void FinishCompute(uint64_t piece_changes);

  // ---- Reads ----
  PositionArrays& arrays() { return arrays_; }
  const PositionArrays& arrays() const { return arrays_; }
  const PieceSequence& sequence() const { return sequence_; }
  uint32_t pos_of_slot(uint32_t slot) const {
    return slot < pos_of_slot_.size() ? pos_of_slot_[slot] : kNoPos;
  }
  std::size_t positions() const { return arrays_.world.size(); }
  std::size_t live() const { return live_; }
  std::size_t dead() const { return dead_; }
  // Whether any laid-out node has a ComponentRecord (otherwise record_ref is all 0).
  bool has_records() const { return num_record_positions_ != 0; }
  // Depths of moved or new positions are stale until computed; updates then do not stream
  // and refresh depth as they compute (every moved position is dirty).
  bool depth_stale() const { return depth_stale_; }
  // Whether the last ApplyStructure moved every index (compaction or rebuild).
  bool all_changed() const { return all_changed_; }
  uint64_t layout_version() const { return layout_version_; }
  bool last_rebuild() const { return last_rebuild_; }
  std::size_t rebuilds() const { return rebuilds_; }
  std::size_t compactions() const { return compactions_; }
  // Checks every layout invariant against the graph: preorder, subtree sizes, pieces, depths.
  bool Check(const SceneGraph& graph) const;

 private:
  void EnsureSlots(std::size_t num_slots);
  uint32_t AllocPosition(uint32_t slot, uint32_t record_id, const LocalTrs& local);
  // Structural operations (return false when the work budget is exhausted).
  bool AddToAncestors(uint32_t pos, int64_t delta);
  bool Detach(uint32_t slot);
  bool Attach(uint32_t slot, uint32_t parent_slot);
  void RemoveLeaf(uint32_t slot);
  int64_t budget_left() const {
    return budget_ - static_cast<int64_t>(sequence_.work() - work_at_start_);
  }
  void Rebuild(const SceneGraph& graph, std::span<const uint32_t> record_of_slot);
  void MaybeCompact(bool full_sweep_due);
  // Copies the sequence out contiguously (one piece, no dead positions); no recomputation.
  void Compact();
  // After a compaction or rebuild: the sequence is positions [1, n + 1), every index moved.
  void Relaid(uint32_t n);

  PositionArrays arrays_;
  PositionArrays spare_;  // the previous arrays, kept for their memory (Compact swaps)
  AlignedVector<uint32_t> pos_of_slot_;
  PieceSequence sequence_;
  std::vector<std::pair<uint32_t, uint32_t>> compact_runs_;  // Compact: pieces in order
  LayoutPolicy policy_;
  std::size_t live_ = 0;
  std::size_t dead_ = 0;
  std::size_t num_record_positions_ = 0;
  bool depth_stale_ = false;
  uint64_t fragment_debt_ = 0;  // piece changes walked by computes since the last compaction
  bool built_ = false;
  bool all_changed_ = false;
  bool last_rebuild_ = false;
  int64_t budget_ = 0;          // work allowed to the current patch before it rebuilds
  uint64_t work_at_start_ = 0;  // sequence_.work() when the current patch started
  uint64_t layout_version_ = 0;
  std::size_t rebuilds_ = 0;
  std::size_t compactions_ = 0;
};

}  // namespace scenecrdt::runtime::internal
