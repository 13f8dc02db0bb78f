// SPDX-License-Identifier: Apache-2.0
// Owns the split of one update's compute across threads (docs/PROPAGATION.md, "Threads"):
// the ranges to compute are cut into parts of about equal entity counts at entity boundaries
// (SplitWork), the ancestors of each part's first entity that lie inside its range are computed
// first by the caller, then the caller computes the first part while persistent helper threads
// compute the others. Every entity is computed exactly once, after its parent, by the same
// function from the same inputs, so the world matrices are bit-identical to one thread's.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "scenecrdt/runtime/transform/range_compute.h"

namespace scenecrdt::runtime::internal {

// One thread's share of an update: the entities from `begin_offset` entities into
// ranges[begin_range] up to (not including) `end_offset` entities into ranges[end_range], in
// sequence order. The last part ends at (number of ranges, 0).
struct WorkPart {
  std::size_t begin_range = 0;
  uint32_t begin_offset = 0;
  std::size_t end_range = 0;
  uint32_t end_offset = 0;
};

// Cuts `ranges` (`total` entities in all, total >= 1) into `parts` consecutive parts; part k
// starts at entity total * k / parts. Parts are empty when total < parts.
std::vector<WorkPart> SplitWork(std::span<const Range> ranges, uint64_t total, std::size_t parts);

// A split point whose first entity has more ancestors inside its range than this (at least
// kMinAncestorBudget, else an eighth of a part) is dropped: computing them first is serial
// work. A 1 000 000-deep chain therefore runs on one thread (docs/PROPAGATION.md, "Threads").
inline constexpr uint64_t kMinAncestorBudget = 64;
uint64_t AncestorBudget(uint64_t total, std::size_t parts);

class ParallelCompute {
 public:
  ParallelCompute();
  ~ParallelCompute();  // joins the helper threads

  // Computes `ranges` (`total` entities) as up to `parts` parts (>= 2; fewer when splits are
  // dropped, see AncestorBudget): the calling thread computes the first with `caller`
  // (streaming when it has a ring), helper threads (started on first use and kept) the others,
  // with rings of `ring_size` entries. Computed intervals go to caller.out. Returns the piece
  // changes walked by all threads.
  uint64_t Run(const RangeCompute& rc, ComputePass& caller, std::span<const Range> ranges,
               uint64_t total, std::size_t parts, uint32_t ring_size);
  // Parts (threads) the last Run used.
  std::size_t last_parts() const { return parts_.size(); }

 private:
  struct Helper;

  std::vector<std::unique_ptr<Helper>> helpers_;
  std::vector<WorkPart> parts_;
  std::vector<std::pair<SequenceKey, uint32_t>> precomputed_;  // ancestors computed first
  std::vector<uint32_t> skip_;                                 // their positions, in sequence order
  std::vector<std::span<const uint32_t>> skips_;  // per part: the slice of skip_ inside it
};

}  // namespace scenecrdt::runtime::internal
