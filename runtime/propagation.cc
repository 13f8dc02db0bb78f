// SPDX-License-Identifier: Apache-2.0
// Owns the piece-list preorder layout, its incremental maintenance and the propagation
// kernels (see propagation.h and docs/PROPAGATION.md for why it is shaped this way).
#include "scenecrdt/runtime/propagation.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "scenecrdt/protocol/check.h"
#include "scenecrdt/runtime/internal/prefetch.h"
#include "scenecrdt/runtime/internal/worker.h"

namespace scenecrdt::runtime {
namespace {

constexpr internal::LocalTrs kIdentityTrs{
    {0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}};

// Few dirty roots: up to this many, all their lines are prefetched in stages before computing
// (a few lines each, far below the L2 capacity), and up to kStagedEntities of each range.
constexpr std::size_t kStagedRoots = 512;
constexpr uint32_t kStagedEntities = 32;

}  // namespace

struct Propagation::Job {
  Propagation* self;
  const ComputeInputs* in;
  uint32_t first_pos;
  uint32_t first_count;
  std::size_t next_range;
  bool stream;
  uint64_t piece_changes;
};

Propagation::Propagation() : kernels_(&internal::GetBlockKernels(internal::KernelIsa::kAuto)) {
  world_.push_back(glm::mat4(1.0f));
  local_.push_back(kIdentityTrs);
  parent_pos_.push_back(0);
  depth_.push_back(0);
  size_.push_back(0);
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

void Propagation::InvalidateExt(uint32_t ext_id) {
  if (ext_id >= ext_cache_.size()) ext_cache_.resize(ext_id + 1);
  if (ext_cache_[ext_id].stale) return;
  ext_cache_[ext_id].stale = true;
  ext_stale_.push_back(ext_id);
}

void Propagation::SetPolicy(const LayoutPolicy& policy) {
  policy_ = policy;
  policy_.stream_stack_depth =
      std::bit_ceil(std::clamp<uint32_t>(policy_.stream_stack_depth, 2, 1u << 20));
  kernels_ = &internal::GetBlockKernels(policy_.kernel_isa);
}

PropagationStats Propagation::stats() const {
  PropagationStats s = stats_;
  s.positions = world_.size();
  s.live = live_;
  s.dead = dead_;
  s.pieces = num_pieces_;
  s.kernel = kernels_->name;
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
  if (label_.size() < pieces_.size()) label_.resize(pieces_.size());
  Relabel(begin, end, id);
  ++num_pieces_;
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
}

void Propagation::LinkRaw(uint32_t anchor, uint32_t first, uint32_t last) {
  const uint32_t next = pieces_[anchor].next;
  pieces_[anchor].next = first;
  pieces_[first].prev = anchor;
  pieces_[last].next = next;
  pieces_[next].prev = last;
  AssignLabels(first, last);
}

void Propagation::AssignLabels(uint32_t first, uint32_t last) {
  // Order maintenance: labels increase along the sequence, so comparing two positions is
  // O(1) however fragmented the layout is. A linked run takes labels spread over the gap
  // between its neighbours' (appends at the end advance by at most 2^32, so the detached
  // subtrees an update parks there do not use the tail up); when the gap is too small, a
  // window around it is relabelled (RelabelWindow).
  const uint32_t left = pieces_[first].prev;
  const uint32_t right = pieces_[last].next;
  uint64_t k = 1;
  for (uint32_t q = first; q != last; q = pieces_[q].next) ++k;
  const uint64_t lo = left == 0 ? 0 : label_[left];
  const uint64_t hi = right == 0 ? ~uint64_t{0} : label_[right];
  uint64_t step = (hi - lo) / (k + 1);
  if (step == 0) {
    RelabelWindow(left, right, k);
    return;
  }
  if (right == 0) step = std::min(step, uint64_t{1} << 32);
  uint64_t label = lo;
  for (uint32_t q = first;; q = pieces_[q].next) {
    label += step;
    label_[q] = label;
    if (q == last) break;
  }
}

void Propagation::RelabelWindow(uint32_t left, uint32_t right, uint64_t k) {
  // Bender et al.'s order-maintenance relabelling: grow an aligned label range of 2^i around
  // the insertion point until it holds at most (4/3)^i pieces, then spread them evenly in it.
  // Amortised O(log pieces) relabels per insertion, also for repeated insertions at one spot
  // (children toggling between two parents).
  const uint64_t center = left == 0 ? 0 : label_[left];
  uint32_t l = left;   // leftmost piece in the window (0: the window starts at the front)
  uint32_t r = right;  // first piece right of the window (0: the end)
  uint64_t count = k + (left != 0 ? 1 : 0);
  double max_items = 1.0;
  for (int i = 1; i <= 64; ++i) {
    max_items *= 4.0 / 3.0;
    const uint64_t mask = i == 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1;
    const uint64_t base = center & ~mask;
    while (l != 0 && pieces_[l].prev != 0 && label_[pieces_[l].prev] >= base) {
      l = pieces_[l].prev;
      ++count;
      --budget_;
    }
    while (r != 0 && label_[r] - base <= mask) {
      r = pieces_[r].next;
      ++count;
      --budget_;
    }
    if (i < 64 && (static_cast<double>(count) > max_items || count >= mask)) continue;
    // Spread the window's pieces over [base + step, base + mask].
    const uint64_t step = mask / (count + 1);
    uint64_t label = base;
    for (uint32_t q = l == 0 ? pieces_[0].next : l; q != r; q = pieces_[q].next) {
      label += step;
      label_[q] = label;
    }
    ++stats_.relabels;
    return;
  }
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
  depth_.push_back(0);
  depth_stale_ = true;
  slot_of_pos_.push_back(slot);
  aux_.push_back(ext_id == kNoSlot ? 0 : ext_id + 1);
  piece_of_pos_.push_back(0);
  if (ext_id != kNoSlot) ++num_ext_positions_;
  size_.push_back(1);
  pos_of_slot_[slot] = pos;
  ++live_;
  return pos;
}

bool Propagation::AddToAncestors(uint32_t pos, int64_t delta) {
  for (uint32_t a = pos; a != 0; a = parent_pos_[a]) {
    uint32_t& size = size_[a];
    size = static_cast<uint32_t>(static_cast<int64_t>(size) + delta);
    if (--budget_ < 0) return false;
  }
  return true;
}

bool Propagation::Detach(uint32_t slot) {
  const uint32_t pos = pos_of_slot_[slot];
  const uint32_t parent = parent_pos_[pos];
  if (parent == 0) return true;
  const uint32_t size = size_[pos];
  if (!AddToAncestors(parent, -static_cast<int64_t>(size))) return false;
  uint32_t first, last;
  CutRange(pos, size, first, last);
  LinkAfter(pieces_[0].prev, first, last);
  parent_pos_[pos] = 0;
  depth_stale_ = true;
  return budget_ >= 0;
}

bool Propagation::Attach(uint32_t slot, uint32_t parent_slot) {
  const uint32_t pos = pos_of_slot_[slot];
  const uint32_t parent = pos_of_slot_[parent_slot];
  SCENECRDT_DCHECK(parent_pos_[pos] == 0, "attach a detached subtree");
  const uint32_t size = size_[pos];
  uint32_t first, last;
  CutRange(pos, size, first, last);
  const uint32_t anchor = SplitAfter(parent);
  LinkAfter(anchor, first, last);
  parent_pos_[pos] = parent;
  depth_stale_ = true;
  return AddToAncestors(parent, size) && budget_ >= 0;
}

void Propagation::RemoveLeaf(uint32_t slot) {
  const uint32_t pos = pos_of_slot_[slot];
  SCENECRDT_DCHECK(size_[pos] == 1 && parent_pos_[pos] == 0, "remove a detached leaf");
  uint32_t first, last;
  CutRange(pos, 1, first, last);
  FreePiece(first);
  if (aux_[pos] != 0) --num_ext_positions_;
  aux_[pos] = 0;
  slot_of_pos_[pos] = kNoSlot;
  pos_of_slot_[slot] = kNoPos;
  size_[pos] = 0;
  --live_;
  ++dead_;
}

void Propagation::ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                                 std::span<const uint32_t> ext_of_slot) {
  all_changed_ = false;
  stats_.last_rebuild = false;
  if (graph.num_slots() > 0) EnsureSlot(static_cast<uint32_t>(graph.num_slots() - 1));
  if (changes.empty() && built_) {
    MaybeCompact();
    return;
  }
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
  MaybeCompact();
}

void Propagation::MaybeCompact() {
  if (num_pieces_ <= 1 && dead_ == 0) return;
  // Hard limits (memory, and the worst case of a sweep).
  const std::size_t max_pieces =
      policy_.min_pieces + live_ / std::max<uint32_t>(1, policy_.min_piece_length);
  if (num_pieces_ > max_pieces || dead_ > policy_.min_pieces + live_ / 2) {
    Compact();
    return;
  }
  // Rent or buy: fragmentation only costs when computes walk across pieces. Compact once the
  // piece changes walked since the last compaction (plus those of a sweep about to run) would
  // have paid for copying the layout out.
  const bool sweep = all_dirty_ || dirty_list_.size() * 16 >= live_;
  const uint64_t debt = fragment_debt_ + (sweep ? num_pieces_ - 1 : 0);
  if (debt > policy_.min_pieces + live_ / std::max<uint32_t>(1, policy_.compact_debt_divisor)) {
    Compact();
  }
}

void Propagation::Compact() {
  // The sequence is already a valid preorder: copy it out in order (a streaming copy, no
  // search), reusing the previous arrays' memory. World matrices move with their entities,
  // so nothing is recomputed; every index changes (all_changed_, layout_version_).
  // A fragmented sequence has many short pieces at random places, so the copy is a gather
  // with a cache miss per piece and array, and slot -> position is a scatter: three passes keep
  // these misses overlapping instead of serial. 1. The runs in sequence order (only the piece
  // list is chased). 2. The per-position data, run by run, with the lines of run r + kAhead
  // prefetched; old parent positions are copied as they are. 3. In new order: parent
  // positions mapped through new_of_old, and pos_of_slot_, their targets prefetched ahead.
  const auto n = static_cast<uint32_t>(live_);
  spare_world_.resize(n + 1);
  spare_local_.resize(n + 1);
  spare_parent_.resize(n + 1);
  spare_depth_.resize(n + 1);
  spare_size_.resize(n + 1);
  spare_slot_.resize(n + 1);
  spare_aux_.resize(n + 1);
  std::vector<uint32_t>& new_of_old = piece_of_pos_;  // rebuilt below
  spare_world_[0] = glm::mat4(1.0f);
  spare_local_[0] = kIdentityTrs;
  spare_parent_[0] = 0;
  spare_depth_[0] = 0;
  spare_size_[0] = 0;
  spare_slot_[0] = kNoSlot;
  spare_aux_[0] = 0;
  new_of_old[0] = 0;
  std::vector<std::pair<uint32_t, uint32_t>>& runs = compact_runs_;
  runs.clear();
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) {
    runs.emplace_back(pieces_[p].begin, pieces_[p].end);
  }
  constexpr std::size_t kAhead = 8;
  auto prefetch_run = [&](uint32_t begin, uint32_t end) {
    const uint32_t stop = std::min(end, begin + 4);
    for (uint32_t i = begin; i < stop; ++i) internal::PrefetchForRead(&world_[i]);
    internal::PrefetchForRead(&local_[begin]);
    internal::PrefetchForRead(&local_[stop - 1]);
    internal::PrefetchForRead(&aux_[begin]);
    internal::PrefetchForRead(&depth_[begin]);
    internal::PrefetchForRead(&size_[begin]);
    internal::PrefetchForRead(&slot_of_pos_[begin]);
    internal::PrefetchForRead(&parent_pos_[begin]);
    internal::PrefetchForWrite(&new_of_old[begin]);
  };
  for (std::size_t r = 0; r < std::min(kAhead, runs.size()); ++r) {
    prefetch_run(runs[r].first, runs[r].second);
  }
  uint32_t next = 1;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (r + kAhead < runs.size()) prefetch_run(runs[r + kAhead].first, runs[r + kAhead].second);
    for (uint32_t old = runs[r].first; old < runs[r].second; ++old, ++next) {
      spare_world_[next] = world_[old];
      spare_local_[next] = local_[old];
      spare_aux_[next] = aux_[old];
      spare_depth_[next] = depth_[old];
      spare_size_[next] = size_[old];
      spare_slot_[next] = slot_of_pos_[old];
      spare_parent_[next] = parent_pos_[old];
      new_of_old[old] = next;
    }
  }
  constexpr uint32_t kScatterAhead = 32;
  for (uint32_t i = 1; i <= n; ++i) {
    if (i + kScatterAhead <= n) {
      internal::PrefetchForRead(&new_of_old[spare_parent_[i + kScatterAhead]]);
      internal::PrefetchForWrite(&pos_of_slot_[spare_slot_[i + kScatterAhead]]);
    }
    spare_parent_[i] = new_of_old[spare_parent_[i]];
    pos_of_slot_[spare_slot_[i]] = i;
  }
  world_.swap(spare_world_);
  local_.swap(spare_local_);
  parent_pos_.swap(spare_parent_);
  depth_.swap(spare_depth_);
  size_.swap(spare_size_);
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
  dead_ = 0;
  fragment_debt_ = 0;
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
  std::vector<uint32_t> depth(n + 1, 0);
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
  for (uint32_t i = 0; i < n; ++i) pos_of_slot_[order[i]] = i + 1;
  std::vector<uint32_t> size(n + 1, 1);
  size[0] = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t p = graph.effective_parent(order[i]);
    parent_pos[i + 1] = p == kNoSlot ? 0 : pos_of_slot_[p];
    depth[i + 1] = depth[parent_pos[i + 1]] + 1;  // the parent precedes in preorder
  }
  for (uint32_t pos = n; pos >= 1; --pos) {
    if (parent_pos[pos] != 0) size[parent_pos[pos]] += size[pos];
  }
  world_ = std::move(world);
  local_ = std::move(local);
  parent_pos_ = std::move(parent_pos);
  depth_ = std::move(depth);
  size_ = std::move(size);
  depth_stale_ = false;
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
  live_ = n;
  dead_ = 0;
  fragment_debt_ = 0;
  built_ = true;
  all_dirty_ = true;
  all_changed_ = true;
  ++layout_version_;
  ++stats_.rebuilds;
  stats_.last_rebuild = true;
}

