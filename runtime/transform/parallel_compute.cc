// SPDX-License-Identifier: Apache-2.0
// Owns the work split and the helper threads of a parallel compute (see parallel_compute.h).
#include "scenecrdt/runtime/transform/parallel_compute.h"

#include <algorithm>

#include "scenecrdt/runtime/transform/worker.h"

namespace scenecrdt::runtime::internal {
namespace {

// Computes one part: its slice of each range it touches, in order, skipping the positions
// computed before the parts started.
void RunPart(const RangeCompute& rc, ComputePass& pass, std::span<const Range> ranges,
             const WorkPart& part, std::span<const uint32_t> skip) {
  const bool stream = pass.ring != nullptr;
  const std::size_t last = std::min(part.end_range, ranges.size() - 1);
  for (std::size_t r = part.begin_range; r <= last; ++r) {
    const uint32_t from = r == part.begin_range ? part.begin_offset : 0;
    const uint32_t to = r == part.end_range ? part.end_offset : ranges[r].count;
    if (from >= to) continue;
    const uint32_t pos = from == 0 ? ranges[r].pos : rc.sequence().PositionAt(ranges[r].pos, from);
    if (stream) {
      // A part that starts inside a range needs every ancestor of its first entity; one that
      // starts at a range root only the root's parent.
      if (from == 0) {
        rc.SeedRangeRoot(pass, pos);
      } else {
        rc.SeedAncestors(pass, pos);
      }
    }
    skip = skip.subspan(rc.RunRange(pass, pos, to - from, skip));
  }
  if (stream) StreamFence();
}

}  // namespace

uint64_t AncestorBudget(uint64_t total, std::size_t parts) {
  return std::max<uint64_t>(kMinAncestorBudget, total / std::max<std::size_t>(1, parts) / 8);
}

std::vector<WorkPart> SplitWork(std::span<const Range> ranges, uint64_t total, std::size_t parts) {
  std::vector<WorkPart> out(parts);
  std::size_t r = 0;
  uint64_t before = 0;  // entities in ranges[0, r)
  for (std::size_t k = 1; k < parts; ++k) {
    const uint64_t target = total * k / parts;
    while (before + ranges[r].count <= target) before += ranges[r++].count;
    const auto offset = static_cast<uint32_t>(target - before);
    out[k - 1].end_range = out[k].begin_range = r;
    out[k - 1].end_offset = out[k].begin_offset = offset;
  }
  out[parts - 1].end_range = ranges.size();
  out[parts - 1].end_offset = 0;
  return out;
}

// A persistent helper thread and what it keeps between updates.
struct ParallelCompute::Helper {
  AncestorRing ring;
  Intervals intervals;
  // The job of the current update.
  const RangeCompute* rc = nullptr;
  std::span<const Range> ranges;
  WorkPart part;
  std::span<const uint32_t> skip;
  bool stream = false;
  uint64_t piece_changes = 0;
  Worker worker;  // last: its thread stops before the job state goes

  static void Run(void* arg) {
    Helper& h = *static_cast<Helper*>(arg);
    ComputePass pass(h.stream ? &h.ring : nullptr, &h.intervals);
    RunPart(*h.rc, pass, h.ranges, h.part, h.skip);
    h.piece_changes = pass.piece_changes;
  }
};

ParallelCompute::ParallelCompute() = default;
ParallelCompute::~ParallelCompute() = default;

uint64_t ParallelCompute::Run(const RangeCompute& rc, ComputePass& caller,
                              std::span<const Range> ranges, uint64_t total, std::size_t parts,
                              uint32_t ring_size) {
  const bool stream = caller.ring != nullptr;
  const std::vector<WorkPart> split = SplitWork(ranges, total, parts);
  // Everything a part reads that it does not compute itself is a parent outside the dirty
  // ranges (final already) or an ancestor of its first entity inside that entity's range:
  // those are computed here first, in sequence order (parents first), and skipped later.
  // That is serial work, so a split whose first entity has more such ancestors than
  // AncestorBudget (deep in a long chain) is dropped: its part joins the previous one.
  const uint64_t budget = AncestorBudget(total, parts);
  precomputed_.clear();
  parts_.assign(1, split[0]);
  for (std::size_t k = 1; k < split.size(); ++k) {
    const WorkPart& part = split[k];
    bool keep = true;
    if (part.begin_offset != 0) {
      const Range& r = ranges[part.begin_range];
      const uint32_t first = rc.sequence().PositionAt(r.pos, part.begin_offset);
      const uint32_t stop = rc.parent(r.pos);
      const std::size_t before = precomputed_.size();
      uint64_t walked = 0;
      for (uint32_t a = rc.parent(first); a != stop; a = rc.parent(a)) {
        if (++walked > budget) {
          keep = false;
          break;
        }
        precomputed_.emplace_back(rc.sequence().KeyOf(a), a);
      }
      if (!keep) precomputed_.resize(before);
    }
    if (keep) {
      parts_.push_back(part);
    } else {
      parts_.back().end_range = part.end_range;
      parts_.back().end_offset = part.end_offset;
    }
  }
  if (parts_.size() == 1) {  // every split dropped: the one-thread pass, with its prefetching
    rc.RunAll(caller, ranges);
    return caller.piece_changes;
  }
  std::sort(precomputed_.begin(), precomputed_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  precomputed_.erase(std::unique(precomputed_.begin(), precomputed_.end(),
                                 [](const auto& a, const auto& b) { return a.second == b.second; }),
                     precomputed_.end());
  skip_.clear();
  for (const auto& [key, pos] : precomputed_) {
    rc.RunOne(pos, *caller.out);
    skip_.push_back(pos);
  }
  // Part k skips the precomputed positions that lie in it: those before the next part's start.
  std::vector<std::span<const uint32_t>>& skips = skips_;
  skips.assign(parts_.size(), {});
  {
    std::size_t i = 0;
    for (std::size_t k = 0; k < parts_.size(); ++k) {
      std::size_t j = i;
      if (k + 1 < parts_.size()) {
        const WorkPart& next = parts_[k + 1];
        const Range& r = ranges[next.begin_range];
        const SequenceKey end =
            rc.sequence().KeyOf(rc.sequence().PositionAt(r.pos, next.begin_offset));
        while (j < precomputed_.size() && precomputed_[j].first < end) ++j;
      } else {
        j = precomputed_.size();
      }
      skips[k] = std::span<const uint32_t>(skip_).subspan(i, j - i);
      i = j;
    }
  }
  while (helpers_.size() + 1 < parts_.size()) helpers_.push_back(std::make_unique<Helper>());
  for (std::size_t k = 1; k < parts_.size(); ++k) {
    Helper& h = *helpers_[k - 1];
    if (stream) h.ring.Prepare(ring_size);
    h.intervals.clear();
    h.rc = &rc;
    h.ranges = ranges;
    h.part = parts_[k];
    h.skip = skips[k];
    h.stream = stream;
    h.piece_changes = 0;
    h.worker.Post(&Helper::Run, &h);
  }
  RunPart(rc, caller, ranges, parts_[0], skips[0]);
  uint64_t piece_changes = caller.piece_changes;
  for (std::size_t k = 1; k < parts_.size(); ++k) {
    Helper& h = *helpers_[k - 1];
    h.worker.Wait();
    caller.out->insert(caller.out->end(), h.intervals.begin(), h.intervals.end());
    piece_changes += h.piece_changes;
  }
  return piece_changes;
}

}  // namespace scenecrdt::runtime::internal
