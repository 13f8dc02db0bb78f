// SPDX-License-Identifier: Apache-2.0
// Owns the piece-list preorder layout, its incremental maintenance and the propagation
// kernels (see propagation.h and docs/PROPAGATION.md for why it is shaped this way).
#include "runtime/propagation.h"

#include <algorithm>
#include <utility>

#include "protocol/check.h"
#include "runtime/internal/worker.h"

namespace scenecrdt::runtime {
namespace {

constexpr internal::LocalTrs kIdentityTrs{
    {0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}};

}  // namespace

struct Propagation::Job {
  Propagation* self;
  const ComputeInputs* in;
  uint32_t first_pos;
  uint32_t first_count;
  std::size_t next_range;
};

Propagation::Propagation() {
  world_.push_back(glm::mat4(1.0f));
  local_.push_back(kIdentityTrs);
  parent_pos_.push_back(0);
  slot_of_pos_.push_back(kNoSlot);
  aux_.push_back(0);
  piece_of_pos_.push_back(0);
  pieces_.push_back(Piece{});
}

Propagation::~Propagation() = default;
Propagation::Propagation(Propagation&&) noexcept = default;
Propagation& Propagation::operator=(Propagation&&) noexcept = default;

void Propagation::EnsureSlot(uint32_t slot) {
  if (slot < pos_of_slot_.size()) return;
  const std::size_t n = std::max<std::size_t>(slot + 1, pos_of_slot_.size() * 3 / 2);
  pos_of_slot_.resize(n, kNoPos);
  subtree_size_.resize(n, 0);
  dirty_.resize(n, 0);
}

void Propagation::SetLocal(uint32_t slot, const internal::LocalTrs& local) {
  EnsureSlot(slot);
  const uint32_t pos = pos_of_slot_[slot];
  if (pos != kNoPos) local_[pos] = local;
  MarkDirty(slot);
}

void Propagation::SetExt(uint32_t slot, uint32_t ext_id) {
  EnsureSlot(slot);
  const uint32_t pos = pos_of_slot_[slot];
  if (pos != kNoPos) {
    const uint32_t aux = ext_id == kNoSlot ? 0 : ext_id + 1;
    if (aux_[pos] == 0 && aux != 0) ++num_ext_positions_;
    if (aux_[pos] != 0 && aux == 0) --num_ext_positions_;
    aux_[pos] = aux;
  }
  MarkDirty(slot);
}

void Propagation::MarkDirty(uint32_t slot) {
  EnsureSlot(slot);
  if (dirty_[slot] != 0) return;
  dirty_[slot] = 1;
  dirty_list_.push_back(slot);
}

void Propagation::SetPolicy(const LayoutPolicy& policy) { policy_ = policy; }

PropagationStats Propagation::stats() const {
  PropagationStats s = stats_;
  s.positions = world_.size();
  s.live = live_;
  s.dead = dead_;
  s.pieces = num_pieces_;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Pieces

uint32_t Propagation::NewPiece(uint32_t begin, uint32_t end) {
  uint32_t id;
  if (!free_pieces_.empty()) {
    id = free_pieces_.back();
    free_pieces_.pop_back();
  } else {
    id = static_cast<uint32_t>(pieces_.size());
    pieces_.push_back(Piece{});
  }
  pieces_[id] = Piece{begin, end, 0, 0};
  Relabel(begin, end, id);
  ++num_pieces_;
  ranks_stale_ = true;
  return id;
}

void Propagation::FreePiece(uint32_t p) {
  free_pieces_.push_back(p);
  --num_pieces_;
}

void Propagation::Relabel(uint32_t begin, uint32_t end, uint32_t piece) {
  std::fill(piece_of_pos_.begin() + begin, piece_of_pos_.begin() + end, piece);
  budget_ -= static_cast<int64_t>((end - begin) / 16);
}

void Propagation::Unlink(uint32_t first, uint32_t last) {
  const uint32_t prev = pieces_[first].prev;
  const uint32_t next = pieces_[last].next;
  pieces_[prev].next = next;
  pieces_[next].prev = prev;
  ranks_stale_ = true;
}

void Propagation::LinkRaw(uint32_t anchor, uint32_t first, uint32_t last) {
  const uint32_t next = pieces_[anchor].next;
  pieces_[anchor].next = first;
  pieces_[first].prev = anchor;
  pieces_[last].next = next;
  pieces_[next].prev = last;
  ranks_stale_ = true;
}

void Propagation::LinkAfter(uint32_t anchor, uint32_t first, uint32_t last) {
  LinkRaw(anchor, first, last);
  TryMerge(last);
  TryMerge(anchor);
}

void Propagation::TryMerge(uint32_t a) {
  if (a == 0) return;
  const uint32_t b = pieces_[a].next;
  if (b == 0 || pieces_[a].end != pieces_[b].begin) return;
  const uint32_t len_a = pieces_[a].end - pieces_[a].begin;
  const uint32_t len_b = pieces_[b].end - pieces_[b].begin;
  if (len_a >= len_b) {
    Relabel(pieces_[b].begin, pieces_[b].end, a);
    pieces_[a].end = pieces_[b].end;
    Unlink(b, b);
    FreePiece(b);
  } else {
    Relabel(pieces_[a].begin, pieces_[a].end, b);
    pieces_[b].begin = pieces_[a].begin;
    Unlink(a, a);
    FreePiece(a);
  }
}

uint32_t Propagation::SplitBefore(uint32_t pos) {
  const uint32_t p = piece_of_pos_[pos];
  const uint32_t begin = pieces_[p].begin;
  const uint32_t end = pieces_[p].end;
  if (begin == pos) return p;
  // Relabel the smaller side: a split costs min(left, right).
  if (pos - begin <= end - pos) {
    const uint32_t n = NewPiece(begin, pos);
    LinkRaw(pieces_[p].prev, n, n);
    pieces_[p].begin = pos;
    return p;
  }
  const uint32_t n = NewPiece(pos, end);
  LinkRaw(p, n, n);
  pieces_[p].end = pos;
  return n;
}

uint32_t Propagation::SplitAfter(uint32_t pos) {
  const uint32_t p = piece_of_pos_[pos];
  if (pieces_[p].end == pos + 1) return p;
  SplitBefore(pos + 1);
  return piece_of_pos_[pos];
}

void Propagation::CutRange(uint32_t pos, uint32_t count, uint32_t& first, uint32_t& last) {
  SplitBefore(pos);
  uint32_t remaining = count;
  uint32_t q = piece_of_pos_[pos];
  for (;;) {
    const uint32_t len = pieces_[q].end - pieces_[q].begin;
    if (remaining <= len) break;
    remaining -= len;
    q = pieces_[q].next;
    --budget_;
  }
  const uint32_t q_begin = pieces_[q].begin;
  if (remaining < pieces_[q].end - q_begin) SplitBefore(q_begin + remaining);
  first = piece_of_pos_[pos];
  last = piece_of_pos_[q_begin];
  Unlink(first, last);
}

// ---------------------------------------------------------------------------------------------
// Structure

uint32_t Propagation::AllocPosition(uint32_t slot, uint32_t ext_id,
                                    const internal::LocalTrs& local) {
  const auto pos = static_cast<uint32_t>(world_.size());
  world_.push_back(glm::mat4(1.0f));
  local_.push_back(local);
  parent_pos_.push_back(0);
  slot_of_pos_.push_back(slot);
  aux_.push_back(ext_id == kNoSlot ? 0 : ext_id + 1);
  piece_of_pos_.push_back(0);
  if (ext_id != kNoSlot) ++num_ext_positions_;
  pos_of_slot_[slot] = pos;
  subtree_size_[slot] = 1;
  ++live_;
  return pos;
}

bool Propagation::AddToAncestors(uint32_t pos, int64_t delta) {
  for (uint32_t a = pos; a != 0; a = parent_pos_[a]) {
    uint32_t& size = subtree_size_[slot_of_pos_[a]];
    size = static_cast<uint32_t>(static_cast<int64_t>(size) + delta);
    if (--budget_ < 0) return false;
  }
  return true;
}

bool Propagation::Detach(uint32_t slot) {
  const uint32_t pos = pos_of_slot_[slot];
  const uint32_t parent = parent_pos_[pos];
  if (parent == 0) return true;
  const uint32_t size = subtree_size_[slot];
  if (!AddToAncestors(parent, -static_cast<int64_t>(size))) return false;
  uint32_t first, last;
  CutRange(pos, size, first, last);
  LinkAfter(pieces_[0].prev, first, last);
  parent_pos_[pos] = 0;
  return budget_ >= 0;
}

bool Propagation::Attach(uint32_t slot, uint32_t parent_slot) {
  const uint32_t pos = pos_of_slot_[slot];
  const uint32_t parent = pos_of_slot_[parent_slot];
  SCENECRDT_DCHECK(parent_pos_[pos] == 0, "attach a detached subtree");
  const uint32_t size = subtree_size_[slot];
  uint32_t first, last;
  CutRange(pos, size, first, last);
  const uint32_t anchor = SplitAfter(parent);
  LinkAfter(anchor, first, last);
  parent_pos_[pos] = parent;
  return AddToAncestors(parent, size) && budget_ >= 0;
}

void Propagation::RemoveLeaf(uint32_t slot) {
  const uint32_t pos = pos_of_slot_[slot];
  SCENECRDT_DCHECK(subtree_size_[slot] == 1 && parent_pos_[pos] == 0, "remove a detached leaf");
  uint32_t first, last;
  CutRange(pos, 1, first, last);
  FreePiece(first);
  if (aux_[pos] != 0) --num_ext_positions_;
  aux_[pos] = 0;
  slot_of_pos_[pos] = kNoSlot;
  pos_of_slot_[slot] = kNoPos;
  subtree_size_[slot] = 0;
  --live_;
  ++dead_;
}

void Propagation::ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                                 std::span<const uint32_t> ext_of_slot) {
  all_changed_ = false;
  stats_.last_rebuild = false;
  if (graph.num_slots() > 0) EnsureSlot(static_cast<uint32_t>(graph.num_slots() - 1));
  if (changes.empty() && built_) return;
  const std::size_t rebuild_at =
      std::max(policy_.min_rebuild_changes, live_ / std::max<uint32_t>(1, policy_.rebuild_divisor));
  if (!built_ || changes.size() > rebuild_at) {
    Rebuild(graph, ext_of_slot);
    return;
  }
  budget_ = static_cast<int64_t>(2 * (live_ + changes.size()) + 65536);
  bool ok = true;
  auto parent_slot_in_layout = [&](uint32_t pos) {
    return parent_pos_[pos] == 0 ? kNoSlot : slot_of_pos_[parent_pos_[pos]];
  };
  // 1. Detach every laid-out slot that leaves the tree or changes parent. After this pass the
  //    layout tree agrees with the graph except for detached roots, so attaching them in any
  //    order cannot create a cycle (the graph's effective forest is acyclic).
  for (uint32_t s : changes) {
    const uint32_t pos = pos_of_slot_[s];
    if (pos == kNoPos) continue;
    if (!graph.is_node(s) || parent_slot_in_layout(pos) != graph.effective_parent(s)) {
      ok = ok && Detach(s);
      MarkDirty(s);
    }
  }
  // 2. Slots that stopped being nodes are leaves now (their children changed parent too).
  for (uint32_t s : changes) {
    if (ok && pos_of_slot_[s] != kNoPos && !graph.is_node(s)) RemoveLeaf(s);
  }
  // 3. New nodes start as top-level singletons at the end of the sequence.
  for (uint32_t s : changes) {
    if (!ok || !graph.is_node(s) || pos_of_slot_[s] != kNoPos) continue;
    const uint32_t pos = AllocPosition(s, ext_of_slot[s], internal::ToLocalTrs(graph.transform(s)));
    const uint32_t piece = NewPiece(pos, pos + 1);
    LinkAfter(pieces_[0].prev, piece, piece);
    MarkDirty(s);
  }
  // 4. Attach.
  for (uint32_t s : changes) {
    if (!ok) break;
    if (!graph.is_node(s)) continue;
    const uint32_t pos = pos_of_slot_[s];
    const uint32_t parent = graph.effective_parent(s);
    if (parent != kNoSlot && parent_pos_[pos] == 0) ok = Attach(s, parent);
  }
  if (!ok) {
    Rebuild(graph, ext_of_slot);
    return;
  }
  const std::size_t max_pieces =
      policy_.min_pieces + live_ / std::max<uint32_t>(1, policy_.min_piece_length);
  if (num_pieces_ > max_pieces || dead_ > policy_.min_pieces + live_ / 2) Compact();
}

void Propagation::Compact() {
  // The sequence is already a valid preorder: copy it out in order (a streaming copy, no
  // search), reusing the previous arrays' memory. World matrices move with their entities,
  // so nothing is recomputed; every index changes (all_changed_, layout_version_).
  const auto n = static_cast<uint32_t>(live_);
  spare_world_.resize(n + 1);
  spare_local_.resize(n + 1);
  spare_parent_.resize(n + 1);
  spare_slot_.resize(n + 1);
  spare_aux_.resize(n + 1);
  spare_world_[0] = glm::mat4(1.0f);
  spare_local_[0] = kIdentityTrs;
  spare_parent_[0] = 0;
  spare_slot_[0] = kNoSlot;
  spare_aux_[0] = 0;
  uint32_t next = 1;
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) {
    for (uint32_t old = pieces_[p].begin; old < pieces_[p].end; ++old, ++next) {
      const uint32_t slot = slot_of_pos_[old];
      spare_world_[next] = world_[old];
      spare_local_[next] = local_[old];
      spare_aux_[next] = aux_[old];
      spare_slot_[next] = slot;
      // The parent precedes its children in the sequence: already moved.
      const uint32_t parent = parent_pos_[old];
      spare_parent_[next] = parent == 0 ? 0 : pos_of_slot_[slot_of_pos_[parent]];
      pos_of_slot_[slot] = next;
    }
  }
  world_.swap(spare_world_);
  local_.swap(spare_local_);
  parent_pos_.swap(spare_parent_);
  slot_of_pos_.swap(spare_slot_);
  aux_.swap(spare_aux_);
  piece_of_pos_.assign(n + 1, 0);
  pieces_.assign(1, Piece{});
  free_pieces_.clear();
  num_pieces_ = 0;
  if (n > 0) {
    const uint32_t p = NewPiece(1, n + 1);
    LinkRaw(0, p, p);
  }
  ranks_stale_ = true;
  dead_ = 0;
  all_changed_ = true;
  ++layout_version_;
  ++stats_.compactions;
}

