// SPDX-License-Identifier: Apache-2.0
// Owns Propagation: the preorder layout of the effective forest and the world matrices
// (docs/PROPAGATION.md).
//
// Layout. Every node has a position in flat per-position arrays (local TRS, parent position,
// world matrix). The preorder sequence is a doubly linked list of "pieces", each a contiguous
// run of positions, so a subtree is a contiguous range of the *sequence* ([x, x + size) walking
// pieces) and, right after a rebuild, of the arrays themselves (one piece). A reparent moves a
// subtree by splitting and relinking pieces: no entity data moves, and the cost is O(depth)
// (subtree sizes of old and new ancestors) plus the pieces the range spans. When pieces get
// small on average, or dead positions pile up, the sequence is compacted (copied out in order
// into one piece); batches that change a large part of the structure rebuild it by iterative
// DFS over the graph.
//
// Compute. World = world[parent position] * LocalToParent, parent before child. Only dirty
// subtrees are recomputed: dirty roots are sorted by sequence order and each is expanded to its
// range; nested roots are skipped. Many dirty roots switch to one full sweep. Runs of positions
// go through the block kernels (internal/block_kernels.h): LocalToParent of 64 entities at a
// time, then the parent products. Large updates stream: parents come from a small ancestor
// ring indexed by depth (tagged, so any depth works) and world matrices are written with
// non-temporal stores. Entities with
// local components keep their LocalToParent cached (recomputed only when their own inputs
// change) and patch it into the block. A second thread (persistent worker, created only when
// asked) splits the work at an entity m: the worker takes the sequence from m on, after m's
// ancestors have been computed by the caller.
//
// World matrices are stored as column-major glm::mat4 (affine) and exposed as they are.
// Position 0 is the root: identity, never a node.
#pragma once

#include <cstdint>
#include <glm/mat4x4.hpp>
#include <memory>
#include <span>
#include <vector>

#include "scenecrdt/runtime/internal/affine.h"
#include "scenecrdt/runtime/internal/aligned_allocator.h"
#include "scenecrdt/runtime/internal/block_kernels.h"
#include "scenecrdt/runtime/pipeline.h"
#include "scenecrdt/runtime/scene_graph.h"

namespace scenecrdt::runtime {

namespace internal {
class Worker;
}

inline constexpr uint32_t kNoPos = 0xFFFFFFFFu;

// Local components of one entity plus the bookkeeping the kernels need (static freeze).
struct ExtRecord {
  LocalComponents components;
  uint32_t slot = kNoSlot;
  bool frozen = false;           // Static and computed since its inputs last changed
  uint64_t computed_update = 0;  // Update number of the last computation (Static only)
};

// Read-only inputs of the slow path (entities with local components).
struct ComputeInputs {
  const SceneGraph* graph = nullptr;
  std::span<ExtRecord> ext;               // indexed by ext id
  std::span<const uint32_t> ext_of_slot;  // kNoSlot when none
  uint64_t update_number = 0;
};

// When the layout is rebuilt from scratch instead of patched (defaults suit 1 M entities).
struct LayoutPolicy {
  // Rebuild when one update changes the structure of more than
  // max(min_rebuild_changes, live / rebuild_divisor) slots.
  std::size_t min_rebuild_changes = 4096;
  uint32_t rebuild_divisor = 8;
  // Compact (copy the sequence out in order) when pieces > min_pieces + live /
  // min_piece_length, or dead positions > min_pieces + live / 2 (hard limits); or when the
  // piece changes that computes walked since the last compaction (plus those of a full sweep
  // about to run) exceed min_pieces + live / compact_debt_divisor: fragmentation costs only
  // when computes cross pieces, so a scene that reparents but rarely sweeps rarely compacts.
  std::size_t min_pieces = 256;
  uint32_t min_piece_length = 4;
  uint32_t compact_debt_divisor = 4;
  // SceneGraph: a batch of more than this many edge changes (and more than nodes / 8)
  // recomputes every loop at once instead of walking per edge.
  std::size_t min_bulk_graph_changes = 1024;
  // With threads = 2, updates computing fewer entities than this stay on one thread.
  uint32_t min_parallel_entities = 16384;
  // Updates of scenes with at least this many nodes, or computing that many, stream
  // (ancestor ring + non-temporal stores): beyond the caches, writing around the cache saves
  // the read-for-ownership of every destination line, for a full sweep as for scattered
  // dirty subtrees. Smaller scenes keep their results in cache.
  uint32_t min_streaming_entities = 1u << 15;
  // Entries of the streaming ancestor ring (rounded up to a power of two, >= 2). A parent whose
  // entry was overwritten by a deeper entity is read from the world array instead.
  uint32_t stream_stack_depth = 1024;
  // Kernel instruction set (kAuto: the best the CPU has). All give bit-identical results.
  internal::KernelIsa kernel_isa = internal::KernelIsa::kAuto;
};

struct PropagationStats {
  std::size_t positions = 0;    // size of the world array (root + live + dead)
  std::size_t live = 0;         // nodes laid out
  std::size_t dead = 0;         // positions no longer used (until the next rebuild)
  std::size_t pieces = 0;       // pieces in the sequence
  std::size_t rebuilds = 0;     // layout rebuilds (DFS over the graph) so far
  std::size_t compactions = 0;  // defragmentations (sequence copied out in order) so far
  std::size_t relabels = 0;     // order-label windows relabelled so far
  std::size_t computed = 0;     // world matrices computed by the last Compute
  bool last_full_sweep = false;
  bool last_rebuild = false;
  bool last_parallel = false;
  bool last_streaming = false;
  const char* kernel = "";  // instruction set of the block kernels in use
};

class Propagation {
 public:
  Propagation();
  ~Propagation();
  Propagation(Propagation&&) noexcept;
  Propagation& operator=(Propagation&&) noexcept;

