// SPDX-License-Identifier: Apache-2.0
// Owns the order of an update's propagation steps and the choice of what to compute and how:
// full sweep or dirty subtrees, streaming or cached, one thread or several (see propagation.h
// and docs/PROPAGATION.md, "Dirty ranges and compute").
#include "scenecrdt/runtime/transform/propagation.h"

#include <algorithm>
#include <bit>
#include <thread>

#include "scenecrdt/runtime/internal/prefetch.h"

namespace scenecrdt::runtime::internal {
namespace {

// The most threads one update uses (UpdateOptions::threads is clamped to it): bounds the
// helper threads and their streaming rings (stream_stack_depth x 64 B each).
constexpr int kMaxThreads = 64;

// threads <= 0: one per hardware thread (1 when the hardware does not say). Asked once per
// process: glibc reads /sys for it, which would cost a few-dirty update more than its compute.
int ResolveThreads(int threads) {
  static const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = hardware;
  return std::clamp(threads, 1, kMaxThreads);
}

// Parts of an update computing `total` entities on up to `threads` threads: one below
// min_parallel_entities, else at least min_parallel_entities / 2 entities per part.
std::size_t PartsFor(uint64_t total, int threads, uint32_t min_parallel_entities) {
  const uint64_t min_total = std::max<uint64_t>(1, min_parallel_entities);
  if (threads < 2 || total < min_total) return 1;
  const uint64_t by_size = std::max<uint64_t>(2, total * 2 / min_total);
  return static_cast<std::size_t>(std::min<uint64_t>(by_size, static_cast<uint64_t>(threads)));
}

}  // namespace

Propagation::Propagation() : kernels_(&GetBlockKernels(KernelIsa::kAuto)) {}

void Propagation::SetLocal(uint32_t slot, const LocalTrs& local) {
  layout_.SetLocal(slot, local);
  dirty_.Mark(slot);
}

void Propagation::SetRecord(uint32_t slot, uint32_t record_id) {
  layout_.SetRecord(slot, record_id);
  dirty_.Mark(slot);
}

void Propagation::SetPolicy(const LayoutPolicy& policy) {
  policy_ = policy;
  policy_.stream_stack_depth =
      std::bit_ceil(std::clamp<uint32_t>(policy_.stream_stack_depth, 2, 1u << 20));
  kernels_ = &GetBlockKernels(policy_.kernel_isa);
  layout_.SetPolicy(policy_);
}

PropagationStats Propagation::stats() const {
  PropagationStats s = stats_;
  s.positions = layout_.positions();
  s.live = layout_.live();
  s.dead = layout_.dead();
  s.pieces = layout_.sequence().num_pieces();
  s.rebuilds = layout_.rebuilds();
  s.compactions = layout_.compactions();
  s.relabels = layout_.sequence().relabels();
  s.last_rebuild = layout_.last_rebuild();
  s.kernel = kernels_->name;
  return s;
}

void Propagation::ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                                 std::span<const uint32_t> record_of_slot) {
  layout_.ApplyStructure(graph, changes, record_of_slot, dirty_);
}

void Propagation::PlanDirtyRanges() {
  // Few dirty roots at random places: every step below is a cache miss per root, so the
  // next step's lines are prefetched for all roots first (the misses overlap). With few roots
  // (their lines fit in the cache many times over), the first lines of every root are
  // requested here at once, so that the misses of all roots overlap instead of a short
  // prefetch pipeline stalling on parent -> world per range in RangeCompute::RunAll.
  const PositionArrays& a = layout_.arrays();
  const PieceSequence& sequence = layout_.sequence();
  roots_.clear();
  const bool staged = dirty_.slots().size() <= kStagedRoots;
  for (uint32_t s : dirty_.slots()) {
    const uint32_t pos = layout_.pos_of_slot(s);
    if (pos == kNoPos) continue;
    PrefetchForRead(&a.size[pos]);
    if (staged) {
      PrefetchForRead(&a.parent[pos]);
      // Depths are read only by ranges RunSmall does not take (local components, or larger
      // than a block: their lines are requested with the range's).
      if (layout_.has_records()) PrefetchForRead(&a.depth[pos]);
      PrefetchForRead(&a.local[pos]);
      if (layout_.has_records()) PrefetchForRead(&a.record_ref[pos]);
    }
    roots_.emplace_back(sequence.KeyOf(pos), pos);
  }
  std::sort(roots_.begin(), roots_.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  SequenceKey covered_end{};
  for (const auto& [key, pos] : roots_) {
    if (key < covered_end) continue;  // inside the previous root's subtree
    const uint32_t count = a.size[pos];
    ranges_.push_back(Range{pos, count});
    covered_end = sequence.KeyAfter(pos, count);
  }
}

void Propagation::Compute(const ComputeInputs& in, int threads) {
  intervals_.clear();
  ranges_.clear();
  stats_.computed = 0;
  stats_.last_full_sweep = false;
  stats_.last_parallel = false;
  stats_.last_streaming = false;
  stats_.last_parts = 1;
  caches_.Refresh(in);
  const std::size_t live = layout_.live();
  if (live > 0 && dirty_.SweepAll(live)) {
    ranges_.push_back(Range{layout_.sequence().first_position(), static_cast<uint32_t>(live)});
    stats_.last_full_sweep = true;
  } else if (live > 0 && !dirty_.slots().empty()) {
    PlanDirtyRanges();
  }
  dirty_.Clear();

  uint64_t total = 0;
  for (const Range& r : ranges_) total += r.count;
  stats_.computed = static_cast<std::size_t>(total);
  // Streaming needs every depth current; updates that moved positions refresh them instead.
  const uint64_t min_streaming = std::max<uint64_t>(1, policy_.min_streaming_entities);
  const bool stream = !layout_.depth_stale() && (total >= min_streaming || live >= min_streaming);
  stats_.last_streaming = stream;
  const std::size_t parts = PartsFor(total, ResolveThreads(threads), policy_.min_parallel_entities);
  const bool parallel = parts >= 2;
  if (stream) ring_.Prepare(policy_.stream_stack_depth);
  const RangeCompute rc(layout_, caches_, in, *kernels_, policy_.stream_stack_depth);
  ComputePass pass(stream ? &ring_ : nullptr, &intervals_);
  uint64_t piece_changes = 0;
  if (parallel) {
    piece_changes = parallel_.Run(rc, pass, ranges_, total, parts, policy_.stream_stack_depth);
    stats_.last_parts = parallel_.last_parts();
    stats_.last_parallel = stats_.last_parts >= 2;
  } else {
    rc.RunAll(pass, ranges_);
    piece_changes = pass.piece_changes;
  }
  layout_.FinishCompute(piece_changes);
}

}  // namespace scenecrdt::runtime::internal