void Propagation::Rebuild(const SceneGraph& graph, std::span<const uint32_t> ext_of_slot) {
  const auto num_slots = static_cast<uint32_t>(graph.num_slots());
  // Children lists (CSR) of the effective forest, in slot order.
  std::vector<uint32_t> offset(num_slots + 1, 0);
  std::vector<uint32_t> roots;
  for (uint32_t s = 0; s < num_slots; ++s) {
    if (!graph.is_node(s)) continue;
    const uint32_t p = graph.effective_parent(s);
    if (p == kNoSlot) {
      roots.push_back(s);
    } else {
      ++offset[p + 1];
    }
  }
  for (uint32_t s = 0; s < num_slots; ++s) offset[s + 1] += offset[s];
  std::vector<uint32_t> children(offset[num_slots]);
  {
    std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
    for (uint32_t s = 0; s < num_slots; ++s) {
      if (!graph.is_node(s)) continue;
      const uint32_t p = graph.effective_parent(s);
      if (p != kNoSlot) children[fill[p]++] = s;
    }
  }
  // Iterative preorder DFS.
  std::vector<uint32_t> order;
  order.reserve(graph.num_nodes());
  std::vector<uint32_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    order.push_back(s);
    for (uint32_t i = offset[s + 1]; i > offset[s]; --i) stack.push_back(children[i - 1]);
  }
  const auto n = static_cast<uint32_t>(order.size());

  std::vector<glm::mat4, internal::AlignedAllocator<glm::mat4>> world(n + 1);
  std::vector<internal::LocalTrs> local(n + 1);
  std::vector<uint32_t> parent_pos(n + 1, 0);
  std::vector<uint32_t> slot_of_pos(n + 1, kNoSlot);
  std::vector<uint32_t> aux(n + 1, 0);
  world[0] = glm::mat4(1.0f);
  local[0] = kIdentityTrs;
  num_ext_positions_ = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t s = order[i];
    const uint32_t pos = i + 1;
    const uint32_t old = pos_of_slot_[s];
    if (old != kNoPos) {
      local[pos] = local_[old];
      world[pos] = world_[old];
    } else {
      local[pos] = internal::ToLocalTrs(graph.transform(s));
      world[pos] = glm::mat4(1.0f);
    }
    slot_of_pos[pos] = s;
    if (ext_of_slot[s] != kNoSlot) {
      aux[pos] = ext_of_slot[s] + 1;
      ++num_ext_positions_;
    }
  }
  std::fill(pos_of_slot_.begin(), pos_of_slot_.end(), kNoPos);
  std::fill(subtree_size_.begin(), subtree_size_.end(), 0);
  for (uint32_t i = 0; i < n; ++i) {
    pos_of_slot_[order[i]] = i + 1;
    subtree_size_[order[i]] = 1;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t p = graph.effective_parent(order[i]);
    parent_pos[i + 1] = p == kNoSlot ? 0 : pos_of_slot_[p];
  }
  for (uint32_t pos = n; pos >= 1; --pos) {
    if (parent_pos[pos] != 0) {
      subtree_size_[slot_of_pos[parent_pos[pos]]] += subtree_size_[slot_of_pos[pos]];
    }
  }
  world_ = std::move(world);
  local_ = std::move(local);
  parent_pos_ = std::move(parent_pos);
  slot_of_pos_ = std::move(slot_of_pos);
  aux_ = std::move(aux);
  piece_of_pos_.assign(n + 1, 0);
  pieces_.assign(1, Piece{});
  free_pieces_.clear();
  num_pieces_ = 0;
  if (n > 0) {
    const uint32_t p = NewPiece(1, n + 1);
    LinkRaw(0, p, p);
  }
  ranks_stale_ = true;
  live_ = n;
  dead_ = 0;
  built_ = true;
  all_dirty_ = true;
  all_changed_ = true;
  ++layout_version_;
  ++stats_.rebuilds;
  stats_.last_rebuild = true;
}