  // ---- Between updates ----
  // New local TRS of `slot` (written through when the slot has a position) and marks it dirty.
  void SetLocal(uint32_t slot, const internal::LocalTrs& local);
  // Local components attached or detached: `ext_id` or kNoSlot.
  void SetExt(uint32_t slot, uint32_t ext_id);
  // The inputs of ext record `ext_id` changed (its components or its entity's Transform): its
  // cached LocalToParent is rebuilt at the next Compute.
  void InvalidateExt(uint32_t ext_id);
  void MarkDirty(uint32_t slot);
  void MarkAllDirty() { all_dirty_ = true; }
  void SetPolicy(const LayoutPolicy& policy);

  // ---- Update ----
  // Brings the layout in line with the graph for every slot in `changes` (node status or
  // effective parent changed). Rebuilds when cheaper or when the layout is fragmented.
  void ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                      std::span<const uint32_t> ext_of_slot);
  // Recomputes every dirty subtree. threads: 1 or 2.
  void Compute(const ComputeInputs& in, int threads);

  // ---- Reads ----
  std::span<const glm::mat4> world() const { return {world_.data(), world_.size()}; }
  uint32_t pos_of_slot(uint32_t slot) const {
    return slot < pos_of_slot_.size() ? pos_of_slot_[slot] : kNoPos;
  }
  uint32_t slot_of_pos(uint32_t pos) const { return slot_of_pos_[pos]; }
  uint32_t subtree_size(uint32_t slot) const {
    const uint32_t pos = pos_of_slot(slot);
    return pos == kNoPos ? 0 : size_[pos];
  }
  // Positions computed by the last Compute, as [begin, end) intervals of positions, and
  // whether the whole layout changed (rebuild): then every node counts as changed.
  std::span<const std::pair<uint32_t, uint32_t>> computed_intervals() const { return intervals_; }
  bool all_changed() const { return all_changed_; }
  // Calls f(pos) for every live position in sequence (preorder) order.
  template <class F>
  void ForEachInSequence(F&& f) const;
  uint64_t layout_version() const { return layout_version_; }
  PropagationStats stats() const;

  // Checks every layout invariant (tests): preorder, subtree sizes, piece bookkeeping.
  bool CheckLayout(const SceneGraph& graph) const;