// ---------------------------------------------------------------------------------------------
// Compute

Propagation::SeqKey Propagation::SequenceKey(uint32_t pos) const {
  const uint32_t p = num_pieces_ == 1 ? pieces_[0].next : piece_of_pos_[pos];
  return SeqKey{label_[p], pos - pieces_[p].begin};
}

Propagation::SeqKey Propagation::RangeEndKey(uint32_t pos, uint32_t count) const {
  uint32_t p = num_pieces_ == 1 ? pieces_[0].next : piece_of_pos_[pos];
  uint32_t at = pos;
  uint32_t remaining = count;
  while (remaining > pieces_[p].end - at) {
    remaining -= pieces_[p].end - at;
    p = pieces_[p].next;
    at = pieces_[p].begin;
  }
  return SeqKey{label_[p], at + remaining - pieces_[p].begin};
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

// ---- Entities with local components: cached LocalToParent ----

namespace {

// An affine 3x4 (rotation-scale columns + translation) with a fixed order of float operations.
struct Affine {
  internal::Rs rs;
  float t[3];
};

Affine FromMat4(const glm::mat4& m) {
  Affine a;
  for (int j = 0; j < 3; ++j)
    for (int r = 0; r < 3; ++r) a.rs.c[j][r] = m[j][r];
  for (int r = 0; r < 3; ++r) a.t[r] = m[3][r];
  return a;
}

Affine Multiply(const Affine& a, const Affine& b) {
  Affine o;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      o.rs.c[j][i] =
          (a.rs.c[0][i] * b.rs.c[j][0] + a.rs.c[1][i] * b.rs.c[j][1]) + a.rs.c[2][i] * b.rs.c[j][2];
    }
  }
  for (int i = 0; i < 3; ++i) {
    o.t[i] = (a.rs.c[0][i] * b.t[0] + a.rs.c[1][i] * b.t[1]) + (a.rs.c[2][i] * b.t[2] + a.t[i]);
  }
  return o;
}