// ---------------------------------------------------------------------------------------------
// Compute

void Propagation::ComputeRanks() {
  if (!ranks_stale_) return;
  rank_.resize(pieces_.size());
  uint32_t r = 0;
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) rank_[p] = r++;
  ranks_stale_ = false;
}

uint64_t Propagation::SequenceKey(uint32_t pos) const {
  const uint32_t p = piece_of_pos_[pos];
  return (static_cast<uint64_t>(rank_[p]) << 32) | (pos - pieces_[p].begin);
}

uint64_t Propagation::RangeEndKey(uint32_t pos, uint32_t count) const {
  uint32_t p = piece_of_pos_[pos];
  uint32_t at = pos;
  uint32_t remaining = count;
  while (remaining > pieces_[p].end - at) {
    remaining -= pieces_[p].end - at;
    p = pieces_[p].next;
    at = pieces_[p].begin;
  }
  return (static_cast<uint64_t>(rank_[p]) << 32) | (at + remaining - pieces_[p].begin);
}

uint32_t Propagation::EntityAt(uint32_t pos, uint32_t offset) const {
  uint32_t p = piece_of_pos_[pos];
  uint32_t at = pos;
  uint32_t remaining = offset;
  while (remaining >= pieces_[p].end - at) {
    remaining -= pieces_[p].end - at;
    p = pieces_[p].next;
    at = pieces_[p].begin;
  }
  return at + remaining;
}

