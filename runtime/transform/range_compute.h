// SPDX-License-Identifier: Apache-2.0
// Owns RangeCompute: the world matrices of ranges of the preorder sequence, computed by one
// thread (docs/PROPAGATION.md, "Dirty ranges and compute"): runs of positions go through the
// block kernels (LocalToParent of 64 entities, then the parent products), entities with local
// components patch their cached LocalToParent into the block, and streaming passes read
// parents from an ancestor ring and write around the cache. Also the software prefetching of
// a single-threaded pass. Which ranges to compute, and on how many threads, is decided by the
// caller (propagation.h, parallel_compute.h).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "scenecrdt/runtime/transform/block_kernels.h"
#include "scenecrdt/runtime/transform/component_records.h"
#include "scenecrdt/runtime/transform/local_to_parent_cache.h"
#include "scenecrdt/runtime/transform/preorder_layout.h"

namespace scenecrdt::runtime::internal {

// Up to this many dirty roots or ranges, all their first lines are prefetched in stages before
// computing (a few lines each, far below the L2 capacity), and up to kStagedEntities of each
// range.
inline constexpr std::size_t kStagedRoots = 512;
inline constexpr uint32_t kStagedEntities = 32;

// A subtree (or the whole sequence): `count` entities in sequence order from position `pos`.
struct Range {
  uint32_t pos;
  uint32_t count;
};

// Computed positions as [begin, end) intervals.
using Intervals = std::vector<std::pair<uint32_t, uint32_t>>;

// The streaming ancestor ring of one thread: world matrices tagged with their depth.
struct AncestorRing {
  WorldArray entries;
  std::vector<uint32_t> tags;
  // `size` entries (a power of two); tags are reset when the size changes.
  void Prepare(uint32_t size);
};

// One thread's state in a compute pass.
struct ComputePass {
  LocalBlock block;  // LocalToParent of the current block of entities
  // A small subtree computed in the cache before it is streamed out (RangeCompute::RunSmall):
  // entry 0 is the root's parent, entry 1 + e entity e; small_parent[1 + e] is the entry of
  // e's parent.
  alignas(64) glm::mat4 small_world[kBlock + 1];
  uint32_t small_parent[kBlock + 1];
  glm::mat4* ring = nullptr;  // streaming ancestor ring entries, or nullptr (cached mode)
  uint32_t* ring_tag = nullptr;
  Intervals* out = nullptr;    // receives the computed intervals
  uint64_t piece_changes = 0;  // walks from one piece to the next (fragmentation cost)

  // A pass that streams through `ring` (nullptr: cached mode) and reports into `intervals`.
  ComputePass(AncestorRing* ring_storage, Intervals* intervals);
};

class RangeCompute {
 public:
  // Reads the layout's arrays (and writes world matrices, and depths while they are stale)
  // until destroyed; the layout must not change meanwhile. Thread-safe across passes that
  // compute disjoint positions.
  RangeCompute(PreorderLayout& layout, const LocalToParentCaches& caches, const ComputeInputs& in,
               const BlockKernels& kernels, uint32_t ring_size);

  // Computes `ranges` in order on this thread, prefetching ahead.
  void RunAll(ComputePass& pass, std::span<const Range> ranges) const;
  // Computes `count` entities from `pos` in sequence order, skipping the `skip` positions
  // (computed already, in sequence order) that it meets; returns how many of them it met.
  std::size_t RunRange(ComputePass& pass, uint32_t pos, uint32_t count,
                       std::span<const uint32_t> skip) const;
  // Streaming, few entities: computes range `r` whole into the pass's small_world (parents
  // inside the subtree are read there, the root's parent from the world array) and streams it
  // out, reading neither depths nor the ancestor ring. Returns false, computing nothing, when
  // `r` does not qualify: more than kBlock entities, more than one piece, local components, or
  // a parent outside the subtree (a broken layout: then the general path computes it).
  bool RunSmall(ComputePass& pass, const Range& r) const;
  // Computes position `pos` alone (cached mode) and reports it into `out`.
  void RunOne(uint32_t pos, Intervals& out) const;
  // Streaming: seeds the ring with the parent of range root `pos` / with the ancestors of `pos`.
  void SeedRangeRoot(ComputePass& pass, uint32_t pos) const;
  void SeedAncestors(ComputePass& pass, uint32_t pos) const;

  const PieceSequence& sequence() const { return sequence_; }
  uint32_t parent(uint32_t pos) const { return parent_[pos]; }

 private:
  enum class Patch : uint8_t {
    kDone,        // LocalToParent is in the block (or the plain TRS is right)
    kKeep,        // frozen Static: the world matrix stays
    kWriteWorld,  // LocalToWorld override
  };
  // Prepares entity `pos` (block entry e, record id) for the block kernels.
  Patch PatchLocalToParent(ComputePass& pass, uint32_t pos, uint32_t e, uint32_t id) const;
  void RunInterval(ComputePass& pass, uint32_t begin, uint32_t end) const;
  void ComposeRun(ComputePass& pass, uint32_t first, uint32_t e0, uint32_t e1) const;
  // Streaming: puts the already computed world matrix of `pos` on the ancestor ring.
  void PushRing(ComputePass& pass, uint32_t pos) const;
  // Prefetches the parent matrix of range r (parent), or the lines of its first max_entities
  // entities.
  void PrefetchRange(const Range& r, bool parent, bool stream, uint32_t max_entities = 8) const;
  // Whether RunSmall can take a range of `count` entities (the piece test aside).
  bool SmallCandidate(uint32_t count) const { return count <= kBlock && !has_records_; }

  const PieceSequence& sequence_;
  glm::mat4* world_;
  const LocalTrs* local_;
  const uint32_t* parent_;
  uint32_t* depth_;
  const uint32_t* record_ref_;
  std::size_t positions_;
  bool depth_stale_;
  bool has_records_;
  const LocalToParentCaches& caches_;
  const ComputeInputs& in_;
  const BlockKernels& kernels_;
  uint32_t ring_mask_;
};

}  // namespace scenecrdt::runtime::internal