float InverseOrZero(float s) { return s == 0.0f ? 0.0f : 1.0f / s; }

// Components that change LocalToParent (besides the overrides and ParentScaleInverse).
constexpr uint32_t kLocalToParentInputs = LocalComponents::kRotationEulerMask |
                                          LocalComponents::kCompositeRotationInputs |
                                          LocalComponents::kCompositeScaleInputs;

}  // namespace

void Propagation::RefreshExtCaches(const ComputeInputs& in) {
  for (uint32_t id : ext_stale_) {
    if (id < ext_cache_.size() && ext_cache_[id].stale) ComputeExtCache(in, id);
  }
  ext_stale_.clear();
}

void Propagation::ComputeExtCache(const ComputeInputs& in, uint32_t id) {
  ExtCache& c = ext_cache_[id];
  c = ExtCache{};
  c.stale = false;
  if (id >= in.ext.size() || in.ext[id].slot == kNoSlot) return;
  const LocalComponents& comp = in.ext[id].components;
  const protocol::Transform& t = in.graph->transform(in.ext[id].slot);
  c.is_static = comp.Has(LocalComponents::kStatic);
  c.has_scale_inv = HasCompositeScale(&comp);
  if (c.has_scale_inv) {
    const glm::mat4 cs = CompositeScaleMatrix(t, comp);
    const Affine inv = FromMat4(
        glm::determinant(glm::mat3(cs)) == 0.0f ? glm::mat4(1.0f) : MakeAffine(glm::inverse(cs)));
    c.scale_inv_rs = inv.rs;
    std::copy(inv.t, inv.t + 3, c.scale_inv_t);
  }
  Affine m{};
  if (comp.Has(LocalComponents::kLocalToWorld)) {
    c.kind = ExtCache::kWorld;
    m = FromMat4(comp.local_to_world);  // made affine when set
  } else if (comp.Has(LocalComponents::kLocalToParent)) {
    c.kind = ExtCache::kMatrix;
    m = FromMat4(comp.local_to_parent);
  } else if (comp.Has(LocalComponents::kParentScaleInverse)) {
    // The parent's scale is read at compute time; everything after it is cached.
    c.kind = ExtCache::kCompensated;
    m = FromMat4(RotationScaleMatrix(t, comp));
    c.position[0] = t.position.x;
    c.position[1] = t.position.y;
    c.position[2] = t.position.z;
  } else if (comp.Has(kLocalToParentInputs)) {
    c.kind = ExtCache::kMatrix;
    m = FromMat4(LocalToParentMatrix(t, &comp, glm::mat4(1.0f)));
  } else {
    c.kind = ExtCache::kTrs;  // e.g. Static only: the plain TRS path
    return;
  }
  c.rs = m.rs;
  std::copy(m.t, m.t + 3, c.t);
}