void Propagation::SlowPath(const ComputeInputs& in, uint32_t pos) {
  ExtRecord& ext = in.ext[aux_[pos] - 1];
  const LocalComponents& c = ext.components;
  const bool is_static = c.Has(LocalComponents::kStatic);
  if (is_static && ext.frozen) return;
  const uint32_t slot = slot_of_pos_[pos];
  if (c.Has(LocalComponents::kLocalToWorld)) {
    world_[pos] = c.local_to_world;  // made affine when set
  } else {
    const uint32_t parent = parent_pos_[pos];
    glm::mat4 parent_scale_inv(1.0f);
    if (c.Has(LocalComponents::kParentScaleInverse) && parent != 0) {
      const uint32_t ps = slot_of_pos_[parent];
      const uint32_t pext = in.ext_of_slot[ps];
      parent_scale_inv = ParentScaleInverseMatrix(
          &in.graph->transform(ps), pext == kNoSlot ? nullptr : &in.ext[pext].components);
    }
    const glm::mat4 local = LocalToParentMatrix(in.graph->transform(slot), &c, parent_scale_inv);
    internal::ComposeAffine(world_[parent], local, world_[pos]);
  }
  if (is_static) {
    ext.frozen = true;
    ext.computed_update = in.update_number;
  }
}