 private:
  struct Piece {
    uint32_t begin = 0, end = 0, prev = 0, next = 0;
  };
  // Position in sequence order: the piece's order label, then the offset in the piece.
  struct SeqKey {
    uint64_t label = 0;
    uint32_t offset = 0;
    friend bool operator<(const SeqKey& a, const SeqKey& b) {
      return a.label != b.label ? a.label < b.label : a.offset < b.offset;
    }
  };
  // What the kernels need of an entity with local components, per ext id (hot, 128 bytes;
  // the components themselves stay in ExtRecord).
  struct ExtCache {
    enum Kind : uint8_t {
      kTrs,          // nothing changes LocalToParent (e.g. Static only): the plain kernel
      kMatrix,       // LocalToParent = rs/t, cached
      kCompensated,  // LocalToParent = Translation(position) * ParentScaleInverse * rs/t
      kWorld,        // LocalToWorld override: world = rs/t
    };
    internal::Rs rs{};
    float t[3] = {0.0f, 0.0f, 0.0f};
    float position[3] = {0.0f, 0.0f, 0.0f};
    // Inverse of this entity's CompositeScale, for children with ParentScaleInverse.
    internal::Rs scale_inv_rs{};
    float scale_inv_t[3] = {0.0f, 0.0f, 0.0f};
    Kind kind = kTrs;
    bool is_static = false;
    bool has_scale_inv = false;
    bool stale = false;  // listed in ext_stale_
  };
  // Per-thread state of a compute pass.
  struct Lane {
    const ComputeInputs* in = nullptr;
    internal::LocalBlock* block = nullptr;
    glm::mat4* stack = nullptr;  // streaming ancestor ring, or nullptr (cached mode)
    uint32_t* tag = nullptr;     // depth of each ring entry
    std::vector<std::pair<uint32_t, uint32_t>>* out = nullptr;
    uint64_t piece_changes = 0;  // walks from one piece to the next (fragmentation cost)
  };
  struct Range {
    uint32_t pos;    // first position (a subtree root, or the first position of the sequence)
    uint32_t count;  // entities in sequence order
  };
  struct Job;

  void EnsureSlot(uint32_t slot);
  uint32_t AllocPosition(uint32_t slot, uint32_t ext_id, const internal::LocalTrs& local);
  // Pieces.
  uint32_t NewPiece(uint32_t begin, uint32_t end);
  void FreePiece(uint32_t p);
  void Unlink(uint32_t first, uint32_t last);
  void LinkRaw(uint32_t anchor, uint32_t first, uint32_t last);
  void AssignLabels(uint32_t first, uint32_t last);
  // Relabels a window around the gap between `left` and `right` (0: the ends) that has to
  // take `k` more pieces.
  void RelabelWindow(uint32_t left, uint32_t right, uint64_t k);
  // LinkRaw, then merges with the neighbours when contiguous in memory.
  void LinkAfter(uint32_t anchor, uint32_t first, uint32_t last);
  void Relabel(uint32_t begin, uint32_t end, uint32_t piece);
  // Ensures a piece starts at `pos`; returns that piece.
  uint32_t SplitBefore(uint32_t pos);
  // Ensures a piece ends right after `pos`; returns that piece.
  uint32_t SplitAfter(uint32_t pos);
  void TryMerge(uint32_t a);  // merges a with its successor when contiguous in memory
  // Cuts the sequence range [pos, pos + count) out; returns its first and last pieces.
  void CutRange(uint32_t pos, uint32_t count, uint32_t& first, uint32_t& last);
  // Structural operations (return false when the work budget is exhausted).
  bool AddToAncestors(uint32_t pos, int64_t delta);
  bool Detach(uint32_t slot);
  bool Attach(uint32_t slot, uint32_t parent_slot);
  void RemoveLeaf(uint32_t slot);
  void Rebuild(const SceneGraph& graph, std::span<const uint32_t> ext_of_slot);
  // Copies the sequence out contiguously (one piece, no dead positions); no recomputation.
  void Compact();
  void MaybeCompact();
  // Compute.
  SeqKey SequenceKey(uint32_t pos) const;
  // Walks `count` entities from `pos`; returns the key just past the last one.
  SeqKey RangeEndKey(uint32_t pos, uint32_t count) const;
  // Runs the kernel over `count` entities from `pos` in sequence order, skipping the sorted
  // `skip` positions (already computed); appends computed intervals to lane.out.
  void RunRange(Lane& lane, uint32_t pos, uint32_t count, std::span<const uint32_t> skip);
  void RunInterval(Lane& lane, uint32_t begin, uint32_t end);
  void ComposeRun(Lane& lane, uint32_t first, uint32_t e0, uint32_t e1);
  enum class ExtAction : uint8_t {
    kPatched,     // LocalToParent is in the block (or the plain TRS is right)
    kKeep,        // frozen Static: the world matrix stays
    kWriteWorld,  // LocalToWorld override
  };
  // Prepares entity `pos` (block entry e, ext id) for the block kernels.
  ExtAction PatchExt(Lane& lane, uint32_t pos, uint32_t e, uint32_t id);
  // Streaming: puts the already computed world matrix of `pos` on the ancestor ring.
  void PushStack(Lane& lane, uint32_t pos);
  // Streaming: seeds the ring with the parent of range root `pos` / the ancestors of `pos`.
  void SeedRangeRoot(Lane& lane, uint32_t pos);
  void SeedAncestors(Lane& lane, uint32_t pos);
  // Prefetches the parent matrix of range r (parent), or the lines of its first max_entities
  // entities.
  void PrefetchRange(const Range& r, bool parent, bool stream, uint32_t max_entities = 8) const;
  void RefreshExtCaches(const ComputeInputs& in);
  void ComputeExtCache(const ComputeInputs& in, uint32_t id);
  uint32_t EntityAt(uint32_t pos, uint32_t offset) const;
  static void RunJob(void* job);