Propagation::ExtAction Propagation::PatchExt(Lane& lane, uint32_t pos, uint32_t e, uint32_t id) {
  const ExtCache& c = ext_cache_[id];
  if (c.is_static) {
    ExtRecord& rec = lane.in->ext[id];
    if (rec.frozen) return ExtAction::kKeep;
    rec.frozen = true;
    rec.computed_update = lane.in->update_number;
  }
  switch (c.kind) {
    case ExtCache::kTrs:
      return ExtAction::kPatched;
    case ExtCache::kMatrix:
      lane.block->Set(e, c.rs, c.t);
      return ExtAction::kPatched;
    case ExtCache::kCompensated: {
      // ParentScaleInverse: the parent's CompositeScale inverse, else 1 / its scale (zero
      // stays zero); identity at root.
      Affine psi{};
      for (int k = 0; k < 3; ++k) psi.rs.c[k][k] = 1.0f;
      const uint32_t parent = parent_pos_[pos];
      if (parent != 0) {
        const uint32_t paux = aux_[parent];
        if (paux != 0 && ext_cache_[paux - 1].has_scale_inv) {
          psi.rs = ext_cache_[paux - 1].scale_inv_rs;
          std::copy(ext_cache_[paux - 1].scale_inv_t, ext_cache_[paux - 1].scale_inv_t + 3, psi.t);
        } else {
          for (int k = 0; k < 3; ++k) psi.rs.c[k][k] = InverseOrZero(local_[parent].s[k]);
        }
      }
      Affine l = Multiply(psi, Affine{c.rs, {c.t[0], c.t[1], c.t[2]}});
      for (int k = 0; k < 3; ++k) l.t[k] = c.position[k] + l.t[k];
      lane.block->Set(e, l.rs, l.t);
      return ExtAction::kPatched;
    }
    case ExtCache::kWorld:
    default:
      return ExtAction::kWriteWorld;
  }
}