void Propagation::ComputeOne(const ComputeInputs& in, uint32_t pos) {
  if (aux_[pos] != 0) {
    SlowPath(in, pos);
  } else {
    internal::ComposeTrs(world_[parent_pos_[pos]], local_[pos], world_[pos]);
  }
}

void Propagation::RunInterval(const ComputeInputs& in, uint32_t begin, uint32_t end) {
  glm::mat4* world = world_.data();
  const internal::LocalTrs* local = local_.data();
  const uint32_t* parent = parent_pos_.data();
  if (num_ext_positions_ == 0) {
    // Fast path: plain entities only, branch-free.
    for (uint32_t i = begin; i < end; ++i)
      internal::ComposeTrs(world[parent[i]], local[i], world[i]);
    return;
  }
  const uint32_t* aux = aux_.data();
  for (uint32_t i = begin; i < end; ++i) {
    if (aux[i] != 0) [[unlikely]] {
      SlowPath(in, i);
    } else {
      internal::ComposeTrs(world[parent[i]], local[i], world[i]);
    }
  }
}

void Propagation::RunRange(const ComputeInputs& in, uint32_t pos, uint32_t count,
                           std::span<const uint32_t> skip,
                           std::vector<std::pair<uint32_t, uint32_t>>& out) {
  uint32_t p = piece_of_pos_[pos];
  uint32_t a = pos;
  uint32_t remaining = count;
  std::size_t k = 0;
  while (remaining > 0) {
    const uint32_t b = a + std::min(remaining, pieces_[p].end - a);
    remaining -= b - a;
    uint32_t x = a;
    while (k < skip.size() && skip[k] >= a && skip[k] < b) {
      if (skip[k] > x) {
        RunInterval(in, x, skip[k]);
        out.emplace_back(x, skip[k]);
      }
      x = skip[k] + 1;
      ++k;
    }
    if (x < b) {
      RunInterval(in, x, b);
      out.emplace_back(x, b);
    }
    p = pieces_[p].next;
    a = pieces_[p].begin;
  }
}