  // Per position.
  std::vector<glm::mat4, internal::AlignedAllocator<glm::mat4>> world_;
  std::vector<internal::LocalTrs> local_;
  std::vector<uint32_t> parent_pos_;
  std::vector<uint32_t> depth_;  // root 0, top level 1 (stale entries: see depth_stale_)
  std::vector<uint32_t> size_;   // subtree size (entities, itself included); 0 when dead
  std::vector<uint32_t> slot_of_pos_;
  std::vector<uint32_t> aux_;  // 0: plain; else ext id + 1
  std::vector<uint32_t> piece_of_pos_;
  // Previous per-position arrays, kept for their memory (Compact swaps into them).
  std::vector<glm::mat4, internal::AlignedAllocator<glm::mat4>> spare_world_;
  std::vector<internal::LocalTrs> spare_local_;
  std::vector<uint32_t> spare_parent_;
  std::vector<uint32_t> spare_depth_;
  std::vector<uint32_t> spare_size_;
  std::vector<uint32_t> spare_slot_;
  std::vector<uint32_t> spare_aux_;
  // Per slot.
  std::vector<uint32_t> pos_of_slot_;
  std::vector<uint8_t> dirty_;
  std::vector<uint32_t> dirty_list_;
  // Pieces: pieces_[0] is the sentinel of the circular list.
  std::vector<Piece> pieces_;
  std::vector<uint32_t> free_pieces_;
  std::size_t num_pieces_ = 0;
  std::vector<uint64_t> label_;  // per piece, increasing along the sequence

  std::size_t live_ = 0;
  std::size_t dead_ = 0;
  std::size_t num_ext_positions_ = 0;
  // Depths of moved or new positions are stale until computed; such updates do not stream
  // and refresh depth as they compute (every moved position is dirty).
  bool depth_stale_ = false;
  uint64_t fragment_debt_ = 0;  // piece changes walked by computes since the last compaction
  bool all_dirty_ = false;
  bool all_changed_ = false;
  bool built_ = false;
  int64_t budget_ = 0;
  uint64_t layout_version_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> intervals_;
  std::vector<std::pair<uint32_t, uint32_t>> worker_intervals_;
  std::vector<uint32_t> scratch_;
  std::vector<std::pair<uint32_t, uint32_t>> compact_runs_;  // Compact: pieces in order
  std::vector<Range> ranges_;
  std::vector<std::pair<SeqKey, uint32_t>> roots_;  // dirty roots (sequence key, position)
  std::vector<ExtCache> ext_cache_;                 // by ext id
  std::vector<uint32_t> ext_stale_;
  // Streaming ancestor rings and their depth tags: [0] caller, [1] worker.
  std::vector<glm::mat4, internal::AlignedAllocator<glm::mat4>> stack_[2];
  std::vector<uint32_t> stack_tag_[2];
  const internal::BlockKernels* kernels_ = nullptr;
  std::unique_ptr<internal::Worker> worker_;
  LayoutPolicy policy_;
  PropagationStats stats_;
};

template <class F>
void Propagation::ForEachInSequence(F&& f) const {
  if (pieces_.empty()) return;
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) {
    for (uint32_t i = pieces_[p].begin; i < pieces_[p].end; ++i) f(i);
  }
}

}  // namespace scenecrdt::runtime