// ---- Kernels over runs of positions ----

void Propagation::PrefetchRange(const Range& r, bool parent, bool stream,
                                uint32_t max_entities) const {
  if (parent) {
    internal::PrefetchForRead(&world_[parent_pos_[r.pos]]);
    return;
  }
  // The first lines of the range (a subtree starts with its root; what lies past the range's
  // piece is a harmless extra line). Streaming writes need no read-for-ownership.
  const auto end = static_cast<uint32_t>(
      std::min<std::size_t>(world_.size(), r.pos + std::min(r.count, max_entities)));
  internal::PrefetchForRead(&parent_pos_[r.pos]);
  if (stream) {
    for (uint32_t i = r.pos; i < end; i += 16) internal::PrefetchForRead(&depth_[i]);
  }
  if (num_pieces_ > 1) internal::PrefetchForRead(&piece_of_pos_[r.pos]);
  if (num_ext_positions_ != 0) internal::PrefetchForRead(&aux_[r.pos]);
  const char* local_begin = reinterpret_cast<const char*>(&local_[r.pos]);
  const char* local_end = reinterpret_cast<const char*>(local_.data() + end);
  for (const char* p = local_begin; p < local_end; p += 64) internal::PrefetchForRead(p);
  if (!stream) {
    for (uint32_t i = r.pos; i < end; ++i) internal::PrefetchForWrite(&world_[i]);
  }
}