void Propagation::RunJob(void* arg) {
  Job& job = *static_cast<Job*>(arg);
  Propagation& self = *job.self;
  self.RunRange(*job.in, job.first_pos, job.first_count, {}, self.worker_intervals_);
  for (std::size_t r = job.next_range; r < self.ranges_.size(); ++r) {
    self.RunRange(*job.in, self.ranges_[r].pos, self.ranges_[r].count, {}, self.worker_intervals_);
  }
}

void Propagation::Compute(const ComputeInputs& in, int threads) {
  intervals_.clear();
  ranges_.clear();
  stats_.computed = 0;
  stats_.last_full_sweep = false;
  stats_.last_parallel = false;
  const bool full = all_dirty_ || dirty_list_.size() * 16 >= live_;
  if (live_ > 0 && full) {
    ranges_.push_back(Range{pieces_[pieces_[0].next].begin, static_cast<uint32_t>(live_)});
    stats_.last_full_sweep = true;
  } else if (live_ > 0 && !dirty_list_.empty()) {
    ComputeRanks();
    std::vector<std::pair<uint64_t, uint32_t>> roots;
    roots.reserve(dirty_list_.size());
    for (uint32_t s : dirty_list_) {
      const uint32_t pos = pos_of_slot_[s];
      if (pos != kNoPos) roots.emplace_back(SequenceKey(pos), pos);
    }
    std::sort(roots.begin(), roots.end());
    uint64_t covered_end = 0;
    for (const auto& [key, pos] : roots) {
      if (key < covered_end) continue;
      const uint32_t count = subtree_size_[slot_of_pos_[pos]];
      ranges_.push_back(Range{pos, count});
      covered_end = RangeEndKey(pos, count);
    }
  }
  for (uint32_t s : dirty_list_) dirty_[s] = 0;
  dirty_list_.clear();
  all_dirty_ = false;

  uint64_t total = 0;
  for (const Range& r : ranges_) total += r.count;
  stats_.computed = static_cast<std::size_t>(total);
  if (threads < 2 || total < std::max<uint64_t>(1, policy_.min_parallel_entities)) {
    for (const Range& r : ranges_) RunRange(in, r.pos, r.count, {}, intervals_);
    return;
  }

  // Split at the entity m in the middle of the work. The worker takes the sequence from m on;
  // everything it reads that it does not compute itself is an ancestor of m, computed here
  // first (and skipped by this thread afterwards).
  stats_.last_parallel = true;
  const uint64_t half = total / 2;
  std::size_t ri = 0;
  uint64_t acc = 0;
  while (acc + ranges_[ri].count <= half) acc += ranges_[ri++].count;
  const auto offset = static_cast<uint32_t>(half - acc);
  const Range split = ranges_[ri];
  const uint32_t m = EntityAt(split.pos, offset);
  scratch_.clear();
  const uint32_t stop = parent_pos_[split.pos];
  for (uint32_t a = parent_pos_[m]; a != stop; a = parent_pos_[a]) scratch_.push_back(a);
  std::reverse(scratch_.begin(), scratch_.end());  // top-down = sequence order
  for (uint32_t a : scratch_) {
    ComputeOne(in, a);
    intervals_.emplace_back(a, a + 1);
  }
  if (!worker_) worker_ = std::make_unique<internal::Worker>();
  worker_intervals_.clear();
  Job job{this, &in, m, split.count - offset, ri + 1};
  worker_->Post(&Propagation::RunJob, &job);
  for (std::size_t r = 0; r < ri; ++r)
    RunRange(in, ranges_[r].pos, ranges_[r].count, {}, intervals_);
  if (offset > 0) RunRange(in, split.pos, offset, scratch_, intervals_);
  worker_->Wait();
  intervals_.insert(intervals_.end(), worker_intervals_.begin(), worker_intervals_.end());
}

