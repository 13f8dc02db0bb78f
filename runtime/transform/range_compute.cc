// SPDX-License-Identifier: Apache-2.0
// Owns the compute of world matrices over ranges of the preorder sequence on one thread (see
// range_compute.h and docs/PROPAGATION.md, "Dirty ranges and compute").
#include "scenecrdt/runtime/transform/range_compute.h"

#include <algorithm>

#include "scenecrdt/runtime/internal/prefetch.h"

namespace scenecrdt::runtime::internal {

void AncestorRing::Prepare(uint32_t size) {
  if (entries.size() == size) return;
  entries.resize(size);
  tags.assign(size, kNoPos);
}

ComputePass::ComputePass(AncestorRing* ring_storage, Intervals* intervals)
    : ring(ring_storage != nullptr ? ring_storage->entries.data() : nullptr),
      ring_tag(ring_storage != nullptr ? ring_storage->tags.data() : nullptr),
      out(intervals) {}

RangeCompute::RangeCompute(PreorderLayout& layout, const LocalToParentCaches& caches,
                           const ComputeInputs& in, const BlockKernels& kernels, uint32_t ring_size)
    : sequence_(layout.sequence()),
      world_(layout.arrays().world.data()),
      local_(layout.arrays().local.data()),
      parent_(layout.arrays().parent.data()),
      depth_(layout.arrays().depth.data()),
      record_ref_(layout.arrays().record_ref.data()),
      positions_(layout.positions()),
      depth_stale_(layout.depth_stale()),
      has_records_(layout.has_records()),
      caches_(caches),
      in_(in),
      kernels_(kernels),
      ring_mask_(ring_size - 1) {}

// ---- Entities with local components ----

RangeCompute::Patch RangeCompute::PatchLocalToParent(ComputePass& pass, uint32_t pos, uint32_t e,
                                                     uint32_t id) const {
  const LocalToParentCache& c = caches_[id];
  if (c.is_static) {
    ComponentRecord& rec = in_.records[id];
    if (rec.frozen) return Patch::kKeep;
    rec.frozen = true;
    rec.computed_update = in_.update_number;
  }
  switch (c.kind) {
    case LocalToParentCache::kTrs:
      return Patch::kDone;
    case LocalToParentCache::kMatrix:
      pass.block.Set(e, c.local.rs, c.local.t);
      return Patch::kDone;
    case LocalToParentCache::kCompensated: {
      // Translation * ParentScaleInverse * the cached rest; identity at root.
      Affine psi = kIdentityAffine;
      const uint32_t parent = parent_[pos];
      if (parent != 0) {
        const uint32_t ref = record_ref_[parent];
        psi = ParentScaleInverse(ref != 0 ? &caches_[ref - 1] : nullptr, local_[parent]);
      }
      Affine l = ComposeAffine(psi, c.local);
      for (int k = 0; k < 3; ++k) l.t[k] = c.position[k] + l.t[k];
      pass.block.Set(e, l.rs, l.t);
      return Patch::kDone;
    }
    case LocalToParentCache::kWorld:
    default:
      return Patch::kWriteWorld;
  }
}

// ---- Kernels over runs of positions ----

void RangeCompute::PushRing(ComputePass& pass, uint32_t pos) const {
  const uint32_t d = depth_[pos];
  const uint32_t entry = d & ring_mask_;
  pass.ring[entry] = world_[pos];
  pass.ring_tag[entry] = d;
}

void RangeCompute::SeedRangeRoot(ComputePass& pass, uint32_t pos) const {
  const uint32_t d = depth_[pos] - 1;
  const uint32_t entry = d & ring_mask_;
  pass.ring[entry] = world_[parent_[pos]];
  pass.ring_tag[entry] = d;
}

void RangeCompute::SeedAncestors(ComputePass& pass, uint32_t pos) const {
  // Deepest first: depths drop by one per step, so the nearest ring-size ancestors take
  // distinct entries; older ones would only overwrite them (their children fall back to the
  // world array).
  uint32_t a = parent_[pos];
  for (uint32_t i = 0; i <= ring_mask_; ++i, a = parent_[a]) {
    PushRing(pass, a);
    if (a == 0) break;
  }
}

void RangeCompute::ComposeRun(ComputePass& pass, uint32_t first, uint32_t e0, uint32_t e1) const {
  if (e0 >= e1) return;
  if (pass.ring == nullptr) {
    kernels_.compose(pass.block, e0, e1, first, parent_, world_);
    return;
  }
  kernels_.stream(pass.block, e0, e1, first, parent_, depth_, ring_mask_, pass.ring, pass.ring_tag,
                  world_);
}

void RangeCompute::RunInterval(ComputePass& pass, uint32_t begin, uint32_t end) const {
  for (uint32_t b = begin; b < end; b += kBlock) {
    const uint32_t count = std::min(kBlock, end - b);
    kernels_.local(&local_[b], count, pass.block);
    if (depth_stale_) {  // cached mode only; parents precede children
      for (uint32_t i = b; i < b + count; ++i) depth_[i] = depth_[parent_[i]] + 1;
    }
    uint32_t e0 = 0;
    if (has_records_) {
      const uint32_t* ref = &record_ref_[b];
      for (uint32_t e = 0; e < count; ++e) {
        if (ref[e] == 0) [[likely]]
          continue;
        const uint32_t id = ref[e] - 1;
        const Patch action = PatchLocalToParent(pass, b + e, e, id);
        if (action == Patch::kDone) continue;
        ComposeRun(pass, b, e0, e);
        if (action == Patch::kWriteWorld) world_[b + e] = Mat4FromAffine(caches_[id].local);
        if (pass.ring != nullptr) PushRing(pass, b + e);
        e0 = e + 1;
      }
    }
    ComposeRun(pass, b, e0, count);
  }
}

std::size_t RangeCompute::RunRange(ComputePass& pass, uint32_t pos, uint32_t count,
                                   std::span<const uint32_t> skip) const {
  uint32_t p = sequence_.PieceOf(pos);
  uint32_t a = pos;
  uint32_t remaining = count;
  std::size_t k = 0;
  while (remaining > 0) {
    const uint32_t b = a + std::min(remaining, sequence_.piece(p).end - a);
    remaining -= b - a;
    uint32_t x = a;
    while (k < skip.size() && skip[k] >= a && skip[k] < b) {
      if (skip[k] > x) {
        RunInterval(pass, x, skip[k]);
        pass.out->emplace_back(x, skip[k]);
      }
      if (pass.ring != nullptr) PushRing(pass, skip[k]);
      x = skip[k] + 1;
      ++k;
    }
    if (x < b) {
      RunInterval(pass, x, b);
      pass.out->emplace_back(x, b);
    }
    p = sequence_.piece(p).next;
    a = sequence_.piece(p).begin;
    if (remaining > 0) ++pass.piece_changes;
  }
  return k;
}

bool RangeCompute::RunSmall(ComputePass& pass, const Range& r) const {
  if (!SmallCandidate(r.count) || r.count == 0) return false;
  if (r.count > sequence_.piece(sequence_.PieceOf(r.pos)).end - r.pos) return false;
  // In preorder every entity of a subtree but its root has its parent inside the subtree, at
  // an earlier position: entry parent - pos + 1 of small_world.
  const uint32_t n = r.count;
  pass.small_parent[1] = 0;
  for (uint32_t e = 1; e < n; ++e) {
    const uint32_t p = parent_[r.pos + e];
    if (p < r.pos || p >= r.pos + e) return false;
    pass.small_parent[1 + e] = p - r.pos + 1;
  }
  pass.small_world[0] = world_[parent_[r.pos]];
  kernels_.local(&local_[r.pos], n, pass.block);
  kernels_.compose(pass.block, 0, n, 1, pass.small_parent, pass.small_world);
  StreamCopy(&pass.small_world[1], n, &world_[r.pos]);
  pass.out->emplace_back(r.pos, r.pos + n);
  return true;
}

void RangeCompute::RunOne(uint32_t pos, Intervals& out) const {
  ComputePass single(nullptr, &out);
  RunInterval(single, pos, pos + 1);
  out.emplace_back(pos, pos + 1);
}

// ---- One thread over many ranges ----

void RangeCompute::PrefetchRange(const Range& r, bool parent, bool stream,
                                 uint32_t max_entities) const {
  if (parent) {
    PrefetchForRead(&world_[parent_[r.pos]]);
    return;
  }
  // The first lines of the range (a subtree starts with its root; what lies past the range's
  // piece is a harmless extra line). Streaming writes need no read-for-ownership.
  const auto end = static_cast<uint32_t>(
      std::min<std::size_t>(positions_, r.pos + std::min(r.count, max_entities)));
  PrefetchForRead(&parent_[r.pos]);
  if (stream && !SmallCandidate(r.count)) {  // RunSmall reads no depths
    for (uint32_t i = r.pos; i < end; i += 16) PrefetchForRead(&depth_[i]);
  }
  if (sequence_.num_pieces() > 1) PrefetchForRead(sequence_.piece_entry(r.pos));
  if (has_records_) PrefetchForRead(&record_ref_[r.pos]);
  const char* local_begin = reinterpret_cast<const char*>(&local_[r.pos]);
  const char* local_end = reinterpret_cast<const char*>(local_ + end);
  for (const char* p = local_begin; p < local_end; p += 64) PrefetchForRead(p);
  if (!stream) {
    for (uint32_t i = r.pos; i < end; ++i) PrefetchForWrite(&world_[i]);
  }
}

void RangeCompute::RunAll(ComputePass& pass, std::span<const Range> ranges) const {
  const bool stream = pass.ring != nullptr;
  const std::size_t n = ranges.size();
  // Few ranges: their parent positions were requested with the roots, so every range's lines
  // (and its parent's matrix) are requested now, all at once.
  const bool staged = n > 1 && n <= kStagedRoots;
  if (staged) {
    for (const Range& r : ranges) PrefetchRange(r, true, stream);
    for (const Range& r : ranges) PrefetchRange(r, false, stream, kStagedEntities);
  }
  // Many small ranges: fetch the lines of range r + kAhead (and the parent matrix of range
  // r + kAhead / 2, whose parent position has arrived by then) while range r computes.
  constexpr std::size_t kAhead = 16;
  const bool pipelined = n > 1 && !staged;
  if (pipelined) {
    for (std::size_t r = 0; r < std::min(n, kAhead); ++r) PrefetchRange(ranges[r], false, stream);
    for (std::size_t r = 0; r < std::min(n, kAhead / 2); ++r) {
      PrefetchRange(ranges[r], true, stream);
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (pipelined) {
      if (r + kAhead < n) PrefetchRange(ranges[r + kAhead], false, stream);
      if (r + kAhead / 2 < n) PrefetchRange(ranges[r + kAhead / 2], true, stream);
    }
    if (stream && RunSmall(pass, ranges[r])) continue;
    if (stream) SeedRangeRoot(pass, ranges[r].pos);
    RunRange(pass, ranges[r].pos, ranges[r].count, {});
  }
  if (stream) StreamFence();
}

}  // namespace scenecrdt::runtime::internal