void Propagation::PushStack(Lane& lane, uint32_t pos) {
  const uint32_t d = depth_[pos];
  const uint32_t slot = d & (policy_.stream_stack_depth - 1);
  lane.stack[slot] = world_[pos];
  lane.tag[slot] = d;
}

void Propagation::SeedRangeRoot(Lane& lane, uint32_t pos) {
  const uint32_t d = depth_[pos] - 1;
  const uint32_t slot = d & (policy_.stream_stack_depth - 1);
  lane.stack[slot] = world_[parent_pos_[pos]];
  lane.tag[slot] = d;
}

void Propagation::SeedAncestors(Lane& lane, uint32_t pos) {
  // Deepest first: depths drop by one per step, so the nearest ring-size ancestors take
  // distinct entries; older ones would only overwrite them (their children fall back to the
  // world array).
  uint32_t a = parent_pos_[pos];
  for (uint32_t i = 0; i < policy_.stream_stack_depth; ++i, a = parent_pos_[a]) {
    PushStack(lane, a);
    if (a == 0) break;
  }
}

void Propagation::ComposeRun(Lane& lane, uint32_t first, uint32_t e0, uint32_t e1) {
  if (e0 >= e1) return;
  glm::mat4* world = world_.data();
  if (lane.stack == nullptr) {
    kernels_->compose(*lane.block, e0, e1, first, parent_pos_.data(), world);
    return;
  }
  kernels_->stream(*lane.block, e0, e1, first, parent_pos_.data(), depth_.data(),
                   policy_.stream_stack_depth - 1, lane.stack, lane.tag, world);
}

void Propagation::RunInterval(Lane& lane, uint32_t begin, uint32_t end) {
  for (uint32_t b = begin; b < end; b += internal::kBlock) {
    const uint32_t count = std::min(internal::kBlock, end - b);
    kernels_->local(&local_[b], count, *lane.block);
    if (depth_stale_) {  // cached mode only; parents precede children
      for (uint32_t i = b; i < b + count; ++i) depth_[i] = depth_[parent_pos_[i]] + 1;
    }
    uint32_t e0 = 0;
    if (num_ext_positions_ != 0) {
      const uint32_t* aux = &aux_[b];
      for (uint32_t e = 0; e < count; ++e) {
        if (aux[e] == 0) [[likely]]
          continue;
        const uint32_t id = aux[e] - 1;
        const ExtAction action = PatchExt(lane, b + e, e, id);
        if (action == ExtAction::kPatched) continue;
        ComposeRun(lane, b, e0, e);
        if (action == ExtAction::kWriteWorld) {
          const ExtCache& c = ext_cache_[id];
          glm::mat4& w = world_[b + e];
          for (int j = 0; j < 3; ++j)
            w[j] = glm::vec4(c.rs.c[j][0], c.rs.c[j][1], c.rs.c[j][2], 0.0f);
          w[3] = glm::vec4(c.t[0], c.t[1], c.t[2], 1.0f);
        }
        if (lane.stack != nullptr) PushStack(lane, b + e);
        e0 = e + 1;
      }
    }
    ComposeRun(lane, b, e0, count);
  }
}

void Propagation::RunRange(Lane& lane, uint32_t pos, uint32_t count,
                           std::span<const uint32_t> skip) {
  uint32_t p = num_pieces_ == 1 ? pieces_[0].next : piece_of_pos_[pos];
  uint32_t a = pos;
  uint32_t remaining = count;
  std::size_t k = 0;
  while (remaining > 0) {
    const uint32_t b = a + std::min(remaining, pieces_[p].end - a);
    remaining -= b - a;
    uint32_t x = a;
    while (k < skip.size() && skip[k] >= a && skip[k] < b) {
      if (skip[k] > x) {
        RunInterval(lane, x, skip[k]);
        lane.out->emplace_back(x, skip[k]);
      }
      if (lane.stack != nullptr) PushStack(lane, skip[k]);
      x = skip[k] + 1;
      ++k;
    }
    if (x < b) {
      RunInterval(lane, x, b);
      lane.out->emplace_back(x, b);
    }
    p = pieces_[p].next;
    a = pieces_[p].begin;
    if (remaining > 0) ++lane.piece_changes;
  }
}