// ---------------------------------------------------------------------------------------------
// Checks (tests)

bool Propagation::CheckLayout(const SceneGraph& graph) const {
  std::vector<uint32_t> seq_index(world_.size(), kNoPos);
  uint32_t index = 0;
  std::size_t pieces = 0;
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) {
    ++pieces;
    if (pieces_[pieces_[p].next].prev != p) return false;
    if (pieces_[p].begin >= pieces_[p].end) return false;
    for (uint32_t i = pieces_[p].begin; i < pieces_[p].end; ++i) {
      if (piece_of_pos_[i] != p || slot_of_pos_[i] == kNoSlot) return false;
      seq_index[i] = index++;
    }
  }
  if (pieces != num_pieces_ || index != live_ || live_ != graph.num_nodes()) return false;
  std::vector<uint32_t> child_sum(pos_of_slot_.size(), 0);
  std::size_t ext = 0;
  for (uint32_t pos = 1; pos < world_.size(); ++pos) {
    const uint32_t s = slot_of_pos_[pos];
    if (s == kNoSlot) continue;
    if (aux_[pos] != 0) ++ext;
    if (seq_index[pos] == kNoPos || !graph.is_node(s) || pos_of_slot_[s] != pos) return false;
    const uint32_t eff = graph.effective_parent(s);
    const uint32_t parent = parent_pos_[pos];
    if ((eff == kNoSlot) != (parent == 0)) return false;
    if (parent != 0) {
      if (slot_of_pos_[parent] != eff) return false;
      // Preorder and contiguity: parent index < index < parent index + parent size.
      if (seq_index[parent] >= seq_index[pos]) return false;
      if (seq_index[pos] >= seq_index[parent] + subtree_size_[eff]) return false;
      child_sum[eff] += subtree_size_[s];
    }
  }
  for (uint32_t pos = 1; pos < world_.size(); ++pos) {
    const uint32_t s = slot_of_pos_[pos];
    if (s != kNoSlot && subtree_size_[s] != 1 + child_sum[s]) return false;
  }
  return ext == num_ext_positions_;
}

}  // namespace scenecrdt::runtime