void Propagation::RunJob(void* arg) {
  Job& job = *static_cast<Job*>(arg);
  Propagation& self = *job.self;
  internal::LocalBlock block;
  Lane lane{job.in, &block, job.stream ? self.stack_[1].data() : nullptr,
            job.stream ? self.stack_tag_[1].data() : nullptr, &self.worker_intervals_};
  if (job.stream) self.SeedAncestors(lane, job.first_pos);
  self.RunRange(lane, job.first_pos, job.first_count, {});
  for (std::size_t r = job.next_range; r < self.ranges_.size(); ++r) {
    if (job.stream) self.SeedRangeRoot(lane, self.ranges_[r].pos);
    self.RunRange(lane, self.ranges_[r].pos, self.ranges_[r].count, {});
  }
  if (job.stream) internal::StreamFence();
  job.piece_changes = lane.piece_changes;
}

void Propagation::Compute(const ComputeInputs& in, int threads) {
  intervals_.clear();
  ranges_.clear();
  stats_.computed = 0;
  stats_.last_full_sweep = false;
  stats_.last_parallel = false;
  stats_.last_streaming = false;
  RefreshExtCaches(in);
  const bool full = all_dirty_ || dirty_list_.size() * 16 >= live_;
  if (live_ > 0 && full) {
    ranges_.push_back(Range{pieces_[pieces_[0].next].begin, static_cast<uint32_t>(live_)});
    stats_.last_full_sweep = true;
  } else if (live_ > 0 && !dirty_list_.empty()) {
    // Few dirty roots at random places: every step below is a cache miss per root, so the
    // next step's lines are prefetched for all roots first (the misses overlap).
    // With few roots (their lines fit in the cache many times over), the first lines of
    // every root are requested here at once, so that the misses of all roots overlap instead
    // of a short prefetch pipeline stalling on parent_pos_ -> world_ per range below.
    std::vector<std::pair<SeqKey, uint32_t>>& roots = roots_;
    roots.clear();
    const bool staged = dirty_list_.size() <= kStagedRoots;
    for (uint32_t s : dirty_list_) {
      const uint32_t pos = pos_of_slot_[s];
      if (pos == kNoPos) continue;
      internal::PrefetchForRead(&size_[pos]);
      if (staged) {
        internal::PrefetchForRead(&parent_pos_[pos]);
        internal::PrefetchForRead(&depth_[pos]);
        internal::PrefetchForRead(&local_[pos]);
        if (num_ext_positions_ != 0) internal::PrefetchForRead(&aux_[pos]);
      }
      roots.emplace_back(SequenceKey(pos), pos);
    }
    std::sort(roots.begin(), roots.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    SeqKey covered_end{};
    for (const auto& [key, pos] : roots) {
      if (key < covered_end) continue;
      const uint32_t count = size_[pos];
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
  // Streaming needs every depth current; updates that moved positions refresh them instead.
  const uint64_t min_streaming = std::max<uint64_t>(1, policy_.min_streaming_entities);
  const bool stream = !depth_stale_ && (total >= min_streaming || live_ >= min_streaming);
  stats_.last_streaming = stream;
  const bool parallel =
      threads >= 2 && total >= std::max<uint64_t>(1, policy_.min_parallel_entities);
  if (stream) {
    for (int t = 0; t < (parallel ? 2 : 1); ++t) {
      if (stack_[t].size() != policy_.stream_stack_depth) {
        stack_[t].resize(policy_.stream_stack_depth);
        stack_tag_[t].assign(policy_.stream_stack_depth, kNoPos);
      }
    }
  }
  internal::LocalBlock block;
  Lane lane{&in, &block, stream ? stack_[0].data() : nullptr,
            stream ? stack_tag_[0].data() : nullptr, &intervals_};
  if (!parallel) {
    const std::size_t n = ranges_.size();
    // Few ranges: their parent positions were requested with the roots above, so every
    // range's lines (and its parent's matrix) are requested now, all at once.
    const bool staged = n > 1 && n <= kStagedRoots;
    if (staged) {
      for (const Range& r : ranges_) PrefetchRange(r, true, stream);
      for (const Range& r : ranges_) PrefetchRange(r, false, stream, kStagedEntities);
    }
    // Many small ranges: fetch the lines of range r + kAhead (and the parent matrix of range
    // r + kAhead / 2, whose parent position has arrived by then) while range r computes.
    constexpr std::size_t kAhead = 16;
    if (n > 1 && !staged) {
      for (std::size_t r = 0; r < std::min(n, kAhead); ++r) {
        PrefetchRange(ranges_[r], false, stream);
      }
      for (std::size_t r = 0; r < std::min(n, kAhead / 2); ++r) {
        PrefetchRange(ranges_[r], true, stream);
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (n > 1 && !staged) {
        if (r + kAhead < n) PrefetchRange(ranges_[r + kAhead], false, stream);
        if (r + kAhead / 2 < n) PrefetchRange(ranges_[r + kAhead / 2], true, stream);
      }
      if (stream) SeedRangeRoot(lane, ranges_[r].pos);
      RunRange(lane, ranges_[r].pos, ranges_[r].count, {});
    }
    if (stream) internal::StreamFence();
    depth_stale_ = false;
    fragment_debt_ += lane.piece_changes;
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
  Lane single{&in, &block, nullptr, nullptr, &intervals_};
  for (uint32_t a : scratch_) {
    RunInterval(single, a, a + 1);
    intervals_.emplace_back(a, a + 1);
  }
  if (!worker_) worker_ = std::make_unique<internal::Worker>();
  worker_intervals_.clear();
  Job job{this, &in, m, split.count - offset, ri + 1, stream, 0};
  worker_->Post(&Propagation::RunJob, &job);
  for (std::size_t r = 0; r < ri; ++r) {
    if (stream) SeedRangeRoot(lane, ranges_[r].pos);
    RunRange(lane, ranges_[r].pos, ranges_[r].count, {});
  }
  if (offset > 0) {
    if (stream) SeedRangeRoot(lane, split.pos);
    RunRange(lane, split.pos, offset, scratch_);
  }
  if (stream) internal::StreamFence();
  worker_->Wait();
  intervals_.insert(intervals_.end(), worker_intervals_.begin(), worker_intervals_.end());
  depth_stale_ = false;
  fragment_debt_ += lane.piece_changes + job.piece_changes;
}

// ---------------------------------------------------------------------------------------------
// Checks (tests)

bool Propagation::CheckLayout(const SceneGraph& graph) const {
  std::vector<uint32_t> seq_index(world_.size(), kNoPos);
  uint32_t index = 0;
  std::size_t pieces = 0;
  uint64_t label = 0;
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) {
    ++pieces;
    if (pieces_[pieces_[p].next].prev != p) return false;
    if (label_[p] <= label) return false;  // labels increase along the sequence
    label = label_[p];
    if (pieces_[p].begin >= pieces_[p].end) return false;
    for (uint32_t i = pieces_[p].begin; i < pieces_[p].end; ++i) {
      if (piece_of_pos_[i] != p || slot_of_pos_[i] == kNoSlot) return false;
      seq_index[i] = index++;
    }
  }
  if (pieces != num_pieces_ || index != live_ || live_ != graph.num_nodes()) return false;
  std::vector<uint32_t> child_sum(world_.size(), 0);
  std::size_t ext = 0;
  for (uint32_t pos = 1; pos < world_.size(); ++pos) {
    const uint32_t s = slot_of_pos_[pos];
    if (s == kNoSlot) continue;
    if (aux_[pos] != 0) ++ext;
    if (seq_index[pos] == kNoPos || !graph.is_node(s) || pos_of_slot_[s] != pos) return false;
    if (!depth_stale_ && depth_[pos] != depth_[parent_pos_[pos]] + 1) return false;
    const uint32_t eff = graph.effective_parent(s);
    const uint32_t parent = parent_pos_[pos];
    if ((eff == kNoSlot) != (parent == 0)) return false;
    if (parent != 0) {
      if (slot_of_pos_[parent] != eff) return false;
      // Preorder and contiguity: parent index < index < parent index + parent size.
      if (seq_index[parent] >= seq_index[pos]) return false;
      if (seq_index[pos] >= seq_index[parent] + size_[parent]) return false;
      child_sum[parent] += size_[pos];
    }
  }
  for (uint32_t pos = 1; pos < world_.size(); ++pos) {
    if (slot_of_pos_[pos] != kNoSlot && size_[pos] != 1 + child_sum[pos]) return false;
  }
  return ext == num_ext_positions_;
}

}  // namespace scenecrdt::runtime
